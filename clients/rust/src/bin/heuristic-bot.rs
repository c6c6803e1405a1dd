//! The example heuristic bot.
//!
//! cargo run --release --bin heuristic-bot -- --addr http://127.0.0.1:50051 --token T --name rust-heuristic
//!
//! Flags override the environment variables UNO_ARENA_ADDR, UNO_ARENA_TOKEN and
//! UNO_ARENA_BOT_NAME. Log level: --log LEVEL or UNO_ARENA_LOG (error, warn, info, debug, trace).

use std::process::ExitCode;

use uno_arena_bot::Config;
use uno_arena_bot::heuristic::HeuristicBot;

const USAGE: &str = "\
usage: heuristic-bot [--addr URL] [--token TOKEN] [--name NAME] [--log LEVEL]

  --addr URL     server address, e.g. http://127.0.0.1:50051   [env UNO_ARENA_ADDR]
  --token TOKEN  bot token issued by the server operator        [env UNO_ARENA_TOKEN]
  --name NAME    bot name (Hello.bot_name), default rust-heuristic [env UNO_ARENA_BOT_NAME]
  --log LEVEL    error|warn|info|debug|trace, default info       [env UNO_ARENA_LOG]

Plays until Ctrl-C / SIGTERM; reconnects by itself when the stream drops.";

fn main() -> ExitCode {
    let mut config = Config::from_env("rust-heuristic");
    let mut log_level: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if flag == "-h" || flag == "--help" {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        if !["--addr", "--token", "--name", "--log"].contains(&flag.as_str()) {
            eprintln!("unknown argument {flag}\n\n{USAGE}");
            return ExitCode::from(2);
        }
        let Some(value) = inline.or_else(|| args.next()) else {
            eprintln!("missing value for {flag}\n\n{USAGE}");
            return ExitCode::from(2);
        };
        match flag.as_str() {
            "--addr" => config.addr = value,
            "--token" => config.token = value,
            "--name" => config.bot_name = value,
            _ => log_level = Some(value),
        }
    }
    match log_level.map(|l| l.parse::<log::LevelFilter>()) {
        Some(Ok(level)) => uno_arena_bot::logger::init_with_level(level),
        Some(Err(_)) => {
            eprintln!("bad --log level\n\n{USAGE}");
            return ExitCode::from(2);
        }
        None => uno_arena_bot::logger::init(),
    }
    if config.token.is_empty() {
        log::warn!("no token given (--token or UNO_ARENA_TOKEN): the server will refuse the bot");
    }

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(uno_arena_bot::run(config, HeuristicBot)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::error!("{e}");
            ExitCode::FAILURE
        }
    }
}
