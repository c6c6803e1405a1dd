//! The SDK against an in-process fake `BotService` server (implemented here with the generated
//! server stubs): the test body plays the server's side of each Play stream by hand.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status, Streaming};
use uno_arena_bot::pb::bot_service_server::{BotService, BotServiceServer};
use uno_arena_bot::pb::{self, play_request, play_response::Kind};
use uno_arena_bot::{Bot, Config, Error};

const TOKEN: &str = "T";
/// How long the test waits for the bot's next message: generous, for a busy machine. Nothing
/// passes by waiting this long; a bot that never answers fails after it.
const STEP: Duration = Duration::from_secs(20);

/// One Play stream as the server sees it.
struct Conn {
    auth: Option<String>,
    /// The bot's end of the TCP connection: a new port means a new connection.
    peer: Option<std::net::SocketAddr>,
    inbound: Streaming<pb::PlayRequest>,
    out: mpsc::Sender<Result<pb::PlayResponse, Status>>,
    /// The rest of an ActionBatch being read by `action()`.
    rest: std::collections::VecDeque<pb::Action>,
    /// The size of every ActionBatch `action()` got, and how many lone Actions.
    batches: Vec<usize>,
    singles: usize,
}

impl Conn {
    async fn recv(&mut self) -> Option<pb::PlayRequest> {
        tokio::time::timeout(STEP, self.inbound.message())
            .await
            .expect("timed out waiting for the bot")
            .ok()
            .flatten()
    }

    async fn send(&self, kind: Kind) {
        self.out.send(Ok(pb::PlayResponse { kind: Some(kind) })).await.expect("stream gone");
    }

    async fn hello(&mut self) -> pb::Hello {
        match self.recv().await.and_then(|m| m.kind) {
            Some(play_request::Kind::Hello(h)) => h,
            other => panic!("expected Hello, got {other:?}"),
        }
    }

    async fn welcome(&self, session_id: &str, resumed: bool) {
        self.send(Kind::Welcome(pb::Welcome {
            session_id: session_id.into(),
            resumed,
            protocol_version: 1,
            ..Default::default()
        }))
        .await;
    }

    /// The bot's next answer, whether it came alone or in an ActionBatch (applied in order, each
    /// as if it had come alone).
    async fn action(&mut self) -> pb::Action {
        if let Some(a) = self.rest.pop_front() {
            return a;
        }
        match self.recv().await.and_then(|m| m.kind) {
            Some(play_request::Kind::Action(a)) => {
                self.singles += 1;
                a
            }
            Some(play_request::Kind::Actions(b)) => {
                assert!((2..=256).contains(&b.actions.len()), "ActionBatch of {} actions", b.actions.len());
                self.batches.push(b.actions.len());
                self.rest.extend(b.actions);
                self.rest.pop_front().unwrap()
            }
            other => panic!("expected an Action, got {other:?}"),
        }
    }

    /// Several messages in one, as the server sends them to a bot whose Hello.max_batch >= 2.
    async fn send_batch(&self, kinds: Vec<Kind>) {
        let messages = kinds.into_iter().map(|k| pb::PlayResponse { kind: Some(k) }).collect();
        self.send(Kind::Batch(pb::ResponseBatch { messages })).await;
    }
}

struct FakeServer {
    conns: mpsc::UnboundedSender<Conn>,
}

#[tonic::async_trait]
impl BotService for FakeServer {
    type PlayStream = ReceiverStream<Result<pb::PlayResponse, Status>>;

