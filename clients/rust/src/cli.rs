//! A ready-made `main` for a bot: flags and environment, logging, signals and exit codes.
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     let bot = uno_arena_bot::from_fn(|req: &uno_arena_bot::pb::DecisionRequest| {
//!         req.legal_actions.last().map(|a| a.id)
//!     });
//!     uno_arena_bot::cli::main("my-bot", bot)
//! }
//! ```
//!
//! Flags (each overrides its environment variable):
//!
//! ```text
//!   --addr ADDR    HOST:PORT, http://HOST:PORT or https://HOST:PORT  [env UNO_ARENA_ADDR, default 127.0.0.1:50051]
//!   --token TOKEN  the bot token issued by the server operator       [env UNO_ARENA_TOKEN]
//!   --name NAME    the bot name (Hello.bot_name)                     [env UNO_ARENA_BOT_NAME]
//!   --log LEVEL    error|warn|info|debug|trace, default info          [env UNO_ARENA_LOG]
//!   --max-batch N  Hello.max_batch, 0 = never batch, at most 1024     [default 64]
//! ```
//!
//! Exit status: 0 after Ctrl-C / SIGTERM (the stream is half-closed first), 2 for a bad command
//! line or address (one line on stderr, nothing is tried), 1 when the server refuses the bot
//! (bad token, name not allowed, session replaced...).

use std::process::ExitCode;

use crate::address::Address;
use crate::bot::Bot;
use crate::client::{Config, Error};

/// The parsed command line.
#[derive(Debug)]
pub struct Args {
    /// Address, token and name from flags over the environment.
    pub config: Config,
    /// `--log` / `UNO_ARENA_LOG`, if given.
    pub log_level: Option<log::LevelFilter>,
}

/// What [`parse`] found instead of a command to run.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// `--help`: print the usage and exit 0.
    Help,
    /// A usage error: print this one line and exit 2.
    Usage(String),
}

/// The usage text for a program called `program`.
pub fn usage(program: &str) -> String {
    format!(
        "usage: {program} [--addr ADDR] [--token TOKEN] [--name NAME] [--log LEVEL] [--max-batch N]

  --addr ADDR    HOST:PORT, http://HOST:PORT or https://HOST:PORT [env UNO_ARENA_ADDR, default 127.0.0.1:50051]
  --token TOKEN  bot token issued by the server operator          [env UNO_ARENA_TOKEN]
  --name NAME    bot name (Hello.bot_name)                        [env UNO_ARENA_BOT_NAME]
  --log LEVEL    error|warn|info|debug|trace, default info         [env UNO_ARENA_LOG]
  --max-batch N  Hello.max_batch: the most waiting messages the server may send in one batch,
                 0 = never batch, at most 1024                     [default 64]

Plays until Ctrl-C / SIGTERM; reconnects by itself when the stream drops."
    )
}

/// Parses flags (after the program name) over the environment (`env` looks a variable up).
/// The address is checked here, so a bad one is refused before anything is tried.
pub fn parse(
    args: impl IntoIterator<Item = String>,
    env: impl Fn(&str) -> Option<String>,
    default_name: &str,
) -> Result<Args, Stop> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty());
    let mut config = Config::new(
        var("UNO_ARENA_ADDR").unwrap_or_else(|| "127.0.0.1:50051".into()),
        var("UNO_ARENA_TOKEN").unwrap_or_default(),
        var("UNO_ARENA_BOT_NAME").unwrap_or_else(|| default_name.into()),
    );
    let mut log_level = var("UNO_ARENA_LOG");
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if flag == "-h" || flag == "--help" {
            return Err(Stop::Help);
        }
        if !["--addr", "--token", "--name", "--log", "--max-batch"].contains(&flag.as_str()) {
            return Err(Stop::Usage(format!("unknown argument {arg:?} (--help lists the flags)")));
        }
        let Some(value) = inline.or_else(|| args.next()) else {
            return Err(Stop::Usage(format!("{flag} needs a value")));
        };
        match flag.as_str() {
            "--addr" => config.addr = value,
            "--token" => config.token = value,
            "--name" => config.bot_name = value,
            "--max-batch" => {
                config.max_batch = value
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|n| *n <= crate::client::MAX_HELLO_BATCH)
                    .ok_or_else(|| Stop::Usage(format!("--max-batch must be 0-1024 (got {value:?})")))?;
            }
            _ => log_level = Some(value),
        }
    }
    let log_level = match log_level.map(|l| l.trim().parse::<log::LevelFilter>()) {
        None => None,
        Some(Ok(level)) => Some(level),
        Some(Err(_)) => return Err(Stop::Usage("--log must be error, warn, info, debug or trace".into())),
    };
    Address::parse(&config.addr).map_err(|e| Stop::Usage(e.to_string()))?;
    Ok(Args { config, log_level })
}

