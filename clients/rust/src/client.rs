//! The connection loop: connect, Hello, answer decision requests, reconnect, shut down.
//!
//! Behaviour, in short (the same in all five UNO Arena SDKs):
//!
//! * **Address**: `HOST:PORT`, `http://HOST:PORT` (plaintext) or `https://HOST:PORT` (TLS, system
//!   roots; crate feature `tls`, on by default), `[v6]:PORT` too. Anything else is refused at
//!   once with [`Error::Address`], before connecting.
//! * **Local socket**: when the environment variable [`LOCAL_SOCKET_ENV`]
//!   (`UNO_ARENA_LOCAL_SOCKET`) names a Unix socket and the connection is plaintext, every
//!   connection attempt goes to that socket instead of the address (the tournament's sandbox sets
//!   it: one relay hop less per message). TLS connections, and a path that is not a socket at
//!   the moment of connecting, use the address. The "connected" log line shows which was used.
//! * **Auth**: every call carries `authorization: Bearer <token>`.
//! * **Never blocking the reader**: each seat has its own thread that runs `match_started`, every
//!   `decide` and `match_ended` of that seat in order (see [`Bot`]); the stream reader only
//!   queues work, so a slow, hung or panicking `decide` delays neither `MatchStarted`/`MatchEnded`,
//!   nor other seats, nor the reading of the stream.
//! * **Deadlines**: a request with `time_left_ms > 0` gets a budget of `time_left_ms - margin`,
//!   `margin = min(deadline_margin, time_left_ms / 2)` (100 ms by default), counted from its
//!   arrival. If `decide` has not answered by then, a required request is answered with
//!   [`fallback_action`] (`default_action_id`, else the first legal id) and a warning is logged;
//!   the late result is dropped. An optional request (UNO window, late UNO, jump-in) is answered
//!   only if `decide` returns an id before the request closes; otherwise nothing is sent
//!   (silence declines and never costs a strike). An optional request without a deadline has no
//!   timer: `decide` may take until the server closes the request.
//! * **Bad answers**: `None`, an id that is not legal, or a panic: logged, and the fallback is
//!   answered (silence for an optional request).
//! * **Rejections**: if the server rejects an answer and says the request is still open, the
//!   SDK answers once more with the fallback: exactly one retry per request.
//! * **No reply to an accepted answer**: the server sends an `ActionResult` only for a rejected
//!   one, so progress never waits for a reply; a request is forgotten when it closes, when the
//!   seat gets its next request or when the match ends.
//! * **Batching**: `Hello.max_batch` is [`Config::max_batch`] (64 by default; 0 turns it off).
//!   Every message of a `ResponseBatch` is handled exactly as if it had come alone, in order. An
//!   answer is handed to the stream at once when the stream is idle; the answers that pile up
//!   while it is busy writing leave together in one `ActionBatch` (at most 256), in order.
//! * **State**: one [`Bot::State`] per (match, seat), created on `MatchStarted` or the seat's
//!   first request, dropped after `MatchEnded`. It survives reconnects.
//! * **Reconnect**: every attempt opens a new connection. Delays: [`Backoff`] (100 ms doubling,
//!   at most 2 s, +-20% jitter), back to 100 ms as soon as a stream is welcomed. The SDK sends
//!   `Hello.resume` with the session id and the last event sequence seen per seat, so the server
//!   replays missed events and re-sends open requests; events already seen are filtered out.
//!   Not retried (the run ends with [`Error::Fatal`]): `UNAUTHENTICATED`, `PERMISSION_DENIED`,
//!   `FAILED_PRECONDITION`, `INVALID_ARGUMENT`, `UNIMPLEMENTED`, `ABORTED` (`SESSION_REPLACED`:
//!   another process now plays as this bot). Everything else (UNAVAILABLE, INTERNAL, a clean end
//!   of stream, connection refused...) is retried.
//! * **Shutdown**: when the shutdown future completes (Ctrl-C / SIGTERM for [`run`]), the SDK
//!   stops deciding, half-closes its side of the stream (the server starts the reconnect grace,
//!   then its takeover bot plays the seats) and waits up to 2 s for the server to end the stream.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use log::{debug, error, info, warn};
use tokio::sync::{mpsc, oneshot};
use tokio::task::{AbortHandle, JoinSet};
use tonic::metadata::MetadataValue;
use tonic::transport::Endpoint;
use tonic::{Code, Status};