    async fn play(
        &self,
        request: Request<Streaming<pb::PlayRequest>>,
    ) -> Result<Response<Self::PlayStream>, Status> {
        let auth = request.metadata().get("authorization").and_then(|v| v.to_str().ok()).map(String::from);
        if auth.as_deref() != Some(&format!("Bearer {TOKEN}")) {
            return Err(Status::unauthenticated("INVALID_TOKEN"));
        }
        let peer = request.remote_addr();
        let (out, rx) = mpsc::channel(64);
        let _ = self.conns.send(Conn {
            auth,
            peer,
            inbound: request.into_inner(),
            out,
            rest: Default::default(),
            batches: Vec::new(),
            singles: 0,
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

/// Starts the fake server on 127.0.0.1:<free port>; returns the address and the stream queue.
async fn start_server() -> (String, mpsc::UnboundedReceiver<Conn>) {
    let incoming = TcpIncoming::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = format!("http://{}", incoming.local_addr().unwrap());
    let (conns, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        tonic::transport::Server::builder()
            .serve_with_incoming(BotServiceServer::new(FakeServer { conns }), incoming)
            .await
            .unwrap();
    });
    (addr, rx)
}

async fn next_conn(conns: &mut mpsc::UnboundedReceiver<Conn>) -> Conn {
    tokio::time::timeout(STEP, conns.recv()).await.expect("no connection").expect("server gone")
}

fn config(addr: &str, token: &str) -> Config {
    let mut c = Config::new(addr, token, "rust-test");
    c.backoff.initial = Duration::from_millis(20);
    c.backoff.max = Duration::from_millis(100);
    c
}

/// Waits until the bot has nothing more to say for `quiet` (fails if it sends anything).
async fn expect_silence(c: &mut Conn, quiet: Duration) {
    if let Ok(msg) = tokio::time::timeout(quiet, c.inbound.message()).await {
        panic!("expected silence, the bot sent {msg:?}");
    }
}

/// Connects, reads Hello and welcomes the bot.
async fn welcomed(conns: &mut mpsc::UnboundedReceiver<Conn>) -> Conn {
    let mut c = next_conn(conns).await;
    c.hello().await;
    c.welcome("s1", false).await;
    c
}

/// An optional request as the server sends it after the hardening issue: no deadline, no default.
fn optional(id: &str, match_id: &str, seat: i32, seq: i64) -> pb::DecisionRequest {
    pb::DecisionRequest {
        prompt: pb::Prompt::UnoWindow as i32,
        required: false,
        time_left_ms: 0,
        default_action_id: None,
        legal_actions: vec![legal(5, pb::ActionKind::NoCatch), legal(12, pb::ActionKind::Catch)],
        ..request(id, match_id, seat, seq)
    }
}

fn rejected(request_id: &str, action_id: Option<i32>) -> Kind {
    Kind::ActionResult(pb::ActionResult {
        request_id: request_id.into(),
        action_id,
        code: 9,
        reason: pb::ErrorReason::IllegalAction as i32,
        request_open: true,
        ..Default::default()
    })
}

/// Spawns the bot; dropping/sending on the returned sender stops it.
fn spawn_bot<B: Bot>(
    config: Config,
    bot: B,
) -> (oneshot::Sender<()>, tokio::task::JoinHandle<Result<(), Error>>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let handle = tokio::spawn(uno_arena_bot::run_until(config, bot, async {
        let _ = stopped.await;
    }));
    (stop, handle)
}

fn legal(id: i32, kind: pb::ActionKind) -> pb::LegalAction {
    pb::LegalAction { id, kind: kind as i32, ..Default::default() }
}

fn request(id: &str, match_id: &str, seat: i32, seq: i64) -> pb::DecisionRequest {
    pb::DecisionRequest {
        request_id: id.into(),
        match_id: match_id.into(),
        seat,
        prompt: pb::Prompt::Turn as i32,
        required: true,
        // Far beyond any decide here: a busy machine cannot turn an answer into a fallback.
        time_left_ms: 60_000,
        default_action_id: Some(0),
        legal_actions: vec![legal(0, pb::ActionKind::Draw), legal(1070, pb::ActionKind::Play)],
        events: vec![pb::Event { sequence: seq, ..Default::default() }],
        ..Default::default()
    }
}

/// A gate the test holds: a decide waits at it until the test opens it (or drops it, when the
/// test ends either way), so "the answer came while that decide was still running" is an order
/// the test controls, not a race against a sleep. `running` counts the decides waiting at it.
#[derive(Clone, Default)]
struct Gate {
    open: Arc<(Mutex<bool>, std::sync::Condvar)>,
    running: Arc<std::sync::atomic::AtomicUsize>,
}

impl Gate {
    fn wait(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        self.running.fetch_add(1, SeqCst);
        let (lock, cvar) = &*self.open;
        // Bounded only so that a broken test cannot hang: far beyond STEP.
        let _ = cvar.wait_timeout_while(lock.lock().unwrap(), 3 * STEP, |open| !*open);
        self.running.fetch_sub(1, SeqCst);
    }

    fn open(&self) {
        let (lock, cvar) = &*self.open;
        *lock.lock().unwrap() = true;
        cvar.notify_all();
    }

    /// How many decides are waiting at the gate now.
    fn running(&self) -> usize {
        self.running.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Opens the gate when the returned guard is dropped (at the end of the test, or its panic).
    fn opens_on_drop(&self) -> impl Drop {
        struct Opener(Gate);
        impl Drop for Opener {
            fn drop(&mut self) {
                self.0.open()
            }
        }
        Opener(self.clone())
    }
}

/// A bot that plays whatever is not a draw, first waiting at the `slow` gate for match "slow"
/// and for seat `slow_seat`; it records, per seat, how many decisions its state saw when
/// `match_ended` came.
#[derive(Clone, Default)]
struct Recorder {
    ended: Arc<Mutex<Vec<(String, u32)>>>,
    slow: Gate,
    slow_seat: Option<i32>,
}

impl Bot for Recorder {
    type State = u32;

    fn decide(&self, count: &mut u32, req: &pb::DecisionRequest) -> Option<i32> {
        *count += 1;
        if req.match_id == "slow" || self.slow_seat == Some(req.seat) {
            self.slow.wait();
        }
        if !req.required {
            return None; // ignore optional chances
        }
        req.legal_actions.iter().find(|a| a.kind() == pb::ActionKind::Play).map(|a| a.id)
    }

    fn match_ended(&self, count: &mut u32, msg: &pb::MatchEnded) {
        self.ended.lock().unwrap().push((msg.match_id.clone(), *count));
    }
}

#[tokio::test]
async fn hello_carries_the_token_and_requests_get_legal_answers() {
    let (addr, mut conns) = start_server().await;
    let (stop, bot) = spawn_bot(config(&addr, TOKEN), Recorder::default());

    let mut c = next_conn(&mut conns).await;
    assert_eq!(c.auth.as_deref(), Some("Bearer T"));
    let hello = c.hello().await;
    assert_eq!(hello.bot_name, "rust-test");
    assert_eq!(hello.protocol_version, 1);
    assert!(hello.resume.is_none());
    assert_eq!(hello.max_batch, 64, "batching is on by default");
    c.welcome("s1", false).await;

    c.send(Kind::DecisionRequest(request("r1", "m1", 0, 1))).await;
    let a = c.action().await;
    assert_eq!(a.request_id, "r1");
    assert_eq!(a.action_id, Some(1070));

    // An optional request the bot ignores gets no answer; the next required one does.
    let mut optional = request("r2", "m1", 0, 2);
    optional.required = false;
    optional.prompt = pb::Prompt::UnoWindow as i32;
    optional.default_action_id = None;
    optional.legal_actions = vec![legal(5, pb::ActionKind::NoCatch), legal(12, pb::ActionKind::Catch)];
    c.send(Kind::DecisionRequest(optional)).await;
    c.send(Kind::DecisionRequest(request("r3", "m1", 0, 3))).await;
    let a = c.action().await;
    assert_eq!((a.request_id.as_str(), a.action_id), ("r3", Some(1070)));

    // Clean stop: the bot half-closes its side, and run_until returns Ok.
    stop.send(()).unwrap();
    assert!(c.recv().await.is_none(), "bot should half-close its stream");
    drop(c);
    tokio::time::timeout(STEP, bot).await.unwrap().unwrap().unwrap();
}

/// A [`Recorder`] whose decisions for match "slow" wait until a decision for `opener` has been
/// made: an order a busy machine cannot change (a time could be outrun).
#[derive(Clone)]
struct Gated {
    inner: Recorder,
    opener: &'static str,
    open: Arc<(Mutex<bool>, std::sync::Condvar)>,
}

impl Gated {
    fn new(opener: &'static str) -> Self {
        let inner = Recorder::default();
        inner.slow.open(); // this bot's own gate below holds match "slow"
        Self { inner, opener, open: Arc::default() }
    }
}

impl Bot for Gated {
    type State = u32;

    fn decide(&self, count: &mut u32, req: &pb::DecisionRequest) -> Option<i32> {
        let (lock, cvar) = &*self.open;
        if req.request_id == self.opener {
            *lock.lock().unwrap() = true;
            cvar.notify_all();
        } else if req.match_id == "slow" {
            // Never for ever: after 10 s the test has failed anyway.
            let _ = cvar.wait_timeout_while(lock.lock().unwrap(), Duration::from_secs(10), |open| !*open);
        }
        self.inner.decide(count, req)
    }

    fn match_ended(&self, count: &mut u32, msg: &pb::MatchEnded) {
        self.inner.match_ended(count, msg)
    }
}

#[tokio::test]
async fn two_matches_interleave_with_separate_state() {
    let (addr, mut conns) = start_server().await;
    // slow-1's decision waits until fast-2's has been made: if decisions did not run
    // concurrently, fast-1 would wait behind it and slow-1's fallback would come first.
    let bot = Gated::new("fast-2");
    let ended = bot.inner.ended.clone();
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);

    let mut c = next_conn(&mut conns).await;
    c.hello().await;
    c.welcome("s1", false).await;
    for (m, seat) in [("slow", 0), ("fast", 1)] {
        c.send(Kind::MatchStarted(pb::MatchStarted { match_id: m.into(), seat, ..Default::default() })).await;
    }
    // The slow match's request goes first but its answer comes second: decisions run concurrently.
    // A deadline far beyond the gate's 10 s: a busy machine must not turn slow-1 into a
    // fallback that overtakes fast-2 (CI saw that with 2 s).
    let mut slow = request("slow-1", "slow", 0, 1);
    slow.time_left_ms = 60_000;
    c.send(Kind::DecisionRequest(slow)).await;
    c.send(Kind::DecisionRequest(request("fast-1", "fast", 1, 1))).await;
    let first = c.action().await;
    assert_eq!(first.request_id, "fast-1");
    c.send(Kind::DecisionRequest(request("fast-2", "fast", 1, 2))).await;
    // fast-2's decide opens slow-1's gate before it returns, so the two answers race each other
    // to the stream (CI saw slow-1 first): either order is right. What proves concurrency is
    // above: fast-1 was answered while slow-1's decision was still held.
    let mut rest = [c.action().await.request_id, c.action().await.request_id];
    rest.sort();
    assert_eq!(rest, ["fast-2".to_string(), "slow-1".to_string()]);

    // MatchEnded hands each seat's own state to the bot, then drops it.
    c.send(Kind::MatchEnded(pb::MatchEnded { match_id: "fast".into(), seat: 1, ..Default::default() })).await;
    c.send(Kind::MatchEnded(pb::MatchEnded { match_id: "slow".into(), seat: 0, ..Default::default() })).await;
    // A new request for "fast" after its end starts from a fresh state.
    c.send(Kind::DecisionRequest(request("fast-3", "fast", 1, 3))).await;
    c.action().await;
    c.send(Kind::MatchEnded(pb::MatchEnded { match_id: "fast".into(), seat: 1, ..Default::default() })).await;
    c.send(Kind::Pong(pb::Pong::default())).await;
    let deadline = Instant::now() + STEP;
    while ended.lock().unwrap().len() < 3 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Each seat's end runs on that seat's own thread (the fresh "fast" state has a new one), so
    // the three may finish in any order; each saw only its own state's decisions: the fresh
    // "fast" state 1, the first 2, "slow" 1 (a shared state would have counted 3 or 4).
    let mut got = ended.lock().unwrap().clone();
    got.sort();
    assert_eq!(
        got,
        [("fast".to_string(), 1), ("fast".to_string(), 2), ("slow".to_string(), 1)],
        "{:?}",
        ended.lock().unwrap()
    );
}

#[tokio::test]
async fn a_dropped_stream_reconnects_and_resumes() {
    let (addr, mut conns) = start_server().await;
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), Recorder::default());

    let mut c = next_conn(&mut conns).await;
    c.hello().await;
    c.welcome("s1", false).await;
    c.send(Kind::DecisionRequest(request("r1", "m1", 2, 7))).await;
    c.action().await; // accepted: no reply
    // The server drops the stream with an error status.
    c.out.send(Err(Status::unavailable("SHUTTING_DOWN"))).await.unwrap();
    drop(c);

    let mut c = next_conn(&mut conns).await;
    assert_eq!(c.auth.as_deref(), Some("Bearer T"));
    let hello = c.hello().await;
    let resume = hello.resume.expect("reconnect should resume");
    assert_eq!(resume.session_id, "s1");
    assert_eq!(resume.cursors, vec![pb::EventCursor { match_id: "m1".into(), seat: 2, last_sequence: 7 }]);
    c.welcome("s1", true).await;
    let mut resent = request("r2", "m1", 2, 8);
    resent.resent = true;
    c.send(Kind::DecisionRequest(resent)).await;
    let a = c.action().await;
    assert_eq!((a.request_id.as_str(), a.action_id), ("r2", Some(1070)));

    // A stream the server just closes (no status) is reconnected too.
    drop(c);
    let mut c = next_conn(&mut conns).await;
    assert_eq!(c.hello().await.resume.map(|r| r.session_id).as_deref(), Some("s1"));
}

#[tokio::test]
async fn slow_decisions_fall_back_to_the_default_action() {
    let (addr, mut conns) = start_server().await;
    // r1's decide waits at the gate until the test ends: every answer here is a fallback.
    let bot = Recorder::default();
    let gate = bot.slow.clone();
    let _open_at_end = gate.opens_on_drop();
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);

