//! The connection loop: connect, Hello, answer decision requests, reconnect, shut down.
//!
//! Behaviour, in short:
//!
//! * **Auth**: every call carries `authorization: Bearer <token>`. `http://` connects in
//!   plaintext; `https://` needs the crate feature `tls`.
//! * **Concurrency**: each `DecisionRequest` is decided on a blocking thread, so any number of
//!   matches and seats proceed at once on the one stream; the reader keeps reading meanwhile.
//! * **Deadlines**: a request with `time_left_ms > 0` gets a budget of `time_left_ms -
//!   deadline_margin` (at least half of `time_left_ms`), counted from its arrival. If `decide`
//!   has not returned by then, a required request is answered with [`fallback_action`]
//!   (`default_action_id`, else the first legal id) and a warning is logged; an optional one is
//!   left unanswered. Requests without a deadline (jump-in chances) wait for `decide`.
//! * **Rejections**: if the server rejects an answer and says the request is still open, the
//!   SDK answers once more with the fallback (if it differs from the rejected id).
//! * **State**: one [`Bot::State`] per (match, seat), created on first sight, passed to
//!   `match_started` / every `decide` / `match_ended`, dropped after `MatchEnded`. It survives
//!   reconnects.
//! * **Reconnect**: when the stream or connection drops, the SDK reconnects after
//!   [`Backoff`] delays (exponential, capped, jittered; reset after each `Welcome`) and sends
//!   `Hello.resume` with the session id and the last event sequence seen per seat, so the
//!   server replays missed events and re-sends open requests. Events already seen are filtered
//!   out of re-sent requests. Not retried (the run ends with [`Error::Fatal`]):
//!   `UNAUTHENTICATED`, `PERMISSION_DENIED`, `FAILED_PRECONDITION` (bad token, name mismatch,
//!   unsupported protocol), `ABORTED` (`SESSION_REPLACED`: another process now plays as this bot;
//!   fighting it would be pointless) and `UNIMPLEMENTED` (not a UNO Arena server).
//! * **Shutdown**: when the shutdown future completes (Ctrl-C / SIGTERM for [`run`]), the SDK
//!   stops deciding, half-closes its side of the stream (the server starts the reconnect grace,
//!   then its takeover bot plays the seats) and waits up to 2 s for the server to end the stream.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use log::{debug, error, info, warn};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_stream::wrappers::ReceiverStream;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

use crate::backoff::Backoff;
use crate::bot::{Bot, SeatKey, fallback_action, is_legal};
use crate::pb;
use crate::pb::bot_service_client::BotServiceClient;

/// Connection settings. Build with [`Config::new`] or [`Config::from_env`], then adjust fields.
#[derive(Clone, Debug)]
pub struct Config {
    /// Server address with scheme, e.g. `http://127.0.0.1:50051` (a bare `host:port` gets
    /// `http://`). `https://` needs the crate feature `tls`.
    pub addr: String,
    /// The bot token issued by the server operator.
    pub token: String,
    /// `Hello.bot_name`: 1-64 characters of `[A-Za-z0-9_.-]`.
    pub bot_name: String,
    /// `Hello.bot_version`, free text.
    pub bot_version: String,
    /// `Hello.max_concurrent_matches` (advisory; 0 = no limit).
    pub max_concurrent_matches: i32,
    /// Safety margin kept between the end of the decide budget and the server deadline, for
    /// network lag. Default 100 ms.
    pub deadline_margin: Duration,
    /// Reconnect delays. Default 250 ms doubling up to 10 s, jittered.
    pub backoff: Backoff,
    /// Give up after this many consecutive failed (re)connects; `None` (default) = never.
    pub max_reconnect_attempts: Option<u32>,
    /// TCP connect timeout. Default 5 s.
    pub connect_timeout: Duration,
}

impl Config {
    /// Settings with defaults for everything but address, token and name.
    pub fn new(addr: impl Into<String>, token: impl Into<String>, bot_name: impl Into<String>) -> Self {
        Self {
            addr: with_scheme(addr.into()),
            token: token.into(),
            bot_name: bot_name.into(),
            bot_version: env!("CARGO_PKG_VERSION").to_string(),
            max_concurrent_matches: 0,
            deadline_margin: Duration::from_millis(100),
            backoff: Backoff { initial: Duration::from_millis(250), max: Duration::from_secs(10) },
            max_reconnect_attempts: None,
            connect_timeout: Duration::from_secs(5),
        }
    }

