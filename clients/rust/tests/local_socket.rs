//! The local-socket shortcut (`UNO_ARENA_LOCAL_SOCKET`): the tournament's sandbox names the game
//! server's Unix socket, and a plaintext connection goes there instead of through the relay
//! behind the address. TLS connections, and a variable that names no socket, keep the address.
#![cfg(unix)]

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::{ReceiverStream, UnixListenerStream};
use tonic::{Request, Response, Status, Streaming};
use uno_arena_bot::pb::bot_service_server::{BotService, BotServiceServer};
use uno_arena_bot::pb::{self, play_request, play_response::Kind};
use uno_arena_bot::{Config, LOCAL_SOCKET_ENV, local_socket};

/// How long the test waits for the bot's next message: generous, for a busy machine.
const STEP: Duration = Duration::from_secs(20);

/// A folder of its own under the system's temp folder (removed when dropped).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("uno-rust-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One Play stream as the server sees it.
struct Conn {
    auth: Option<String>,
    inbound: Streaming<pb::PlayRequest>,
    out: mpsc::Sender<Result<pb::PlayResponse, Status>>,
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
        let (out, rx) = mpsc::channel(64);
        let _ = self.conns.send(Conn { auth, inbound: request.into_inner(), out });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

async fn next_message(c: &mut Conn) -> play_request::Kind {
    tokio::time::timeout(STEP, c.inbound.message())
        .await
        .expect("timed out waiting for the bot")
        .expect("stream failed")
        .and_then(|m| m.kind)
        .expect("stream ended")
}

/// A port nothing listens on (bound once, then released).
fn dead_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn the_socket_is_used_only_for_a_plaintext_connection_to_a_real_socket() {
    let dir = TempDir::new("target");
    let sock = dir.0.join("server.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    assert_eq!(local_socket(Some(sock.as_os_str()), false), Some(sock.clone()));
    assert_eq!(local_socket(Some(sock.as_os_str()), true), None, "TLS keeps the address");
    assert_eq!(local_socket(None, false), None, "unset: the address");
    assert_eq!(local_socket(Some("".as_ref()), false), None, "empty: the address");
    let plain = dir.0.join("not-a-socket");
    std::fs::write(&plain, "").unwrap();
    assert_eq!(local_socket(Some(plain.as_os_str()), false), None, "a regular file is not a socket");
    assert_eq!(local_socket(Some(dir.0.as_os_str()), false), None, "a folder is not a socket");
    let missing = dir.0.join("missing.sock");
    assert_eq!(local_socket(Some(missing.as_os_str()), false), None, "a missing path: the address");
}

/// Nothing listens at the address: the answer can only have come through the socket. The only
/// test of this file that touches the environment.
#[tokio::test]
async fn a_bot_plays_through_the_socket_while_its_address_is_dead() {
    let dir = TempDir::new("play");
    let sock = dir.0.join("server.sock");
    let listener = tokio::net::UnixListener::bind(&sock).unwrap();
    let (conns, mut rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        tonic::transport::Server::builder()
            .serve_with_incoming(
                BotServiceServer::new(FakeServer { conns }),
                UnixListenerStream::new(listener),
            )
            .await
            .unwrap();
    });
    // SAFETY: no other test in this binary reads or writes the environment.
    unsafe { std::env::set_var(LOCAL_SOCKET_ENV, &sock) };

    let mut config = Config::new(format!("127.0.0.1:{}", dead_port()), "T", "rust-socket");
    config.backoff.initial = Duration::from_millis(20);
    config.backoff.max = Duration::from_millis(100);
    let bot = uno_arena_bot::from_fn(|req: &pb::DecisionRequest| {
        req.legal_actions.iter().find(|a| a.kind() == pb::ActionKind::Play).map(|a| a.id)
    });
    let (stop, stopped) = oneshot::channel::<()>();
    let handle = tokio::spawn(uno_arena_bot::run_until(config, bot, async {
        let _ = stopped.await;
    }));

    let mut c = tokio::time::timeout(STEP, rx.recv()).await.expect("no connection on the socket").unwrap();
    assert_eq!(c.auth.as_deref(), Some("Bearer T"));
    match next_message(&mut c).await {
        play_request::Kind::Hello(h) => assert_eq!(h.bot_name, "rust-socket"),
        other => panic!("expected Hello, got {other:?}"),
    }
    let welcome = pb::Welcome { session_id: "s1".into(), protocol_version: 1, ..Default::default() };
    c.out.send(Ok(pb::PlayResponse { kind: Some(Kind::Welcome(welcome)) })).await.unwrap();
    let request = pb::DecisionRequest {
        request_id: "r1".into(),
        match_id: "m1".into(),
        prompt: pb::Prompt::Turn as i32,
        required: true,
        time_left_ms: 60_000,
        default_action_id: Some(0),
        legal_actions: vec![
            pb::LegalAction { id: 0, kind: pb::ActionKind::Draw as i32, ..Default::default() },
            pb::LegalAction { id: 1070, kind: pb::ActionKind::Play as i32, ..Default::default() },
        ],
        ..Default::default()
    };
    c.out.send(Ok(pb::PlayResponse { kind: Some(Kind::DecisionRequest(request)) })).await.unwrap();
    match next_message(&mut c).await {
        play_request::Kind::Action(a) => assert_eq!((a.request_id.as_str(), a.action_id), ("r1", Some(1070))),
        other => panic!("expected the answer, got {other:?}"),
    }

    stop.send(()).unwrap();
    drop(c);
    tokio::time::timeout(STEP, handle).await.unwrap().unwrap().unwrap();
}