    let mut c = welcomed(&mut conns).await;
    // Budget: 1000 ms - min(100 ms, 500 ms) = 900 ms from arrival; 300 ms: 300 - 100 = 200 ms.
    for (id, time_left, budget) in [("r1", 1000, 900), ("r2", 300, 200)] {
        let mut req = request(id, "slow", 0, 1);
        req.time_left_ms = time_left;
        req.default_action_id = Some(1070);
        let sent = Instant::now();
        c.send(Kind::DecisionRequest(req)).await;
        let a = c.action().await;
        let took = sent.elapsed();
        assert_eq!((a.request_id.as_str(), a.action_id), (id, Some(1070)), "default_action_id");
        // A bound by causality: never before the budget (counted from arrival, after `sent`;
        // 1 ms for the timer's rounding). No upper bound: the fallback did not wait for decide,
        // since r1's decide is still waiting at the gate the test holds.
        assert!(
            took >= Duration::from_millis(budget - 1),
            "{id}: answered after {took:?}, before the budget"
        );
        assert_eq!(gate.running(), 1, "{id}: r1's decide is still running");
    }
    // Without a default_action_id the fallback is the first legal id.
    let mut req = request("r3", "slow", 0, 2);
    req.time_left_ms = 300;
    req.default_action_id = None;
    c.send(Kind::DecisionRequest(req)).await;
    assert_eq!(c.action().await.action_id, Some(0), "first legal id");
}