    /// Settings from `UNO_ARENA_ADDR` (default `http://127.0.0.1:50051`), `UNO_ARENA_TOKEN`
    /// (default empty) and `UNO_ARENA_BOT_NAME` (default `default_name`).
    pub fn from_env(default_name: &str) -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Self::new(
            var("UNO_ARENA_ADDR").unwrap_or_else(|| "http://127.0.0.1:50051".into()),
            var("UNO_ARENA_TOKEN").unwrap_or_default(),
            var("UNO_ARENA_BOT_NAME").unwrap_or_else(|| default_name.into()),
        )
    }
}

fn with_scheme(addr: String) -> String {
    if addr.contains("://") { addr } else { format!("http://{addr}") }
}

/// Why [`run`] / [`run_until`] returned an error.
#[derive(Debug)]
pub enum Error {
    /// The configuration cannot work (bad address, token not valid in a header).
    Config(String),
    /// The server refused the bot in a way retrying cannot fix (see the module docs).
    Fatal(Status),
    /// `max_reconnect_attempts` consecutive (re)connects failed; the last error.
    GaveUp(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Config(m) => write!(f, "bad configuration: {m}"),
            Error::Fatal(s) => write!(f, "server refused the bot: {:?}: {}", s.code(), s.message()),
            Error::GaveUp(m) => write!(f, "gave up reconnecting: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Plays until Ctrl-C or SIGTERM, then shuts down cleanly.
pub async fn run<B: Bot>(config: Config, bot: B) -> Result<(), Error> {
    run_until(config, bot, shutdown_signal()).await
}

/// Plays until `shutdown` completes, then shuts down cleanly (half-close, drain).
pub async fn run_until<B, F>(config: Config, bot: B, shutdown: F) -> Result<(), Error>
where
    B: Bot,
    F: Future<Output = ()> + Send,
{
    let mut config = config;
    config.addr = with_scheme(config.addr);
    let endpoint = Endpoint::from_shared(config.addr.clone())
        .map_err(|e| Error::Config(format!("address {:?}: {e}", config.addr)))?
        .connect_timeout(config.connect_timeout)
        .http2_keep_alive_interval(Duration::from_secs(20))
        .keep_alive_timeout(Duration::from_secs(10))
        .keep_alive_while_idle(true)
        .tcp_nodelay(true);
    #[cfg(feature = "tls")]
    let endpoint = if config.addr.starts_with("https://") {
        endpoint
            .tls_config(tonic::transport::ClientTlsConfig::new().with_enabled_roots())
            .map_err(|e| Error::Config(format!("TLS: {e}")))?
    } else {
        endpoint
    };
    #[cfg(not(feature = "tls"))]
    if config.addr.starts_with("https://") {
        return Err(Error::Config(
            "https:// needs the crate feature `tls` (cargo build --features tls)".into(),
        ));
    }
    let auth: MetadataValue<_> = format!("Bearer {}", config.token)
        .parse()
        .map_err(|_| Error::Config("token is not a valid header value".into()))?;

    let mut session = Session {
        config,
        bot: Arc::new(bot),
        auth,
        session_id: None,
        cursors: HashMap::new(),
        states: HashMap::new(),
    };
    tokio::pin!(shutdown);
    let mut failures: u32 = 0;
    loop {
        let outcome = session.connect_once(&endpoint, shutdown.as_mut()).await;
        let reason = match outcome {
            Outcome::Shutdown => {
                info!("stopped");
                return Ok(());
            }
            Outcome::Fatal(status) => {
                error!("server refused the bot: {:?}: {}", status.code(), status.message());
                return Err(Error::Fatal(status));
            }
            Outcome::Dropped { welcomed, reason } => {
                if welcomed {
                    failures = 0;
                }
                reason
            }
        };
        failures += 1;
        if session.config.max_reconnect_attempts.is_some_and(|max| failures > max) {
            error!("giving up after {} failed attempts: {reason}", failures - 1);
            return Err(Error::GaveUp(reason));
        }
        let delay = session.config.backoff.delay(failures);
        warn!("stream lost ({reason}); reconnecting in {} ms (attempt {failures})", delay.as_millis());
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = shutdown.as_mut() => {
                info!("stopped");
                return Ok(());
            }
        }
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => info!("SIGINT received, shutting down"),
                    _ = term.recv() => info!("SIGTERM received, shutting down"),
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                info!("SIGINT received, shutting down");
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        info!("Ctrl-C received, shutting down");
    }
}

enum Outcome {
    Shutdown,
    Fatal(Status),
    Dropped { welcomed: bool, reason: String },
}

/// An open request we answered or are deciding: what to retry with if rejected.
struct Pending {
    key: SeatKey,
    fallback: Option<i32>,
    answered: Option<i32>,
}

/// What a decision task hands back to the reader loop.
struct Answer {
    request_id: String,
    action_id: Option<i32>,
}

/// State kept across reconnects.
struct Session<B: Bot> {
    config: Config,
    bot: Arc<B>,
    auth: MetadataValue<tonic::metadata::Ascii>,
    session_id: Option<String>,
    /// Last event sequence seen per seat (for Hello.resume and duplicate filtering).
    cursors: HashMap<SeatKey, i64>,
    states: HashMap<SeatKey, Arc<Mutex<B::State>>>,
}

fn is_fatal(code: Code) -> bool {
    matches!(
        code,
        Code::Unauthenticated
            | Code::PermissionDenied
            | Code::FailedPrecondition
            | Code::Aborted
            | Code::Unimplemented
    )
}

impl<B: Bot> Session<B> {
    fn hello(&self) -> pb::PlayRequest {
        let resume = self.session_id.as_ref().map(|id| pb::Resume {
            session_id: id.clone(),
            cursors: self
                .cursors
                .iter()
                .map(|(k, seq)| pb::EventCursor {
                    match_id: k.match_id.clone(),
                    seat: k.seat,
                    last_sequence: *seq,
                })
                .collect(),
        });
        pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Hello(pb::Hello {
                bot_name: self.config.bot_name.clone(),
                bot_version: self.config.bot_version.clone(),
                protocol_version: crate::PROTOCOL_VERSION,
                resume,
                max_concurrent_matches: self.config.max_concurrent_matches,
                push_events: false,
            })),
        }
    }