use crate::address::Address;
use crate::backoff::Backoff;
use crate::bot::{Bot, SeatKey, fallback_action, is_legal};
use crate::outbox::{Outbox, Unsent};
use crate::pb;
use crate::pb::bot_service_client::BotServiceClient;
use crate::seat::{DecideJob, Outcome as DecideOutcome, Seat};

/// `Hello.max_batch` unless [`Config::max_batch`] says otherwise.
pub const DEFAULT_MAX_BATCH: u32 = 64;
/// The largest `Hello.max_batch` the server accepts.
pub const MAX_HELLO_BATCH: u32 = 1024;

/// An environment variable naming a Unix socket that reaches the same game server as the
/// address. The tournament's sandbox sets it (a bot in the sandbox reaches the server through a
/// relay behind its `127.0.0.1` address; the socket skips that hop). A plaintext connection goes
/// there instead of to the address while the path is a socket (see [`local_socket`]); TLS
/// connections and bots without it use the address. Every UNO Arena SDK does the same.
pub const LOCAL_SOCKET_ENV: &str = "UNO_ARENA_LOCAL_SOCKET";

/// Where a connection attempt goes: `Some(path)` when `value` (the value of [`LOCAL_SOCKET_ENV`],
/// `None` if unset) is a non-empty path that is a Unix socket right now and the connection is
/// plaintext (`tls == false`); `None` means the address. Always `None` off Unix.
pub fn local_socket(value: Option<&OsStr>, tls: bool) -> Option<PathBuf> {
    let path = value.filter(|v| !v.is_empty() && !tls)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let meta = std::fs::metadata(path).ok()?;
        meta.file_type().is_socket().then(|| PathBuf::from(path))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Connection settings. Build with [`Config::new`] or [`Config::from_env`], then adjust fields.
#[derive(Clone, Debug)]
pub struct Config {
    /// Server address: `HOST:PORT`, `http://HOST:PORT` or `https://HOST:PORT` (see [`Address`]).
    pub addr: String,
    /// The bot token issued by the server operator.
    pub token: String,
    /// `Hello.bot_name`: 1-64 characters of `[A-Za-z0-9_.-]`.
    pub bot_name: String,
    /// The bot's own version, free text (default empty). `Hello.bot_version` carries it with the
    /// SDK's name and version and the protocol after it (see [`crate::hello_bot_version`]).
    pub bot_version: String,
    /// `Hello.max_concurrent_matches` (advisory; 0 = no limit).
    pub max_concurrent_matches: i32,
    /// `Hello.max_batch`: when several messages wait for the bot at the same moment, the server
    /// may send up to this many in one `ResponseBatch`, which the SDK unpacks and handles one by
    /// one, in order. Only the framing changes; it saves CPU on both sides when the bot plays
    /// many tables. 0 turns batching off; at most [`MAX_HELLO_BATCH`]. Default
    /// [`DEFAULT_MAX_BATCH`] (64).
    pub max_batch: u32,
    /// Safety margin kept between the end of the decide budget and the server deadline, for
    /// network lag; never more than half the time left. Default 100 ms.
    pub deadline_margin: Duration,
    /// Reconnect delays. Default 100 ms doubling up to 2 s, +-20% jitter.
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
            addr: addr.into(),
            token: token.into(),
            bot_name: bot_name.into(),
            bot_version: String::new(),
            max_concurrent_matches: 0,
            max_batch: DEFAULT_MAX_BATCH,
            deadline_margin: Duration::from_millis(100),
            backoff: Backoff::default(),
            max_reconnect_attempts: None,
            connect_timeout: Duration::from_secs(5),
        }
    }

    /// Settings from `UNO_ARENA_ADDR` (default `127.0.0.1:50051`), `UNO_ARENA_TOKEN` (default
    /// empty) and `UNO_ARENA_BOT_NAME` (default `default_name`).
    pub fn from_env(default_name: &str) -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Self::new(
            var("UNO_ARENA_ADDR").unwrap_or_else(|| "127.0.0.1:50051".into()),
            var("UNO_ARENA_TOKEN").unwrap_or_default(),
            var("UNO_ARENA_BOT_NAME").unwrap_or_else(|| default_name.into()),
        )
    }
}