#[tokio::test]
async fn illegal_or_panicking_answers_are_replaced_by_the_fallback() {
    let (addr, mut conns) = start_server().await;
    let bot = uno_arena_bot::from_fn(|req: &pb::DecisionRequest| match req.request_id.as_str() {
        "bad" | "opt-bad" => Some(4242),
        "panic" | "opt-panic" => panic!("a bug in the bot"),
        "none" => None,
        _ => Some(1070),
    });
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);

    let mut c = welcomed(&mut conns).await;
    for (seq, id) in [(1, "bad"), (2, "panic"), (3, "none")] {
        let mut req = request(id, "m1", 0, seq);
        req.default_action_id = Some(0);
        c.send(Kind::DecisionRequest(req)).await;
        let a = c.action().await;
        assert_eq!((a.request_id.as_str(), a.action_id), (id, Some(0)), "{id}: the fallback");
    }
    // The fallback of an optional request is silence; the stream goes on.
    c.send(Kind::DecisionRequest(optional("opt-bad", "m1", 0, 4))).await;
    c.send(Kind::DecisionRequest(optional("opt-panic", "m1", 0, 5))).await;
    expect_silence(&mut c, Duration::from_millis(300)).await;
    c.send(Kind::DecisionRequest(request("after", "m1", 0, 6))).await;
    let a = c.action().await;
    assert_eq!((a.request_id.as_str(), a.action_id), ("after", Some(1070)));
}

#[tokio::test]
async fn a_rejected_answer_is_retried_exactly_once_with_the_fallback() {
    let (addr, mut conns) = start_server().await;
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), uno_arena_bot::from_fn(|_| Some(1070)));

    let mut c = welcomed(&mut conns).await;
    c.send(Kind::DecisionRequest(request("r1", "m1", 0, 1))).await;
    let a = c.action().await;
    assert_eq!(a.action_id, Some(1070));
    c.send(rejected("r1", a.action_id)).await;
    let retry = c.action().await;
    assert_eq!((retry.request_id.as_str(), retry.action_id), ("r1", Some(0)), "default_action_id");
    // The retry is rejected too: no third answer, ever.
    c.send(rejected("r1", retry.action_id)).await;
    expect_silence(&mut c, Duration::from_millis(300)).await;
    // A rejection that closes the request gets no retry either.
    c.send(Kind::DecisionRequest(request("r2", "m1", 0, 2))).await;
    let a = c.action().await;
    let mut closed = rejected("r2", a.action_id);
    if let Kind::ActionResult(r) = &mut closed {
        r.request_open = false;
    }
    c.send(closed).await;
    expect_silence(&mut c, Duration::from_millis(300)).await;
}

/// A late answer (ABORTED: its request closed first) is not a warning; a fault is. An
/// examination found every late answer of a correct bot logged as a warning "rejected".
#[tokio::test]
async fn a_late_answer_is_no_warning_and_a_fault_is() {
    captured(""); // install the capture before the bot logs anything
    let (addr, mut conns) = start_server().await;
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), uno_arena_bot::from_fn(|_| Some(1070)));
    let mut c = welcomed(&mut conns).await;
    c.send(Kind::DecisionRequest(request("late-mark-r1", "m1", 0, 1))).await;
    let a = c.action().await;
    let mut late = rejected("late-mark-r1", a.action_id);
    if let Kind::ActionResult(r) = &mut late {
        (r.code, r.reason, r.request_open) = (10, pb::ErrorReason::DeadlinePassed as i32, false);
    }
    c.send(late).await;
    c.send(Kind::DecisionRequest(request("fault-mark-r2", "m1", 0, 2))).await;
    let a = c.action().await;
    let mut fault = rejected("fault-mark-r2", a.action_id);
    if let Kind::ActionResult(r) = &mut fault {
        r.request_open = false;
    }
    c.send(fault).await;
    // one more request answered: both results above were read (the stream is handled in order)
    c.send(Kind::DecisionRequest(request("after-marks", "m1", 0, 3))).await;
    c.action().await;
    assert!(captured("late-mark-r1").is_empty(), "{:?}", captured("late-mark-r1"));
    let warned = captured("fault-mark-r2");
    assert!(warned.len() == 1 && warned[0].contains("rejected"), "{warned:?}");
}

#[tokio::test]
async fn a_bad_token_is_fatal() {
    let (addr, _conns) = start_server().await;
    let (_stop, bot) = spawn_bot(config(&addr, "wrong"), Recorder::default());
    match tokio::time::timeout(STEP, bot).await.unwrap().unwrap() {
        Err(Error::Fatal(status)) => assert_eq!(status.code(), tonic::Code::Unauthenticated),
        other => panic!("expected a fatal error, got {other:?}"),
    }
}

#[tokio::test]
async fn gives_up_after_max_reconnect_attempts() {
    // Nothing listens on this port (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut cfg = config(&format!("127.0.0.1:{port}"), TOKEN);
    cfg.max_reconnect_attempts = Some(2);
    let (_stop, bot) = spawn_bot(cfg, Recorder::default());
    match tokio::time::timeout(STEP, bot).await.unwrap().unwrap() {
        // Plain words, not a Debug dump of the transport error.
        Err(e @ Error::GaveUp(_)) => {
            assert_eq!(e.to_string(), format!("gave up reconnecting: connection refused (127.0.0.1:{port})"))
        }
        other => panic!("expected GaveUp, got {other:?}"),
    }
}

