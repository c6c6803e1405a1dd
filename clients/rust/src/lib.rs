//! Rust SDK for UNO Arena bots.
//!
//! A bot opens one long-lived bidirectional gRPC stream (`uno.v1.BotService/Play`), says
//! `Hello`, and answers every `DecisionRequest` with one of its legal action ids. This crate does
//! the plumbing; you write the [`Bot::decide`] function.
//!
//! ```no_run
//! use uno_arena_bot::pb;
//!
//! fn main() -> std::process::ExitCode {
//!     // Any function of the request returning a legal action id (None = let the SDK fall back).
//!     let bot = uno_arena_bot::from_fn(|req: &pb::DecisionRequest| {
//!         let play = req.legal_actions.iter().find(|a| a.kind() == pb::ActionKind::Play);
//!         play.map(|a| a.id)
//!     });
//!     // --addr, --token, --name, --log (or UNO_ARENA_ADDR / _TOKEN / _BOT_NAME / _LOG)
//!     uno_arena_bot::cli::main("my-bot", bot) // until Ctrl-C / SIGTERM
//! }
//! ```
//!
//! Or, inside your own tokio program, `uno_arena_bot::run(Config::new(addr, token, name),
//! bot).await`.
//!
//! What the SDK does for you (see [`client`] for details): authenticates with
//! `authorization: Bearer <token>`, sends `Hello`, runs each seat's decisions on that seat's own
//! thread so any number of matches and seats are played concurrently while the stream keeps
//! being read, keeps a per-seat state object ([`Bot::State`], dropped on `MatchEnded`), enforces
//! the deadline (answers the request's `default_action_id` if your function is too slow),
//! retries a rejected answer once with the fallback (an accepted answer gets no reply), asks the
//! server for batches and answers several seats in one message when they are ready together,
//! reconnects with a new connection and capped
//! exponential backoff (resuming the session), and half-closes the stream cleanly on shutdown.

pub mod address;
pub mod backoff;
pub mod bot;
pub mod cli;
pub mod client;
pub mod helpers;
pub mod heuristic;
pub mod logger;
mod outbox;
mod seat;

/// Messages and gRPC stubs generated from `proto/uno/v1/*.proto` by `build.rs` at every build
/// (package `uno.v1`): [`pb::DecisionRequest`], [`pb::LegalAction`], the
/// [`pb::bot_service_client::BotServiceClient`], the [`pb::admin_service_client`] and, for
/// tests, the server traits.
pub mod pb {
    #![allow(clippy::all, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/uno.v1.rs"));
}

pub use address::Address;
pub use bot::{Bot, FnBot, SeatKey, fallback_action, from_fn, is_legal};
pub use client::{
    Config, DEFAULT_MAX_BATCH, Error, LOCAL_SOCKET_ENV, MAX_HELLO_BATCH, local_socket, run, run_until,
};
pub use helpers::{card_points, is_play_of, last_played_seat, wild_color};
pub use outbox::MAX_ACTION_BATCH;

/// Protocol version spoken by this SDK (`Hello.protocol_version`).
pub const PROTOCOL_VERSION: u32 = 1;

/// This SDK's version: `Cargo.toml`'s, the one place it is written.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What the SDK adds to `Hello.bot_version`: its name and version, and the protocol
/// (`uno.v` + [`PROTOCOL_VERSION`]).
pub const SDK_TAG: &str = concat!("uno-bot-rust/", env!("CARGO_PKG_VERSION"), " uno.v1");

/// The server's limit on `Hello.bot_version`, in characters (bot.proto).
const MAX_BOT_VERSION: usize = 64;

/// `Hello.bot_version` for a bot whose own version is `own`: `own`, then [`SDK_TAG`], as in
/// `"1.4.2 uno-bot-rust/0.2.0 uno.v1"` (only the tag if `own` is empty). `own` is cut, by
/// characters, so that the whole stays within the server's 64 characters.
pub fn hello_bot_version(own: &str) -> String {
    if own.is_empty() {
        return SDK_TAG.to_string();
    }
    let room = MAX_BOT_VERSION - SDK_TAG.chars().count() - 1;
    let own: String = own.chars().take(room).collect();
    format!("{own} {SDK_TAG}")
}

#[cfg(test)]
mod version_tests {
    use super::*;

    #[test]
    fn hello_bot_version_names_the_bot_the_sdk_and_the_protocol_within_64_characters() {
        assert_eq!(SDK_TAG, format!("uno-bot-rust/{SDK_VERSION} uno.v{PROTOCOL_VERSION}"));
        assert_eq!(hello_bot_version(""), SDK_TAG);
        assert_eq!(hello_bot_version("1.4.2"), format!("1.4.2 {SDK_TAG}"));
        let long = hello_bot_version(&"é".repeat(100)); // the server counts characters
        assert_eq!(long.chars().count(), 64);
        assert!(long.ends_with(&format!(" {SDK_TAG}")));
    }
}
