//! Rust SDK for UNO Arena bots.
//!
//! A bot opens one long-lived bidirectional gRPC stream (`uno.v1.BotService/Play`), says
//! `Hello`, and answers every `DecisionRequest` with one of its legal action ids. This crate does
//! the plumbing; you write the [`Bot::decide`] function.
//!
//! ```no_run
//! use uno_arena_bot::{pb, Config};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), uno_arena_bot::Error> {
//!     uno_arena_bot::logger::init();
//!     let config = Config::new("http://127.0.0.1:50051", "TOKEN", "my-bot");
//!     // Any function of the request returning a legal action id (None = let the SDK fall back).
//!     let bot = uno_arena_bot::from_fn(|req: &pb::DecisionRequest| {
//!         let play = req.legal_actions.iter().find(|a| a.kind() == pb::ActionKind::Play);
//!         play.map(|a| a.id)
//!     });
//!     uno_arena_bot::run(config, bot).await // until Ctrl-C / SIGTERM
//! }
//! ```
//!
//! What the SDK does for you (see [`client`] for details): authenticates with
//! `authorization: Bearer <token>`, sends `Hello`, runs each decision on a blocking thread so
//! any number of matches and seats are played concurrently on the one stream, keeps a per-seat
//! state object ([`Bot::State`], dropped on `MatchEnded`), enforces the deadline (falls back to
//! the request's `default_action_id` if your function is too slow), retries a rejected answer
//! with the fallback, reconnects with capped exponential backoff and jitter (resuming the
//! session), and half-closes the stream cleanly on shutdown.

pub mod backoff;
pub mod bot;
pub mod client;
pub mod heuristic;
pub mod logger;

/// Messages and gRPC stubs generated from `proto/uno/v1/*.proto` by `build.rs` at every build
/// (package `uno.v1`): [`pb::DecisionRequest`], [`pb::LegalAction`], the
/// [`pb::bot_service_client::BotServiceClient`], the [`pb::admin_service_client`] and, for
/// tests, the server traits.
pub mod pb {
    #![allow(clippy::all, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/uno.v1.rs"));
}

pub use bot::{Bot, FnBot, SeatKey, fallback_action, from_fn, is_legal};
pub use client::{Config, Error, run, run_until};

/// Protocol version spoken by this SDK (`Hello.protocol_version`).
pub const PROTOCOL_VERSION: u32 = 1;