/// Why [`run`] / [`run_until`] returned an error. `Debug` prints the same plain line as
/// `Display`, so `fn main() -> Result<(), Error>` reports it readably.
pub enum Error {
    /// The address is not `HOST:PORT`, `http://HOST:PORT` or `https://HOST:PORT`.
    Address(crate::address::AddressError),
    /// Another setting cannot work (token not valid in a header, https without TLS support).
    Config(String),
    /// The server refused the bot in a way retrying cannot fix (see the module docs).
    Fatal(Status),
    /// `max_reconnect_attempts` consecutive (re)connects failed; the last reason.
    GaveUp(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Address(e) => write!(f, "{e}"),
            Error::Config(m) => write!(f, "bad configuration: {m}"),
            Error::Fatal(s) => write!(f, "the server refused the bot: {}", status_text(s)),
            Error::GaveUp(m) => write!(f, "gave up reconnecting: {m}"),
        }
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
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
    let address = Address::parse(&config.addr).map_err(Error::Address)?;
    if config.max_batch > MAX_HELLO_BATCH {
        return Err(Error::Config(format!(
            "max_batch is {}, at most {MAX_HELLO_BATCH} (0 turns batching off)",
            config.max_batch
        )));
    }
    let endpoint = Endpoint::from_shared(address.uri())
        .map_err(|_| Error::Address(crate::address::AddressError(config.addr.clone())))?
        .connect_timeout(config.connect_timeout)
        .http2_keep_alive_interval(Duration::from_secs(20))
        .keep_alive_timeout(Duration::from_secs(10))
        .keep_alive_while_idle(true)
        .tcp_nodelay(true);
    #[cfg(feature = "tls")]
    let endpoint = if address.tls {
        endpoint
            .tls_config(tonic::transport::ClientTlsConfig::new().with_enabled_roots())
            .map_err(|e| Error::Config(format!("TLS: {}", error_chain(&e))))?
    } else {
        endpoint
    };
    #[cfg(not(feature = "tls"))]
    if address.tls {
        return Err(Error::Config(
            "https:// needs the crate feature `tls` (on by default; was it turned off?)".into(),
        ));
    }
    let auth: MetadataValue<_> = format!("Bearer {}", config.token)
        .parse()
        .map_err(|_| Error::Config("the token is not a valid header value".into()))?;

