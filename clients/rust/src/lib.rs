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
pub use client::{Config, DEFAULT_MAX_BATCH, Error, MAX_HELLO_BATCH, run, run_until};
pub use helpers::{card_points, is_play_of, last_played_seat, wild_color};
pub use outbox::MAX_ACTION_BATCH;

/// Protocol version spoken by this SDK (`Hello.protocol_version`).
pub const PROTOCOL_VERSION: u32 = 1;
