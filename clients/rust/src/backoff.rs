//! Capped exponential backoff with jitter for reconnects.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Reconnect delays: attempt `n` (1-based) waits `initial * 2^(n-1)`, times a random factor in
/// `[1 - jitter, 1 + jitter]`, never more than `max`. The defaults (100 ms, 2 s, 20%) give about
/// 100, 200, 400, 800, 1600, 2000, 2000... ms, all below the server's default 5 s reconnect
/// grace, spread so that many bots restarted together do not reconnect in lock-step. The client
/// starts again from attempt 1 as soon as a stream is welcomed.
#[derive(Clone, Debug)]
pub struct Backoff {
    /// Delay of the first retry (before jitter). Default 100 ms.
    pub initial: Duration,
    /// Cap of every delay, jitter included. Default 2 s.
    pub max: Duration,
    /// Relative jitter, 0.0-1.0. Default 0.2 (+-20%).
    pub jitter: f64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { initial: Duration::from_millis(100), max: Duration::from_secs(2), jitter: 0.2 }
    }
}

impl Backoff {
    /// The delay before reconnect attempt `attempt` (1-based).
    pub fn delay(&self, attempt: u32) -> Duration {
        let exp = attempt.saturating_sub(1).min(30);
        let base = self.initial.saturating_mul(1u32 << exp).min(self.max);
        let jitter = self.jitter.clamp(0.0, 1.0);
        let unit = (random_u64() >> 11) as f64 / (1u64 << 53) as f64; // uniform in [0, 1)
        base.mul_f64(1.0 - jitter + 2.0 * jitter * unit).min(self.max)
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

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn doubles_from_100_ms_with_20_percent_jitter_and_caps_at_2_s() {
        let b = Backoff::default();
        for _ in 0..200 {
            for (attempt, base) in [(1, 100), (2, 200), (3, 400), (4, 800), (5, 1600)] {
                let d = b.delay(attempt);
                assert!(d >= ms(base * 8 / 10) && d <= ms(base * 12 / 10), "attempt {attempt}: {d:?}");
            }
            for attempt in [6, 7, 20, u32::MAX] {
                let d = b.delay(attempt);
                assert!(d >= ms(1600) && d <= ms(2000), "attempt {attempt}: {d:?}");
            }
        }
        let samples: std::collections::HashSet<_> = (0..20).map(|_| b.delay(3)).collect();
        assert!(samples.len() > 1, "jitter should vary the delay");
    }
}