    let mut session = Session {
        config,
        address,
        bot: Arc::new(bot),
        auth,
        session_id: None,
        cursors: HashMap::new(),
        seats: HashMap::new(),
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
            Outcome::Fatal(status) => return Err(Error::Fatal(status)),
            Outcome::Dropped { welcomed, reason } => {
                if welcomed {
                    failures = 0; // the backoff starts again after every welcomed stream
                }
                reason
            }
        };
        failures += 1;
        if session.config.max_reconnect_attempts.is_some_and(|max| failures > max) {
            return Err(Error::GaveUp(reason));
        }
        let delay = session.config.backoff.delay(failures);
        warn!("{reason}; reconnecting in {} ms (attempt {failures})", delay.as_millis());
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

/// An open request: being decided, or answered and perhaps to be retried once if rejected.
struct Pending {
    key: SeatKey,
    fallback: Option<i32>,
    retried: bool,
    task: AbortHandle,
}

/// What an answer task hands back to the reader loop (`None`: send nothing), with what to log
/// once the answer is on its way.
struct Answer {
    request_id: String,
    action_id: Option<i32>,
    note: Option<(log::Level, String)>,
}

/// State kept across reconnects.
struct Session<B: Bot> {
    config: Config,
    address: Address,
    bot: Arc<B>,
    auth: MetadataValue<tonic::metadata::Ascii>,
    session_id: Option<String>,
    /// Last event sequence seen per seat (for Hello.resume and duplicate filtering).
    cursors: HashMap<SeatKey, i64>,
    /// The thread of every seat in play (it owns the seat's state).
    seats: HashMap<SeatKey, Seat>,
}

fn is_fatal(code: Code) -> bool {
    matches!(
        code,
        Code::Unauthenticated
            | Code::PermissionDenied
            | Code::FailedPrecondition
            | Code::InvalidArgument
            | Code::Unimplemented
            | Code::Aborted
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
                bot_version: crate::hello_bot_version(&self.config.bot_version),
                protocol_version: crate::PROTOCOL_VERSION,
                resume,
                max_concurrent_matches: self.config.max_concurrent_matches,
                push_events: false,
                max_batch: self.config.max_batch,
            })),
        }
    }

    fn seat(&mut self, key: &SeatKey) -> &Seat {
        let bot = &self.bot;
        self.seats.entry(key.clone()).or_insert_with(|| Seat::spawn(bot.clone(), key.clone()))
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

    /// One stream: a new connection, Hello, then messages until the stream ends.
    async fn connect_once<F>(&mut self, endpoint: &Endpoint, mut shutdown: std::pin::Pin<&mut F>) -> Outcome
    where
        F: Future<Output = ()>,
    {
        // A new connection for every attempt (never a reused channel's own reconnect logic), to
        // the local socket if there is one now, else to the address.
        let socket = local_socket(std::env::var_os(LOCAL_SOCKET_ENV).as_deref(), self.address.tls);
        let target = match &socket {
            Some(path) => format!("unix:{}", path.display()),
            None => self.address.to_string(),
        };
        let channel = tokio::select! {
            c = connect(endpoint, socket) => match c {
                Ok(c) => c,
                Err(e) => return Outcome::Dropped { welcomed: false, reason: connect_error(&e, &target) },
            },
            _ = shutdown.as_mut() => return Outcome::Shutdown,
        };
        let mut client = BotServiceClient::new(channel);

        // Room for a full ActionBatch and more: the reader never waits on it in practice.
        let (tx, rx) = mpsc::channel::<pb::PlayRequest>(1024);
        let unsent = Unsent::default();
        let resuming = self.session_id.is_some();
        // Cannot fail: the receiver is alive and the buffer empty.
        let _ = tx.try_send(self.hello());
        let mut request = tonic::Request::new(Outbox::new(rx, unsent.clone()));
        request.metadata_mut().insert("authorization", self.auth.clone());

        let mut inbound = tokio::select! {
            r = client.play(request) => match r {
                Ok(resp) => resp.into_inner(),
                Err(status) if is_fatal(status.code()) => return Outcome::Fatal(status),
                Err(status) => return Outcome::Dropped { welcomed: false, reason: stream_ended(&status) },
            },
            _ = shutdown.as_mut() => return Outcome::Shutdown,
        };
        info!(
            "connected to {} as {:?}{}",
            target,
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
                        debug!("the server did not close the stream within 2 s");
                    }
                    return Outcome::Shutdown;
                }
                Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                    let Ok(answer) = joined else { continue }; // aborted: the request closed
                    match answer.action_id {
                        Some(id) if pending.contains_key(&answer.request_id) => {
                            unsent.queue(&answer.request_id);
                            let _ = tx.send(action(&answer.request_id, id)).await;
                        }
                        _ => {
                            pending.remove(&answer.request_id);
                        }
                    }
                    if let Some((level, text)) = answer.note {
                        log::log!(level, "{text}");
                    }
                }
                msg = inbound.message() => match msg {
                    Ok(Some(resp)) => {
                        let received = Instant::now();
                        let Some(kind) = resp.kind else { continue }; // unknown kind from a newer server
                        // Several messages that were waiting at once (Hello.max_batch): each
                        // exactly as if it had come alone, in order.
                        let kinds = match kind {
                            pb::play_response::Kind::Batch(b) => b.messages.into_iter().filter_map(|m| m.kind).collect(),
                            kind => vec![kind],
                        };
                        for kind in kinds {
                            if matches!(kind, pb::play_response::Kind::Welcome(_)) {
                                welcomed = true;
                            }
                            self.handle(kind, received, &mut pending, &mut tasks, &tx, &unsent).await;
                        }
                    }
                    Ok(None) => {
                        return Outcome::Dropped { welcomed, reason: "server closed the stream".into() };
                    }
                    Err(status) if is_fatal(status.code()) => return Outcome::Fatal(status),
                    Err(status) => return Outcome::Dropped { welcomed, reason: stream_ended(&status) },
                },
            }
        }
    }

    /// Handles one server message. Never waits for the bot: work for a seat goes to its thread.
    async fn handle(
        &mut self,
        kind: pb::play_response::Kind,
        received: Instant,
        pending: &mut HashMap<String, Pending>,
        tasks: &mut JoinSet<Answer>,
        tx: &mpsc::Sender<pb::PlayRequest>,
        unsent: &Unsent,
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
                    "{key}: request {} prompt={} required={} time_left={}ms legal={} previous_response={}ms{}",
                    req.request_id,
                    req.prompt().as_str_name(),
                    req.required,
                    req.time_left_ms,
                    req.legal_actions.len(),
                    req.previous_response_ms,
                    if req.resent { " (resent)" } else { "" }
                );
                // At most one request is open per seat: an older one of this seat is over.
                pending.retain(|id, p| {
                    let over = p.key == key && *id != req.request_id;
                    if over {
                        p.task.abort();
                        unsent.close(id); // an answer to it still waiting is late: not sent
                    }
                    !over
                });
                let deadline = (req.time_left_ms > 0).then(|| {
                    let left = Duration::from_millis(req.time_left_ms as u64);
                    received + left - self.config.deadline_margin.min(left / 2)
                });
                let req = Arc::new(req);
                let (reply, answer) = oneshot::channel();
                self.seat(&key).decide(DecideJob { req: req.clone(), reply });
                let fallback = fallback_action(&req);
                let request_id = req.request_id.clone();
                let task = tasks.spawn(await_answer(key.clone(), req, answer, deadline, received));
                if let Some(old) = pending.insert(request_id, Pending { key, fallback, retried: false, task })
                {
                    old.task.abort(); // the same request re-sent: answer the new copy
                }
            }
            Kind::ActionResult(r) => {
                // Always a rejection: an accepted answer gets no reply.
                let key = match pending.get(&r.request_id) {
                    Some(p) => p.key.clone(),
                    None => SeatKey::new(r.match_id.clone(), r.seat),
                };
                let open = if r.request_open { "; the request is still open" } else { "" };
                if r.code == 10 {
                    // ABORTED, late: the request closed while the answer was on its way, a race
                    // a correct bot meets, not a fault (a warning read as a bug in the bot)
                    info!(
                        "{key}: action {:?} of request {} arrived late (request already closed): {} ({})",
                        r.action_id,
                        r.request_id,
                        r.reason().as_str_name(),
                        r.message,
                    );
                } else {
                    warn!(
                        "{key}: action {:?} of request {} rejected: {} ({}){open}",
                        r.action_id,
                        r.request_id,
                        r.reason().as_str_name(),
                        r.message,
                    );
                }
                let Some(p) = pending.get_mut(&r.request_id) else { return };
                match p.fallback {
                    Some(fb) if r.request_open && !p.retried => {
                        info!("{key}: answering request {} once more, with the fallback {fb}", r.request_id);
                        p.retried = true;
                        unsent.queue(&r.request_id);
                        let _ = tx.send(action(&r.request_id, fb)).await;
                    }
                    _ => {
                        pending.remove(&r.request_id);
                    }
                }
            }
            Kind::RequestClosed(c) => {
                if let Some(p) = pending.remove(&c.request_id) {
                    p.task.abort();
                }
                let key = SeatKey::new(c.match_id.clone(), c.seat);
                if unsent.close(&c.request_id) {
                    debug!("{key}: request {} closed while its answer waited: not sent", c.request_id);
                }
                if c.reason() == pb::CloseReason::TimedOut {
                    warn!(
                        "{key}: request {} timed out; the server played {:?} (strikes: {})",
                        c.request_id, c.applied_action_id, c.strikes
                    );
                } else {
                    debug!("{key}: request {} closed: {}", c.request_id, c.reason().as_str_name());
                }
            }
            Kind::MatchStarted(m) => {
                let key = SeatKey::new(m.match_id.clone(), m.seat);
                info!("{key}: match started, {} seats", m.seats.len());
                self.seat(&key).started(m);
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
                pending.retain(|id, p| {
                    if p.key == key {
                        p.task.abort();
                        unsent.close(id);
                    }
                    p.key != key
                });
                if let Some(seat) = self.seats.remove(&key) {
                    seat.ended(m);
                }
                self.cursors.remove(&key);
            }
            Kind::SeatEvents(mut e) => {
                let key = SeatKey::new(e.match_id.clone(), e.seat);
                self.advance_cursor(&key, &mut e.events);
            }
            Kind::Pong(p) => debug!("pong {}", p.nonce),
            Kind::Batch(_) => warn!("ignoring a batch inside a batch (the server never nests them)"),
            Kind::Error(e) => {
                let text = format!("the server reports {}: {}", e.reason().as_str_name(), e.message);
                if e.fatal { error!("{text}; it ends the stream") } else { warn!("{text}") }
            }
        }
    }
}

