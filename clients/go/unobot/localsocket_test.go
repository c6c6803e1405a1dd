package unobot_test

// The local-socket shortcut (UNO_ARENA_LOCAL_SOCKET): the tournament's sandbox names the game
// server's Unix socket, and a plaintext connection goes there instead of through the relay behind
// the address. TLS connections, and a variable that names no socket, keep the address.

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
	"github.com/uno-arena/uno-arena/clients/go/unobot"
)

// socketPatience is how long the test waits for what must happen: generous, for a busy machine.
const socketPatience = 30 * time.Second

// shortTempDir is a folder with a path short enough for a Unix socket (t.TempDir's may not be).
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "uno-go-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func TestLocalSocketOnlyForAPlaintextConnectionToARealSocket(t *testing.T) {
	dir := shortTempDir(t)
	sock := filepath.Join(dir, "server.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	plain := filepath.Join(dir, "not-a-socket")
	if err := os.WriteFile(plain, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		tls  bool
		want string
	}{
		{sock, false, sock},
		{sock, true, ""},   // TLS: the address
		{"", false, ""},    // unset
		{plain, false, ""}, // a regular file
		{dir, false, ""},   // a folder
		{filepath.Join(dir, "missing.sock"), false, ""},
	} {
		if got := unobot.LocalSocket(c.path, c.tls); got != c.want {
			t.Errorf("LocalSocket(%q, %v) = %q, want %q", c.path, c.tls, got, c.want)
		}
	}
}

// socketServer answers one Play stream: checks the token, welcomes the bot, sends one request and
// reports the bot's answer.
type socketServer struct {
	unov1.UnimplementedBotServiceServer
	hello  chan *unov1.Hello
	answer chan *unov1.Action
	auth   chan string
}

func (s *socketServer) Play(stream unov1.BotService_PlayServer) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	s.auth <- strings.Join(md.Get("authorization"), ",")
	msg, err := stream.Recv()
	if err != nil {
		return err
	}
	s.hello <- msg.GetHello()
	if err := stream.Send(&unov1.PlayResponse{Kind: &unov1.PlayResponse_Welcome{Welcome: &unov1.Welcome{
		SessionId: "s1", BotName: msg.GetHello().GetBotName(), ProtocolVersion: 1,
	}}}); err != nil {
		return err
	}
	req := &unov1.DecisionRequest{
		RequestId: "r1", MatchId: "m1", Prompt: unov1.Prompt_PROMPT_TURN, Required: true,
		TimeLeftMs: 60_000, DefaultActionId: proto32(0),
		LegalActions: []*unov1.LegalAction{
			{Id: 0, Kind: unov1.ActionKind_ACTION_KIND_DRAW},
			{Id: 1070, Kind: unov1.ActionKind_ACTION_KIND_PLAY},
		},
	}
	if err := stream.Send(&unov1.PlayResponse{Kind: &unov1.PlayResponse_DecisionRequest{DecisionRequest: req}}); err != nil {
		return err
	}
	msg, err = stream.Recv()
	if err != nil {
		return err
	}
	s.answer <- msg.GetAction()
	<-stream.Context().Done() // until the bot goes
	return nil
}

func proto32(v int32) *int32 { return &v }

type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Nothing listens at the address: the answer can only have come through the socket.
func TestABotPlaysThroughTheSocketWhileItsAddressIsDead(t *testing.T) {
	sock := filepath.Join(shortTempDir(t), "server.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &socketServer{hello: make(chan *unov1.Hello, 1), answer: make(chan *unov1.Action, 1), auth: make(chan string, 1)}
	s := grpc.NewServer()
	unov1.RegisterBotServiceServer(s, srv)
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()

	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := dead.Addr().String()
	dead.Close()
	t.Setenv(unobot.LocalSocketEnv, sock)

	logs := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = unobot.Run(ctx, unobot.Config{
			Addr: addr, Token: "T", Name: "go-socket",
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(logs, nil)),
			Decide: func(_ context.Context, d *unobot.Decision) (int32, error) {
				for _, a := range d.Request.GetLegalActions() {
					if a.GetKind() == unov1.ActionKind_ACTION_KIND_PLAY {
						return a.GetId(), nil
					}
				}
				return 0, errors.New("no play")
			},
		})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(socketPatience):
			t.Error("Run did not return after cancel")
		}
	}()

	select {
	case got := <-srv.auth:
		if got != "Bearer T" {
			t.Errorf("authorization = %q", got)
		}
	case <-time.After(socketPatience):
		t.Fatalf("no stream reached the socket; logs:\n%s", logs)
	}
	select {
	case h := <-srv.hello:
		if h.GetBotName() != "go-socket" {
			t.Errorf("Hello.bot_name = %q", h.GetBotName())
		}
	case <-time.After(socketPatience):
		t.Fatal("no Hello")
	}
	select {
	case a := <-srv.answer:
		if a.GetRequestId() != "r1" || a.GetActionId() != 1070 {
			t.Errorf("answer = %v, want r1 -> 1070", a)
		}
	case <-time.After(socketPatience):
		t.Fatalf("no answer; logs:\n%s", logs)
	}
	cancel()
	<-done
	if runErr != nil {
		t.Errorf("Run: %v", runErr)
	}
	if want := "addr=unix:" + sock; !strings.Contains(logs.String(), want) {
		t.Errorf("the connected line does not say %q:\n%s", want, logs)
	}
}

// With TLS the address is used even when the variable names a socket: the bot's attempts go to
// the (dead) address, and nothing ever reaches the socket.
func TestTLSKeepsTheAddress(t *testing.T) {
	sock := filepath.Join(shortTempDir(t), "server.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	t.Setenv(unobot.LocalSocketEnv, sock)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := dead.Addr().String()
	dead.Close()

	logs := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- unobot.Run(ctx, unobot.Config{
			Addr: addr, Token: "T", TLS: &tls.Config{MinVersion: tls.VersionTLS12},
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(logs, nil)),
			Decide: func(context.Context, *unobot.Decision) (int32, error) { return 0, nil },
		})
	}()
	// The first failed attempt is logged with where it went.
	deadline := time.Now().Add(socketPatience)
	for !strings.Contains(logs.String(), "reconnecting") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	out := logs.String()
	if !strings.Contains(out, "("+addr+")") || strings.Contains(out, "unix:") {
		t.Errorf("a TLS bot must try the address %s, not the socket:\n%s", addr, out)
	}
	lis.(*net.UnixListener).SetDeadline(time.Now())
	if c, err := lis.Accept(); err == nil {
		c.Close()
		t.Error("a TLS bot connected to the socket")
	}
}