/// Runs `bot` with the process's command line and environment; returns the exit status.
pub fn main<B: Bot>(default_name: &str, bot: B) -> ExitCode {
    let mut argv = std::env::args();
    let program = argv.next().unwrap_or_default();
    main_with_args(&program, argv, default_name, bot)
}

/// Like [`main`] with explicit arguments (after the program name), e.g. when your binary takes
/// flags of its own and passes the rest on.
pub fn main_with_args<B: Bot>(
    program: &str,
    args: impl IntoIterator<Item = String>,
    default_name: &str,
    bot: B,
) -> ExitCode {
    let program = std::path::Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "uno-bot".into());
    let args = match parse(args, |k| std::env::var(k).ok(), default_name) {
        Ok(args) => args,
        Err(Stop::Help) => {
            println!("{}", usage(&program));
            return ExitCode::SUCCESS;
        }
        Err(Stop::Usage(line)) => {
            eprintln!("{program}: {line}");
            return ExitCode::from(2);
        }
    };
    match args.log_level {
        Some(level) => crate::logger::init_with_level(level),
        None => crate::logger::init(),
    }
    if args.config.token.is_empty() {
        log::warn!("no token given (--token or UNO_ARENA_TOKEN): the server will refuse the bot");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{program}: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(crate::run(args.config, bot));
    // Do not wait for work still running (a decide past its deadline is on its own thread).
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ Error::Address(_)) => {
            eprintln!("{program}: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("{program}: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn flags_override_the_environment() {
        let e = env(&[
            ("UNO_ARENA_ADDR", "h:1"),
            ("UNO_ARENA_TOKEN", "envtok"),
            ("UNO_ARENA_BOT_NAME", "envname"),
        ]);
        let a = parse(args(&["--addr", "http://127.0.0.1:5", "--token=T", "--log", "debug"]), &e, "dflt")
            .unwrap();
        assert_eq!(a.config.max_batch, crate::DEFAULT_MAX_BATCH);
        assert_eq!(parse(args(&["--max-batch", "0"]), &e, "d").unwrap().config.max_batch, 0);
        assert_eq!(parse(args(&["--max-batch=1024"]), &e, "d").unwrap().config.max_batch, 1024);
        assert_eq!(a.config.addr, "http://127.0.0.1:5");
        assert_eq!(a.config.token, "T");
        assert_eq!(a.config.bot_name, "envname");
        assert_eq!(a.log_level, Some(log::LevelFilter::Debug));
        let a = parse(args(&[]), &e, "dflt").unwrap();
        assert_eq!((a.config.addr.as_str(), a.config.token.as_str()), ("h:1", "envtok"));
        let a = parse(args(&[]), env(&[]), "dflt").unwrap();
        assert_eq!((a.config.addr.as_str(), a.config.bot_name.as_str()), ("127.0.0.1:50051", "dflt"));
    }

    #[test]
    fn bad_command_lines_stop_with_one_line() {
        let usage_line = |list: &[&str]| match parse(args(list), env(&[]), "n") {
            Err(Stop::Usage(line)) => line,
            other => panic!("{list:?}: {other:?}"),
        };
        assert_eq!(
            usage_line(&["--addr", "foo"]),
            r#"invalid address "foo": use HOST:PORT, http://HOST:PORT or https://HOST:PORT"#
        );
        assert!(usage_line(&["--bogus"]).contains("unknown argument"));
        assert!(usage_line(&["--token"]).contains("needs a value"));
        assert!(usage_line(&["--log", "loud"]).contains("--log"));
        assert!(usage_line(&["--max-batch", "2000"]).contains("--max-batch must be 0-1024"));
        assert!(usage_line(&["--max-batch=-1"]).contains("--max-batch must be 0-1024"));
        assert_eq!(parse(args(&["--help"]), env(&[]), "n").unwrap_err(), Stop::Help);
        let bad_env = env(&[("UNO_ARENA_ADDR", "grpc://h:1")]);
        assert!(matches!(parse(args(&[]), bad_env, "n"), Err(Stop::Usage(_))));
    }
}
