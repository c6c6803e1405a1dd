//! The example heuristic bot.
//!
//! cargo run --release --bin heuristic-bot -- --addr 127.0.0.1:50051 --token T --name rust-heuristic
//!
//! Flags override the environment variables UNO_ARENA_ADDR, UNO_ARENA_TOKEN and
//! UNO_ARENA_BOT_NAME; see `--help`. Besides the SDK's flags it takes two for chaos tests:
//! `--overrun-every N --overrun-ms MS` makes every Nth decision sleep MS milliseconds before it
//! returns (a decide that overruns its deadline); both default to 0 = off.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use uno_arena_bot::heuristic::HeuristicBot;
use uno_arena_bot::{Bot, pb};

/// Wraps a bot so that every `every`th decision first sleeps `sleep`.
struct Overrun<B> {
    inner: B,
    every: u64,
    sleep: Duration,
    count: AtomicU64,
}

impl<B: Bot> Bot for Overrun<B> {
    type State = B::State;

    fn decide(&self, state: &mut B::State, req: &pb::DecisionRequest) -> Option<i32> {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        if self.every > 0 && n.is_multiple_of(self.every) {
            log::info!(
                "match={} seat={}: overrunning on purpose ({} ms)",
                req.match_id,
                req.seat,
                self.sleep.as_millis()
            );
            std::thread::sleep(self.sleep);
        }
        self.inner.decide(state, req)
    }

    fn match_started(&self, state: &mut B::State, msg: &pb::MatchStarted) {
        self.inner.match_started(state, msg)
    }

    fn match_ended(&self, state: &mut B::State, msg: &pb::MatchEnded) {
        self.inner.match_ended(state, msg)
    }
}

/// Takes `--overrun-every N` and `--overrun-ms MS` out of `args`; the rest goes to the SDK.
fn take_overrun(args: Vec<String>) -> Result<(u64, u64, Vec<String>), String> {
    let (mut every, mut ms, mut rest) = (0, 0, Vec::new());
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        if flag != "--overrun-every" && flag != "--overrun-ms" {
            rest.push(arg);
            continue;
        }
        let value = inline.or_else(|| it.next()).ok_or(format!("{flag} needs a value"))?;
        let n: u64 = value.parse().map_err(|_| format!("{flag} needs a whole number >= 0, not {value:?}"))?;
        if flag == "--overrun-every" { every = n } else { ms = n }
    }
    Ok((every, ms, rest))
}

fn main() -> ExitCode {
    let mut argv = std::env::args();
    let program = argv.next().unwrap_or_else(|| "heuristic-bot".into());
    let args: Vec<String> = argv.collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        let usage = uno_arena_bot::cli::usage("heuristic-bot");
        println!(
            "{usage}\n\nChaos testing: --overrun-every N --overrun-ms MS (every Nth decision sleeps MS ms; 0 = off)"
        );
        return ExitCode::SUCCESS;
    }
    let (every, ms, rest) = match take_overrun(args) {
        Ok(v) => v,
        Err(line) => {
            eprintln!("heuristic-bot: {line}");
            return ExitCode::from(2);
        }
    };
    let bot =
        Overrun { inner: HeuristicBot, every, sleep: Duration::from_millis(ms), count: AtomicU64::new(0) };
    uno_arena_bot::cli::main_with_args(&program, rest, "rust-heuristic", bot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn overrun_flags_are_taken_out_and_the_rest_passed_on() {
        let (every, ms, rest) = take_overrun(strings(&[
            "--addr",
            "h:1",
            "--overrun-every",
            "3",
            "--overrun-ms=1500",
            "--token",
            "T",
        ]))
        .unwrap();
        assert_eq!((every, ms), (3, 1500));
        assert_eq!(rest, strings(&["--addr", "h:1", "--token", "T"]));
        assert_eq!(take_overrun(strings(&[])).unwrap(), (0, 0, vec![]));
        assert!(take_overrun(strings(&["--overrun-ms"])).is_err());
        assert!(take_overrun(strings(&["--overrun-every", "x"])).is_err());
    }

    #[test]
    fn every_nth_decision_sleeps() {
        let bot = Overrun {
            inner: HeuristicBot,
            every: 2,
            sleep: Duration::from_millis(150),
            count: AtomicU64::new(0),
        };
        let req = pb::DecisionRequest {
            required: true,
            legal_actions: vec![pb::LegalAction {
                id: 0,
                kind: pb::ActionKind::Draw as i32,
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut state = Default::default();
        let times: Vec<Duration> = (0..4)
            .map(|_| {
                let t0 = std::time::Instant::now();
                assert_eq!(bot.decide(&mut state, &req), Some(0));
                t0.elapsed()
            })
            .collect();
        let slow: Vec<bool> = times.iter().map(|t| *t >= Duration::from_millis(150)).collect();
        assert_eq!(slow, [false, true, false, true], "{times:?}");
    }
}
