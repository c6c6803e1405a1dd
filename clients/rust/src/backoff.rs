//! Capped exponential backoff with jitter for reconnects.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Reconnect delays: attempt `n` (1-based) waits a random time in `[d/2, d]` where
/// `d = min(max, initial * 2^(n-1))` ("equal jitter"), so many bots restarted together do not
/// reconnect in lock-step, and a flapping server is not hammered.
#[derive(Clone, Debug)]
pub struct Backoff {
    /// Delay scale of the first retry.
    pub initial: Duration,
    /// Cap of the delay.
    pub max: Duration,
}

impl Backoff {
    /// The delay before reconnect attempt `attempt` (1-based).
    pub fn delay(&self, attempt: u32) -> Duration {
        let exp = attempt.saturating_sub(1).min(30);
        let d = self.initial.saturating_mul(1u32 << exp).min(self.max);
        let half = d / 2;
        let jitter_ns = if half.is_zero() { 0 } else { random_u64() % (half.as_nanos() as u64 + 1) };
        half + Duration::from_nanos(jitter_ns)
    }
}

/// A random u64 from the standard library's per-process randomly keyed hasher (no rand crate).
fn random_u64() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_are_jittered_and_capped() {
        let b = Backoff { initial: Duration::from_millis(100), max: Duration::from_secs(2) };
        for _ in 0..50 {
            let d1 = b.delay(1);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100), "{d1:?}");
            let d3 = b.delay(3);
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400), "{d3:?}");
            let d20 = b.delay(20);
            assert!(d20 >= Duration::from_secs(1) && d20 <= Duration::from_secs(2), "{d20:?}");
            assert!(b.delay(u32::MAX) <= Duration::from_secs(2));
        }
        let samples: std::collections::HashSet<_> = (0..20).map(|_| b.delay(5)).collect();
        assert!(samples.len() > 1, "jitter should vary the delay");
    }
}