    fn state_for(&mut self, key: &SeatKey) -> Arc<Mutex<B::State>> {
        self.states.entry(key.clone()).or_default().clone()
    }

    /// Drops already-seen events and advances the seat's cursor.
    fn advance_cursor(&mut self, key: &SeatKey, events: &mut Vec<pb::Event>) {
        let cursor = self.cursors.entry(key.clone()).or_insert(0);
        let before = events.len();
        events.retain(|e| e.sequence > *cursor);
        if events.len() < before {
            debug!("{key}: dropped {} already-seen events", before - events.len());
        }
        if let Some(max) = events.iter().map(|e| e.sequence).max() {
            *cursor = max;
        }
    }

    async fn connect_once<F>(&mut self, endpoint: &Endpoint, mut shutdown: std::pin::Pin<&mut F>) -> Outcome
    where
        F: Future<Output = ()>,
    {
        let channel: Channel = tokio::select! {
            c = endpoint.connect() => match c {
                Ok(c) => c,
                Err(e) => {
                    let reason = format!("connect {}: {}", self.config.addr, error_chain(&e));
                    return Outcome::Dropped { welcomed: false, reason };
                }
            },
            _ = shutdown.as_mut() => return Outcome::Shutdown,
        };
        let mut client = BotServiceClient::new(channel);

        let (tx, rx) = mpsc::channel::<pb::PlayRequest>(256);
        let resuming = self.session_id.is_some();
        // Cannot fail: the receiver is alive and the buffer empty.
        let _ = tx.try_send(self.hello());
        let mut request = tonic::Request::new(ReceiverStream::new(rx));
        request.metadata_mut().insert("authorization", self.auth.clone());

        let mut inbound = tokio::select! {
            r = client.play(request) => match r {
                Ok(resp) => resp.into_inner(),
                Err(status) if is_fatal(status.code()) => return Outcome::Fatal(status),
                Err(status) => return Outcome::Dropped { welcomed: false, reason: describe(&status) },
            },
            _ = shutdown.as_mut() => return Outcome::Shutdown,
        };
        info!(
            "connected to {} as {:?}{}",
            self.config.addr,
            self.config.bot_name,
            if resuming { " (resuming)" } else { "" }
        );

        let mut welcomed = false;
        let mut pending: HashMap<String, Pending> = HashMap::new();
        let mut tasks: JoinSet<Answer> = JoinSet::new();

        loop {
            tokio::select! {
                biased;
                _ = shutdown.as_mut() => {
                    tasks.abort_all();
                    drop(tx); // half-close: the server sees the bot leaving
                    let drain = async { while let Ok(Some(_)) = inbound.message().await {} };
                    if tokio::time::timeout(Duration::from_secs(2), drain).await.is_err() {
                        debug!("server did not close the stream within 2 s");
                    }
                    return Outcome::Shutdown;
                }
                Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                    let Ok(answer) = joined else { continue }; // aborted or panicked outside decide
                    let Some(action_id) = answer.action_id else {
                        pending.remove(&answer.request_id);
                        continue;
                    };
                    if let Some(p) = pending.get_mut(&answer.request_id) {
                        p.answered = Some(action_id);
                        let _ = tx.send(action(&answer.request_id, action_id)).await;
                    }
                }
                msg = inbound.message() => match msg {
                    Ok(Some(resp)) => {
                        let Some(kind) = resp.kind else { continue }; // unknown kind from a newer server
                        if matches!(kind, pb::play_response::Kind::Welcome(_)) {
                            welcomed = true;
                        }
                        self.handle(kind, &mut pending, &mut tasks, &tx).await;
                    }
                    Ok(None) => {
                        return Outcome::Dropped { welcomed, reason: "server closed the stream".into() };
                    }
                    Err(status) if is_fatal(status.code()) => return Outcome::Fatal(status),
                    Err(status) => {
                        return Outcome::Dropped { welcomed, reason: describe(&status) };
                    }
                },
            }
        }
    }

    async fn handle(
        &mut self,
        kind: pb::play_response::Kind,
        pending: &mut HashMap<String, Pending>,
        tasks: &mut JoinSet<Answer>,
        tx: &mpsc::Sender<pb::PlayRequest>,
    ) {
        use pb::play_response::Kind;
        match kind {
            Kind::Welcome(w) => {
                info!(
                    "welcome: session={} resumed={} server={} seats={}",
                    w.session_id,
                    w.resumed,
                    w.server_version,
                    w.seats.len()
                );
                if !w.resumed {
                    // A fresh session: the server will not replay events by our cursors.
                    self.cursors.clear();
                }
                self.session_id = Some(w.session_id);
            }
            Kind::DecisionRequest(mut req) => {
                let key = SeatKey::new(req.match_id.clone(), req.seat);
                self.advance_cursor(&key, &mut req.events);
                debug!(
                    "{key}: request {} prompt={} required={} time_left={}ms legal={}{}",
                    req.request_id,
                    req.prompt().as_str_name(),
                    req.required,
                    req.time_left_ms,
                    req.legal_actions.len(),
                    if req.resent { " (resent)" } else { "" }
                );
                pending.insert(
                    req.request_id.clone(),
                    Pending { key: key.clone(), fallback: fallback_action(&req), answered: None },
                );
                let state = self.state_for(&key);
                let budget = (req.time_left_ms > 0).then(|| {
                    let left = Duration::from_millis(req.time_left_ms as u64);
                    left.saturating_sub(self.config.deadline_margin).max(left / 2)
                });
                tasks.spawn(decide(self.bot.clone(), state, key, req, budget));
            }
            Kind::ActionResult(r) => {
                let Some(p) = pending.get_mut(&r.request_id) else { return };
                let key = p.key.clone();
                if r.accepted {
                    debug!("{key}: action {:?} accepted ({} ms)", r.action_id, r.response_ms);
                    pending.remove(&r.request_id);
                    return;
                }
                warn!(
                    "{key}: action {:?} rejected: {} ({}){}",
                    r.action_id,
                    r.reason().as_str_name(),
                    r.message,
                    if r.request_open { ", request still open" } else { "" }
                );
                match p.fallback {
                    Some(fb) if r.request_open && p.answered != Some(fb) => {
                        info!("{key}: answering request {} with fallback {fb}", r.request_id);
                        p.answered = Some(fb);
                        let _ = tx.send(action(&r.request_id, fb)).await;
                    }
                    _ => {
                        pending.remove(&r.request_id);
                    }
                }
            }
            Kind::RequestClosed(c) => {
                pending.remove(&c.request_id);
                let key = SeatKey::new(c.match_id.clone(), c.seat);
                if c.reason() == pb::CloseReason::TimedOut {
                    warn!(
                        "{key}: request {} timed out; server played {:?} (strikes: {})",
                        c.request_id, c.applied_action_id, c.strikes
                    );
                } else {
                    debug!("{key}: request {} closed: {}", c.request_id, c.reason().as_str_name());
                }
            }
            Kind::MatchStarted(m) => {
                let key = SeatKey::new(m.match_id.clone(), m.seat);
                info!("{key}: match started, {} seats", m.seats.len());
                let state = self.state_for(&key);
                let mut guard = state.lock().unwrap_or_else(|p| p.into_inner());
                self.bot.match_started(&mut guard, &m);
            }
            Kind::MatchEnded(mut m) => {
                let key = SeatKey::new(m.match_id.clone(), m.seat);
                self.advance_cursor(&key, &mut m.events);
                info!(
                    "{key}: match ended: {} won={} winners={:?} totals={:?} strikes={}{}",
                    m.cause().as_str_name(),
                    m.won,
                    m.winners,
                    m.totals,
                    m.strikes,
                    if m.taken_over { " (taken over)" } else { "" }
                );
                pending.retain(|_, p| p.key != key);
                if let Some(state) = self.states.remove(&key) {
                    let mut guard = state.lock().unwrap_or_else(|p| p.into_inner());
                    self.bot.match_ended(&mut guard, &m);
                }
                self.cursors.remove(&key);
            }
            Kind::SeatEvents(mut e) => {
                let key = SeatKey::new(e.match_id.clone(), e.seat);
                self.advance_cursor(&key, &mut e.events);
            }
            Kind::Pong(p) => debug!("pong {}", p.nonce),
            Kind::Error(e) => {
                let text = format!("stream error {}: {} ({})", e.code, e.reason().as_str_name(), e.message);
                if e.fatal { error!("{text}; the server ends the stream") } else { warn!("{text}") }
            }
        }
    }
}

