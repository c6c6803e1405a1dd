//! A minimal stderr logger for the `log` facade (no extra dependencies).
//!
//! The SDK logs through `log`; use any logger you like (env_logger, tracing-log, ...) or call
//! [`init`]. Level from `UNO_ARENA_LOG` (then `RUST_LOG`): error, warn, info (default), debug,
//! trace.

use log::{LevelFilter, Log, Metadata, Record};
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

struct StderrLogger;

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = now.as_secs();
        let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
        let _ = writeln!(
            std::io::stderr().lock(),
            "{h:02}:{m:02}:{s:02}.{:03}Z {:5} {}: {}",
            now.subsec_millis(),
            record.level(),
            record.target(),
            record.args()
        );
    }

    fn flush(&self) {}
}

static LOGGER: StderrLogger = StderrLogger;

/// Installs the stderr logger (does nothing if a logger is already installed).
pub fn init() {
    let level = std::env::var("UNO_ARENA_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok()
        .and_then(|v| v.trim().parse::<LevelFilter>().ok())
        .unwrap_or(LevelFilter::Info);
    init_with_level(level);
}

/// Installs the stderr logger with an explicit level.
pub fn init_with_level(level: LevelFilter) {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}