/// With the `tls` feature (default), https:// is accepted: the attempt fails only at connecting.
#[cfg(feature = "tls")]
#[tokio::test]
async fn https_addresses_are_accepted() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut cfg = config(&format!("https://127.0.0.1:{port}"), TOKEN);
    cfg.max_reconnect_attempts = Some(0);
    let result = uno_arena_bot::run_until(cfg, Recorder::default(), std::future::pending()).await;
    match result {
        Err(Error::GaveUp(reason)) => assert_eq!(reason, format!("connection refused (127.0.0.1:{port})")),
        other => panic!("{other:?}"),
    }
}

#[cfg(not(feature = "tls"))]
#[tokio::test]
async fn https_without_the_tls_feature_is_a_config_error() {
    let result =
        uno_arena_bot::run_until(config("https://127.0.0.1:1", TOKEN), Recorder::default(), async {}).await;
    assert!(matches!(result, Err(Error::Config(_))), "{result:?}");
}

/// Issue 14, item 1: a decide that overruns its deadline (it waits at a gate the test opens only
/// at the end) must not hold up the stream reader: MatchEnded of that seat, MatchStarted of
/// another match and the other match's requests are handled while it runs, and the slow seat
/// gets its fallback at its budget.
#[tokio::test]
async fn an_overrunning_decide_does_not_block_the_reader() {
    let (addr, mut conns) = start_server().await;
    let bot = Recorder::default();
    let gate = bot.slow.clone();
    let _open_at_end = gate.opens_on_drop();
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);

    let mut c = next_conn(&mut conns).await;
    c.hello().await;
    c.welcome("s1", false).await;
    c.send(Kind::MatchStarted(pb::MatchStarted { match_id: "slow".into(), seat: 0, ..Default::default() }))
        .await;
    let mut req = request("slow-1", "slow", 0, 1);
    req.time_left_ms = 1000;
    let sent = Instant::now();
    c.send(Kind::DecisionRequest(req)).await;
    let a = c.action().await;
    assert_eq!((a.request_id.as_str(), a.action_id), ("slow-1", Some(0)), "the fallback");
    // A bound by causality: not before its 900 ms budget; and not after decide returned, since
    // decide is still waiting at the gate.
    let waited = sent.elapsed();
    assert!(waited >= Duration::from_millis(899), "fallback after {waited:?}");
    assert_eq!(gate.running(), 1, "slow-1's decide is still running");

    // The slow decide is still running. Its match ends, another starts.
    c.send(Kind::MatchEnded(pb::MatchEnded { match_id: "slow".into(), seat: 0, ..Default::default() })).await;
    c.send(Kind::MatchStarted(pb::MatchStarted { match_id: "next".into(), seat: 1, ..Default::default() }))
        .await;
    c.send(Kind::DecisionRequest(request("next-1", "next", 1, 1))).await;
    let a = c.action().await;
    assert_eq!((a.request_id.as_str(), a.action_id), ("next-1", Some(1070)), "the bot's own choice");
    // The other match did not wait for the slow seat: its decide is still at the gate.
    assert_eq!(gate.running(), 1, "slow-1's decide is still running");
}

#[tokio::test]
async fn an_overrunning_decide_does_not_block_the_other_seat_of_its_match() {
    let (addr, mut conns) = start_server().await;
    let bot = Recorder { slow_seat: Some(0), ..Default::default() };
    let (ended, gate) = (bot.ended.clone(), bot.slow.clone());
    let _open_at_end = gate.opens_on_drop();
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);

    // The bot holds seats 0 and 2 of match "m"; seat 0's decide overruns (waits at the gate
    // until the test ends).
    let mut c = welcomed(&mut conns).await;
    let mut slow = request("s0", "m", 0, 1);
    slow.time_left_ms = 1000;
    c.send(Kind::DecisionRequest(slow)).await;
    c.send(Kind::DecisionRequest(request("f2", "m", 2, 1))).await;
    // Either may come first (on a busy machine s0's 900 ms budget can run out before f2's
    // answer is sent); what matters is that both come while seat 0's decide is held at the gate,
    // which opens only when the test ends: seat 2 did not wait for it.
    let mut got = std::collections::HashMap::new();
    for _ in 0..2 {
        let a = c.action().await;
        got.insert(a.request_id.clone(), a.action_id);
    }
    assert_eq!(got.get("f2"), Some(&Some(1070)), "seat 2's own answer: {got:?}");
    assert_eq!(got.get("s0"), Some(&Some(0)), "seat 0's fallback: {got:?}");
    assert_eq!(gate.running(), 1, "seat 0's decide is still running");
    // Seat 2's match_ended runs while seat 0's late decide still runs.
    c.send(Kind::MatchEnded(pb::MatchEnded { match_id: "m".into(), seat: 2, ..Default::default() })).await;
    let deadline = Instant::now() + STEP;
    while ended.lock().unwrap().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(*ended.lock().unwrap(), vec![("m".to_string(), 1)], "seat 2's match_ended");
    assert_eq!(gate.running(), 1, "seat 2 ended while seat 0's decide was still running");
}

/// Per-seat state: two seats of one match each get their own state object.
#[tokio::test]
async fn two_seats_of_one_match_have_separate_state() {
    let (addr, mut conns) = start_server().await;
    let bot = Recorder::default();
    let ended = bot.ended.clone();
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);

    let mut c = welcomed(&mut conns).await;
    for (id, seat, seq) in [("a1", 0, 1), ("b1", 2, 1), ("a2", 0, 2), ("a3", 0, 3)] {
        c.send(Kind::DecisionRequest(request(id, "m", seat, seq))).await;
        assert_eq!(c.action().await.request_id, id);
    }
    for seat in [0, 2] {
        c.send(Kind::MatchEnded(pb::MatchEnded { match_id: "m".into(), seat, ..Default::default() })).await;
    }
    let deadline = Instant::now() + STEP;
    while ended.lock().unwrap().len() < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut counts = ended.lock().unwrap().clone();
    counts.sort();
    assert_eq!(counts, vec![("m".to_string(), 1), ("m".to_string(), 3)]);
}