fn describe(status: &Status) -> String {
    format!("{:?}: {}", status.code(), status.message())
}

/// "outer: cause: root cause" for errors whose Display hides the cause (tonic's "transport error").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn action(request_id: &str, action_id: i32) -> pb::PlayRequest {
    pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Action(pb::Action {
            request_id: request_id.to_string(),
            action_id: Some(action_id),
        })),
    }
}

/// Runs the bot's `decide` on a blocking thread within the budget and checks the answer.
async fn decide<B: Bot>(
    bot: Arc<B>,
    state: Arc<Mutex<B::State>>,
    key: SeatKey,
    req: pb::DecisionRequest,
    budget: Option<Duration>,
) -> Answer {
    let started = Instant::now();
    let req = Arc::new(req);
    let req2 = req.clone();
    let handle = tokio::task::spawn_blocking(move || {
        let mut guard = state.lock().unwrap_or_else(|p| p.into_inner());
        bot.decide(&mut guard, &req2)
    });
    let result = match budget {
        Some(b) => tokio::time::timeout(b, handle).await,
        None => Ok(handle.await),
    };
    let fallback = fallback_action(&req);
    let chosen = match result {
        Ok(Ok(Some(id))) if is_legal(&req, id) => Some(id),
        Ok(Ok(Some(id))) => {
            warn!(
                "{key}: decide returned {id}, not a legal id of request {}; using {fallback:?}",
                req.request_id
            );
            fallback
        }
        Ok(Ok(None)) => fallback,
        Ok(Err(e)) => {
            error!("{key}: decide panicked on request {}: {e}; using {fallback:?}", req.request_id);
            fallback
        }
        Err(_) => {
            warn!(
                "{key}: decide took longer than its {} ms budget on request {}; answering {fallback:?}",
                budget.unwrap_or_default().as_millis(),
                req.request_id
            );
            fallback
        }
    };
    if let Some(id) = chosen {
        let desc = req.legal_actions.iter().find(|a| a.id == id).map(|a| a.description.as_str());
        debug!(
            "{key}: request {} -> {id} {} ({} ms)",
            req.request_id,
            desc.unwrap_or(""),
            started.elapsed().as_millis()
        );
    }
    Answer { request_id: req.request_id.clone(), action_id: chosen }
}
