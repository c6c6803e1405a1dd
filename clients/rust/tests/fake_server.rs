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
const STEP: Duration = Duration::from_secs(5);

/// One Play stream as the server sees it.
struct Conn {
    auth: Option<String>,
    inbound: Streaming<pb::PlayRequest>,
    out: mpsc::Sender<Result<pb::PlayResponse, Status>>,
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

    async fn action(&mut self) -> pb::Action {
        match self.recv().await.and_then(|m| m.kind) {
            Some(play_request::Kind::Action(a)) => a,
            other => panic!("expected Action, got {other:?}"),
        }
    }

    async fn accept(&self, a: &pb::Action) {
        self.send(Kind::ActionResult(pb::ActionResult {
            request_id: a.request_id.clone(),
            action_id: a.action_id,
            accepted: true,
            ..Default::default()
        }))
        .await;
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
        let (out, rx) = mpsc::channel(64);
        let _ = self.conns.send(Conn { auth, inbound: request.into_inner(), out });
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
        time_left_ms: 2000,
        default_action_id: Some(0),
        legal_actions: vec![legal(0, pb::ActionKind::Draw), legal(1070, pb::ActionKind::Play)],
        events: vec![pb::Event { sequence: seq, ..Default::default() }],
        ..Default::default()
    }
}

/// A bot that plays whatever is not a draw, sleeping first for match "slow"; it records, per
/// seat, how many decisions its state saw and what `match_ended` saw.
#[derive(Clone, Default)]
struct Recorder {
    ended: Arc<Mutex<Vec<(String, u32)>>>,
    slow: Duration,
}

impl Bot for Recorder {
    type State = u32;

    fn decide(&self, count: &mut u32, req: &pb::DecisionRequest) -> Option<i32> {
        *count += 1;
        if req.match_id == "slow" {
            std::thread::sleep(self.slow);
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
    c.welcome("s1", false).await;

    c.send(Kind::DecisionRequest(request("r1", "m1", 0, 1))).await;
    let a = c.action().await;
    assert_eq!(a.request_id, "r1");
    assert_eq!(a.action_id, Some(1070));
    c.accept(&a).await;

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

#[tokio::test]
async fn two_matches_interleave_with_separate_state() {
    let (addr, mut conns) = start_server().await;
    let bot = Recorder { slow: Duration::from_millis(400), ..Default::default() };
    let ended = bot.ended.clone();
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);

    let mut c = next_conn(&mut conns).await;
    c.hello().await;
    c.welcome("s1", false).await;
    for (m, seat) in [("slow", 0), ("fast", 1)] {
        c.send(Kind::MatchStarted(pb::MatchStarted { match_id: m.into(), seat, ..Default::default() })).await;
    }
    // The slow match's request goes first but its answer comes second: decisions run concurrently.
    c.send(Kind::DecisionRequest(request("slow-1", "slow", 0, 1))).await;
    c.send(Kind::DecisionRequest(request("fast-1", "fast", 1, 1))).await;
    let first = c.action().await;
    assert_eq!(first.request_id, "fast-1");
    c.accept(&first).await;
    c.send(Kind::DecisionRequest(request("fast-2", "fast", 1, 2))).await;
    let second = c.action().await;
    assert_eq!(second.request_id, "fast-2");
    let third = c.action().await;
    assert_eq!(third.request_id, "slow-1");

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
    assert_eq!(
        *ended.lock().unwrap(),
        vec![("fast".to_string(), 2), ("slow".to_string(), 1), ("fast".to_string(), 1)]
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
    let a = c.action().await;
    c.accept(&a).await;
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
    let bot = Recorder { slow: Duration::from_millis(1500), ..Default::default() };
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);

    let mut c = next_conn(&mut conns).await;
    c.hello().await;
    c.welcome("s1", false).await;
    let mut req = request("r1", "slow", 0, 1);
    req.time_left_ms = 300;
    let sent = Instant::now();
    c.send(Kind::DecisionRequest(req)).await;
    let a = c.action().await;
    assert_eq!(a.action_id, Some(0), "default_action_id");
    assert!(sent.elapsed() < Duration::from_millis(1000), "answered after {:?}", sent.elapsed());
}

#[tokio::test]
async fn illegal_or_rejected_answers_are_replaced_by_the_fallback() {
    let (addr, mut conns) = start_server().await;
    let bot = uno_arena_bot::from_fn(|req: &pb::DecisionRequest| {
        Some(if req.request_id == "bad" { 4242 } else { 1070 })
    });
    let (_stop, _bot) = spawn_bot(config(&addr, TOKEN), bot);

    let mut c = next_conn(&mut conns).await;
    c.hello().await;
    c.welcome("s1", false).await;
    c.send(Kind::DecisionRequest(request("bad", "m1", 0, 1))).await;
    assert_eq!(c.action().await.action_id, Some(0));

    c.send(Kind::DecisionRequest(request("r2", "m1", 0, 2))).await;
    let a = c.action().await;
    assert_eq!(a.action_id, Some(1070));
    c.send(Kind::ActionResult(pb::ActionResult {
        request_id: "r2".into(),
        action_id: a.action_id,
        accepted: false,
        code: 9,
        reason: pb::ErrorReason::IllegalAction as i32,
        request_open: true,
        ..Default::default()
    }))
    .await;
    let retry = c.action().await;
    assert_eq!((retry.request_id.as_str(), retry.action_id), ("r2", Some(0)));
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
        Err(Error::GaveUp(_)) => {}
        other => panic!("expected GaveUp, got {other:?}"),
    }
}

#[cfg(not(feature = "tls"))]
#[tokio::test]
async fn https_without_the_tls_feature_is_a_config_error() {
    let result =
        uno_arena_bot::run_until(config("https://127.0.0.1:1", TOKEN), Recorder::default(), async {}).await;
    assert!(matches!(result, Err(Error::Config(_))), "{result:?}");
}

/// Issue 14, item 1: a decide that overruns its deadline (2.5 s against 1000 ms) must not hold
/// up the stream reader: MatchEnded of that seat, MatchStarted of another match and the other
/// match's requests are handled at once, while the slow seat gets its fallback in time.
#[tokio::test]
async fn an_overrunning_decide_does_not_block_the_reader() {
    let (addr, mut conns) = start_server().await;
    let bot = Recorder { slow: Duration::from_millis(2500), ..Default::default() };
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
    let waited = sent.elapsed();
    assert!(waited < Duration::from_millis(1000), "fallback after {waited:?}");

    // The slow decide is still running (about 1.6 s to go). Its match ends, another starts.
    c.send(Kind::MatchEnded(pb::MatchEnded { match_id: "slow".into(), seat: 0, ..Default::default() })).await;
    c.send(Kind::MatchStarted(pb::MatchStarted { match_id: "next".into(), seat: 1, ..Default::default() }))
        .await;
    let mut req = request("next-1", "next", 1, 1);
    req.time_left_ms = 1000;
    let sent = Instant::now();
    c.send(Kind::DecisionRequest(req)).await;
    let a = c.action().await;
    let waited = sent.elapsed();
    assert_eq!((a.request_id.as_str(), a.action_id), ("next-1", Some(1070)), "the bot's own choice");
    assert!(waited < Duration::from_millis(300), "the other match waited {waited:?} for the slow seat");
}