/// Optional requests after the hardening issue: no deadline, no default. Answered if decide
/// returns before the request closes, else never; a RequestClosed silences a late decide.
#[tokio::test]
async fn optional_requests_without_a_deadline_are_answered_only_while_open() {
    let (addr, mut conns) = start_server().await;
    let gate = Gate::default();
    let _open_at_end = gate.opens_on_drop();
    let bot = {
        let gate = gate.clone();
        uno_arena_bot::from_fn(move |req: &pb::DecisionRequest| {
            match req.request_id.as_str() {
                "slow-open" => std::thread::sleep(Duration::from_millis(1300)),
                "slow-closed" => gate.wait(),
                _ => {}
            }
            (!req.required).then_some(12) // catch
        })
    };
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);

    let mut c = welcomed(&mut conns).await;
    // A decide slower than any default budget (no timer): its answer still goes out.
    c.send(Kind::DecisionRequest(optional("slow-open", "m1", 0, 1))).await;
    let t0 = Instant::now();
    let a = c.action().await;
    assert_eq!((a.request_id.as_str(), a.action_id), ("slow-open", Some(12)));
    // By causality: the answer cannot come before the 1300 ms decide returned.
    assert!(t0.elapsed() >= Duration::from_millis(1299), "{:?}", t0.elapsed());
    // The same, but the window closes while decide runs (it waits at the gate): nothing is
    // sent, ever.
    c.send(Kind::DecisionRequest(optional("slow-closed", "m1", 1, 1))).await;
    // Closed once its decide runs (closed before, decide would never start).
    let deadline = Instant::now() + STEP;
    while gate.running() == 0 {
        assert!(Instant::now() < deadline, "slow-closed's decide never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    c.send(Kind::RequestClosed(pb::RequestClosed {
        request_id: "slow-closed".into(),
        match_id: "m1".into(),
        seat: 1,
        reason: pb::CloseReason::Expired as i32,
        ..Default::default()
    }))
    .await;
    // The reader handles messages in order: once another seat's later request is answered, the
    // close has been handled. Only then does slow-closed's decide return.
    c.send(Kind::DecisionRequest(request("other-seat", "m1", 2, 1))).await;
    assert_eq!(c.action().await.request_id, "other-seat");
    assert_eq!(gate.running(), 1, "slow-closed's decide is still running");
    gate.open();
    // Seat 1 decides in order: its next request is decided after slow-closed's decide returned,
    // so a late answer to slow-closed would come before this one.
    c.send(Kind::DecisionRequest(request("after", "m1", 1, 2))).await;
    assert_eq!(c.action().await.request_id, "after", "slow-closed was answered after it closed");
}

/// The SDK's log lines (the `log` crate), kept for tests that read what the SDK says it does.
/// Installed once for this test binary; tests pick their own lines by a marker in the reason.
struct CapturedLog(Mutex<Vec<String>>);

impl log::Log for CapturedLog {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Warn
    }
    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            self.0.lock().unwrap().push(r.args().to_string());
        }
    }
    fn flush(&self) {}
}

static CAPTURED: CapturedLog = CapturedLog(Mutex::new(Vec::new()));

/// The captured warnings that contain `marker`, in order.
fn captured(marker: &str) -> Vec<String> {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        log::set_logger(&CAPTURED).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Warn);
    });
    CAPTURED.0.lock().unwrap().iter().filter(|l| l.contains(marker)).cloned().collect()
}

/// Every reconnect attempt uses a new TCP connection, and the backoff restarts after a Welcome.
/// What the SDK waits is read from its "reconnecting in N ms (attempt K)" warnings, in order,
/// and every real gap is at least the delay logged before it (causality): no bound here depends
/// on how busy the machine is.
#[tokio::test]
async fn reconnects_use_a_new_connection_and_the_backoff_resets_after_welcome() {
    captured(""); // install the capture before the bot logs anything
    let (addr, mut conns) = start_server().await;
    let mut cfg = config(&addr, TOKEN);
    cfg.backoff = uno_arena_bot::backoff::Backoff {
        initial: Duration::from_millis(50),
        max: Duration::from_secs(10),
        jitter: 0.0,
    };
    let (_stop, _bot) = spawn_bot(cfg, Recorder::default());

    let mut peers = Vec::new();
    let mut gaps = Vec::new();
    // Six streams refused before any Welcome: 50, 100, 200, 400, 800, 1600 ms after them.
    let mut ended = Instant::now();
    for i in 0..6 {
        let mut c = next_conn(&mut conns).await;
        if i > 0 {
            gaps.push(ended.elapsed());
        }
        peers.push(c.peer.expect("peer address"));
        c.hello().await;
        c.out.send(Err(Status::unavailable("reset-test: try later"))).await.unwrap();
        ended = Instant::now();
    }
    // A welcomed stream that then fails: the next delay is back to 50 ms (attempt 1); without
    // the reset it would be attempt 7, 3200 ms.
    let mut c = next_conn(&mut conns).await;
    gaps.push(ended.elapsed());
    peers.push(c.peer.expect("peer address"));
    c.hello().await;
    c.welcome("s1", false).await;
    c.out.send(Err(Status::internal("reset-test: oops"))).await.unwrap();
    let ended = Instant::now();
    let c = next_conn(&mut conns).await;
    gaps.push(ended.elapsed());
    peers.push(c.peer.expect("peer address"));

    let said: Vec<String> =
        captured("reset-test").iter().map(|l| l.split("; ").last().unwrap_or_default().to_string()).collect();
    let want: Vec<String> = [(50, 1), (100, 2), (200, 3), (400, 4), (800, 5), (1600, 6), (50, 1)]
        .iter()
        .map(|(ms, n)| format!("reconnecting in {ms} ms (attempt {n})"))
        .collect();
    assert_eq!(said, want, "the backoff doubles, then starts over after the Welcome");
    // Causality: each delay starts after the stream ended, so the next stream never comes sooner
    // (5 ms for rounding).
    let ms: Vec<u128> = gaps.iter().map(|g| g.as_millis()).collect();
    for (i, want) in [50, 100, 200, 400, 800, 1600, 50].into_iter().enumerate() {
        assert!(ms[i] + 5 >= want, "gap {i} shorter than its logged delay: {ms:?}");
    }
    let distinct: std::collections::HashSet<_> = peers.iter().collect();
    assert_eq!(distinct.len(), peers.len(), "a new connection per attempt: {peers:?}");
}