/// Waits for the seat's `decide` within the budget and checks its answer.
async fn await_answer(
    key: SeatKey,
    req: Arc<pb::DecisionRequest>,
    answer: oneshot::Receiver<DecideOutcome>,
    deadline: Option<Instant>,
    received: Instant,
) -> Answer {
    let result = match deadline {
        Some(d) => tokio::time::timeout_at(d.into(), answer).await.ok(),
        None => Some(answer.await), // optional request without a deadline: until it closes
    };
    let fallback = fallback_action(&req);
    let instead = || match fallback {
        Some(id) => format!("answering the fallback {id}"),
        None => "leaving the optional request unanswered".to_string(),
    };
    let id = &req.request_id;
    // Logged by the reader after the answer is sent: every millisecond counts near a deadline.
    let (chosen, note) = match result {
        Some(Ok(Ok(Some(action_id)))) if is_legal(&req, action_id) => (Some(action_id), None),
        Some(Ok(Ok(Some(action_id)))) => {
            let text = format!(
                "{key}: request {id}: decide returned {action_id}, which is not a legal id; {}",
                instead()
            );
            (fallback, Some((log::Level::Warn, text)))
        }
        Some(Ok(Ok(None))) => (fallback, None),
        Some(Ok(Err(panic))) => {
            let text = format!("{key}: request {id}: decide panicked ({panic}); {}", instead());
            (fallback, Some((log::Level::Error, text)))
        }
        Some(Err(_)) => {
            let text = format!("{key}: request {id}: the seat's thread is gone; {}", instead());
            (fallback, Some((log::Level::Error, text)))
        }
        None => {
            let budget = deadline.map(|d| d.saturating_duration_since(received)).unwrap_or_default();
            let text = format!(
                "{key}: request {id}: decide took more than its {} ms budget; {}",
                budget.as_millis(),
                instead()
            );
            (fallback, Some((log::Level::Warn, text)))
        }
    };
    let note = note.or_else(|| {
        let action_id = chosen?;
        let desc =
            req.legal_actions.iter().find(|a| a.id == action_id).map_or("", |a| a.description.as_str());
        let text =
            format!("{key}: request {id} -> {action_id} {desc} ({} ms)", received.elapsed().as_millis());
        log::log_enabled!(log::Level::Debug).then_some((log::Level::Debug, text))
    });
    Answer { request_id: req.request_id.clone(), action_id: chosen, note }
}