/// The codes a reconnect cannot fix end the run; every other ending is retried.
#[tokio::test]
async fn fatal_codes_stop_and_others_reconnect() {
    use tonic::Code;
    for code in [
        Code::Unauthenticated,
        Code::PermissionDenied,
        Code::FailedPrecondition,
        Code::InvalidArgument,
        Code::Unimplemented,
        Code::Aborted,
    ] {
        let (addr, mut conns) = start_server().await;
        let (_stop, bot) = spawn_bot(config(&addr, TOKEN), Recorder::default());
        let c = welcomed(&mut conns).await;
        c.out.send(Err(Status::new(code, "SESSION_REPLACED"))).await.unwrap();
        match tokio::time::timeout(STEP, bot).await.unwrap().unwrap() {
            Err(e @ Error::Fatal(_)) => {
                assert!(matches!(&e, Error::Fatal(s) if s.code() == code), "{code:?}: {e}");
                assert!(!e.to_string().contains("MetadataMap"), "plain words: {e}");
            }
            other => panic!("{code:?}: expected a fatal error, got {other:?}"),
        }
        assert!(conns.try_recv().is_err(), "{code:?}: no reconnect");
    }
    let (addr, mut conns) = start_server().await;
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), Recorder::default());
    for code in [
        Some(Code::Unavailable),
        Some(Code::ResourceExhausted),
        Some(Code::Internal),
        Some(Code::Unknown),
        Some(Code::Cancelled),
        Some(Code::DeadlineExceeded),
        None, // a clean end of the stream
    ] {
        let c = welcomed(&mut conns).await;
        match code {
            Some(code) => c.out.send(Err(Status::new(code, "x"))).await.unwrap(),
            None => drop(c),
        }
    }
    welcomed(&mut conns).await; // still reconnecting
}

#[tokio::test]
async fn a_malformed_address_is_refused_at_once() {
    for bad in ["foo", "localhost", "grpc://127.0.0.1:1", "http://127.0.0.1:1/uno", "127.0.0.1:99999"] {
        // It would retry for ever had it tried to connect: returning at all is the check.
        let result = tokio::time::timeout(
            STEP,
            uno_arena_bot::run_until(config(bad, TOKEN), Recorder::default(), std::future::pending()),
        )
        .await
        .expect("run_until tried to connect to a malformed address");
        match result {
            Err(e @ Error::Address(_)) => assert_eq!(
                e.to_string(),
                format!("invalid address {bad:?}: use HOST:PORT, http://HOST:PORT or https://HOST:PORT")
            ),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

/// The example binary: both address forms work; a bad address exits 2 with one line; SIGTERM
/// half-closes the stream and exits 0.
#[cfg(unix)]
#[tokio::test]
async fn the_example_binary_takes_both_address_forms_and_exits_cleanly() {
    use std::process::{Command, Stdio};
    let exe = env!("CARGO_BIN_EXE_heuristic-bot");
    let out = Command::new(exe).args(["--addr", "foo", "--token", "T"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        r#"heuristic-bot: invalid address "foo": use HOST:PORT, http://HOST:PORT or https://HOST:PORT"#
    );

    let (addr, mut conns) = start_server().await;
    let bare = addr.trim_start_matches("http://").to_string();
    for form in [addr.clone(), bare] {
        /// Kills the bot if the test fails half-way.
        struct Reaper(Option<std::process::Child>);
        impl Drop for Reaper {
            fn drop(&mut self) {
                if let Some(mut child) = self.0.take() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
        let child = Command::new(exe)
            .args(["--addr", &form, "--token", TOKEN, "--name", "rust-bin"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut reaper = Reaper(Some(child));
        let mut c = next_conn(&mut conns).await;
        assert_eq!(c.hello().await.bot_name, "rust-bin", "{form}");
        c.welcome("s1", false).await;
        c.send(Kind::DecisionRequest(request("r1", "m1", 0, 1))).await;
        let a = c.action().await;
        assert!(matches!(a.action_id, Some(0 | 1070)), "{form}: {a:?}");
        let mut child = reaper.0.take().unwrap();
        Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
        assert!(c.recv().await.is_none(), "{form}: the stream is half-closed");
        drop(c);
        let status = tokio::task::spawn_blocking(move || child.wait()).await.unwrap().unwrap();
        assert_eq!(status.code(), Some(0), "{form}");
    }
}

/// How a stream ended, in plain words (not a Debug dump of the status).
#[tokio::test]
async fn a_stream_ended_by_the_server_is_reported_in_plain_words() {
    let (addr, mut conns) = start_server().await;
    let mut cfg = config(&addr, TOKEN);
    cfg.max_reconnect_attempts = Some(0);
    let (_stop, bot) = spawn_bot(cfg, Recorder::default());
    let c = welcomed(&mut conns).await;
    c.out.send(Err(Status::unavailable("shutting down"))).await.unwrap();
    match tokio::time::timeout(STEP, bot).await.unwrap().unwrap() {
        Err(Error::GaveUp(reason)) => {
            assert_eq!(reason, "server closed the stream: UNAVAILABLE (shutting down)")
        }
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------- batching (issue 11)

#[tokio::test]
async fn hello_max_batch_follows_the_config_and_over_1024_is_refused() {
    let (addr, mut conns) = start_server().await;
    for (max_batch, want) in [(0, 0), (7, 7), (1024, 1024)] {
        let mut cfg = config(&addr, TOKEN);
        cfg.max_batch = max_batch;
        let (stop, bot) = spawn_bot(cfg, Recorder::default());
        let mut c = next_conn(&mut conns).await;
        assert_eq!(c.hello().await.max_batch, want);
        stop.send(()).unwrap();
        drop(c);
        tokio::time::timeout(STEP, bot).await.unwrap().unwrap().unwrap();
    }
    let mut cfg = config(&addr, TOKEN);
    cfg.max_batch = 1025;
    match uno_arena_bot::run_until(cfg, Recorder::default(), std::future::pending()).await {
        Err(Error::Config(m)) => assert!(m.contains("max_batch"), "{m}"),
        other => panic!("max_batch 1025: {other:?}, want a config error"),
    }
}

/// Records, per decision, whether the seat's `match_started` ran before and how many new events
/// the request carried.
#[derive(Clone, Default)]
struct Ordered {
    seen: Arc<Mutex<Vec<String>>>,
    ended: Arc<Mutex<Vec<i32>>>,
}

impl Bot for Ordered {
    type State = bool; // match_started ran

    fn decide(&self, started: &mut bool, req: &pb::DecisionRequest) -> Option<i32> {
        self.seen.lock().unwrap().push(format!(
            "{} started={} events={}",
            req.request_id,
            started,
            req.events.len()
        ));
        Some(1070)
    }

    fn match_started(&self, started: &mut bool, _msg: &pb::MatchStarted) {
        *started = true;
    }

    fn match_ended(&self, _started: &mut bool, msg: &pb::MatchEnded) {
        self.ended.lock().unwrap().push(msg.seat);
    }
}

#[tokio::test]
async fn every_message_of_a_batch_is_handled_as_if_it_came_alone_in_order() {
    let (addr, mut conns) = start_server().await;
    let bot = Ordered::default();
    let (seen, ended) = (bot.seen.clone(), bot.ended.clone());
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);
    let mut c = welcomed(&mut conns).await;
    let started =
        |seat| Kind::MatchStarted(pb::MatchStarted { match_id: "m1".into(), seat, ..Default::default() });
    c.send_batch(vec![
        started(0),
        started(1),
        Kind::DecisionRequest(request("r1", "m1", 0, 1)),
        Kind::DecisionRequest(request("r2", "m1", 1, 1)),
    ])
    .await;
    let mut got = vec![c.action().await.request_id, c.action().await.request_id];
    got.sort();
    assert_eq!(got, ["r1", "r2"]);
    // r3 is closed by the next message of its batch: only r4 is answered.
    c.send_batch(vec![
        Kind::DecisionRequest(request("r3", "m1", 0, 2)),
        Kind::RequestClosed(pb::RequestClosed {
            request_id: "r3".into(),
            match_id: "m1".into(),
            seat: 0,
            ..Default::default()
        }),
        Kind::DecisionRequest(request("r4", "m1", 0, 3)),
    ])
    .await;
    assert_eq!(c.action().await.request_id, "r4");
    expect_silence(&mut c, Duration::from_millis(300)).await;
    let ended_msg =
        |seat| Kind::MatchEnded(pb::MatchEnded { match_id: "m1".into(), seat, ..Default::default() });
    c.send_batch(vec![ended_msg(0), ended_msg(1)]).await;
    let deadline = Instant::now() + STEP;
    while ended.lock().unwrap().len() < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    ended.lock().unwrap().sort();
    assert_eq!(*ended.lock().unwrap(), vec![0, 1], "both seats' MatchEnded");
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    let want = [
        "r1 started=true events=1",
        "r2 started=true events=1",
        "r3 started=true events=1",
        "r4 started=true events=1",
    ];
    // r3 may or may not have been decided before its RequestClosed: it is never answered either way.
    seen.retain(|s| !s.starts_with("r3 "));
    assert_eq!(seen, [want[0], want[1], want[3]]);
}

#[tokio::test]
async fn the_answers_to_a_batch_of_requests_all_arrive_in_action_batches_or_alone() {
    let (addr, mut conns) = start_server().await;
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), Recorder::default());
    let mut c = welcomed(&mut conns).await;
    let n = 41;
    c.send_batch(
        (0..n).map(|i| Kind::DecisionRequest(request(&format!("r{i}"), &format!("m{i}"), 0, 1))).collect(),
    )
    .await;
    let mut got: Vec<String> = Vec::new();
    for _ in 0..n {
        got.push(c.action().await.request_id);
    }
    got.sort();
    got.dedup();
    assert_eq!(got.len(), n, "every request answered once");
    assert_eq!(c.singles + c.batches.iter().sum::<usize>(), n);
    eprintln!("{n} answers: {} alone, batches {:?}", c.singles, c.batches);
}

// ------------------------------------------------------------------ closed requests (issue 20)

/// A decide that returns after its request was closed sends nothing. r1's decide has started
/// before the close is sent and returns only once r2 (read after the close) is decided; r3, on
/// r1's seat, is decided only after r1's decide returned, so its answer is the next thing sent.
#[tokio::test]
async fn a_decide_that_returns_after_its_request_closed_sends_nothing() {
    let (addr, mut conns) = start_server().await;
    let started = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let bot = {
        let (started, gate) = (started.clone(), gate.clone());
        uno_arena_bot::from_fn(move |req: &pb::DecisionRequest| {
            let (lock, cvar) = &*gate;
            match req.request_id.as_str() {
                "r1" => {
                    started.store(true, std::sync::atomic::Ordering::SeqCst);
                    let _ =
                        cvar.wait_timeout_while(lock.lock().unwrap(), Duration::from_secs(10), |open| !*open);
                }
                "r2" => {
                    *lock.lock().unwrap() = true;
                    cvar.notify_all();
                }
                _ => {}
            }
            Some(1070)
        })
    };
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);
    let mut c = welcomed(&mut conns).await;
    c.send(Kind::DecisionRequest(request("r1", "m1", 0, 1))).await;
    let deadline = Instant::now() + STEP;
    while !started.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "r1's decide never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    c.send(Kind::RequestClosed(pb::RequestClosed {
        request_id: "r1".into(),
        match_id: "m1".into(),
        reason: pb::CloseReason::Expired as i32,
        ..Default::default()
    }))
    .await;
    c.send(Kind::DecisionRequest(request("r2", "m2", 0, 1))).await;
    assert_eq!(c.action().await.request_id, "r2");
    c.send(Kind::DecisionRequest(request("r3", "m1", 0, 2))).await;
    assert_eq!(c.action().await.request_id, "r3", "r1 was closed before its decide returned");
}

#[tokio::test]
async fn hello_bot_version_is_the_bots_own_then_the_sdk_and_the_protocol() {
    let (addr, mut conns) = start_server().await;
    let mut cfg = config(&addr, TOKEN);
    cfg.bot_version = "7.1".into();
    let (_stop, _bot) = spawn_bot(cfg, Recorder::default());
    let mut c = next_conn(&mut conns).await;
    let hello = c.hello().await;
    assert_eq!(hello.bot_version, format!("7.1 {}", uno_arena_bot::SDK_TAG));
    assert_eq!(
        uno_arena_bot::SDK_TAG,
        format!("uno-bot-rust/{} uno.v{}", uno_arena_bot::SDK_VERSION, uno_arena_bot::PROTOCOL_VERSION)
    );
}