/// The gRPC code as its canonical name (`UNAVAILABLE`), as the server's documentation writes it.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// "UNAVAILABLE (shutting down)": the code's name and the server's message, if any.
fn status_text(status: &Status) -> String {
    let message = status.message().trim();
    if message.is_empty() {
        code_name(status.code()).to_string()
    } else {
        format!("{} ({message})", code_name(status.code()))
    }
}

fn stream_ended(status: &Status) -> String {
    format!("server closed the stream: {}", status_text(status))
}

/// A new channel to `endpoint`'s address, or to the Unix socket `socket` (plaintext HTTP/2; the
/// endpoint's timeouts and keepalive still apply).
async fn connect(
    endpoint: &Endpoint,
    socket: Option<PathBuf>,
) -> Result<tonic::transport::Channel, tonic::transport::Error> {
    #[cfg(unix)]
    if let Some(path) = socket {
        let connector = tower::service_fn(move |_: tonic::transport::Uri| {
            let path = path.clone();
            async move {
                let stream = tokio::net::UnixStream::connect(path).await?;
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
            }
        });
        return endpoint.connect_with_connector(connector).await;
    }
    #[cfg(not(unix))]
    let _ = socket;
    endpoint.connect().await
}

/// A failed connect in plain words: "connection refused (127.0.0.1:50051)" (or `unix:PATH`).
fn connect_error(e: &(dyn std::error::Error + 'static), address: &str) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind;
            let what = match io.kind() {
                ErrorKind::ConnectionRefused => "connection refused".to_string(),
                ErrorKind::TimedOut => "connection timed out".to_string(),
                ErrorKind::ConnectionReset => "connection reset".to_string(),
                ErrorKind::HostUnreachable | ErrorKind::NetworkUnreachable => "host unreachable".to_string(),
                _ => io.to_string(),
            };
            return format!("{what} ({address})");
        }
        source = s.source();
    }
    format!("cannot connect to {address}: {}", error_chain(e))
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
