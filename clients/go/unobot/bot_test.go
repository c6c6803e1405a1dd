package unobot

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
)

const testToken = "secret-token"

// ---------------------------------------------------------------------------- fake server

// fakeServer is an in-process BotService: each Play stream is handed to script, called with the
// 1-based connection number.
type fakeServer struct {
	unov1.UnimplementedBotServiceServer
	script func(n int, c *srvConn) error
	conns  atomic.Int32
}

func (f *fakeServer) Play(stream unov1.BotService_PlayServer) error {
	n := int(f.conns.Add(1))
	c := &srvConn{stream: stream, in: make(chan *unov1.PlayRequest, 16), recvErr: make(chan error, 1)}
	go func() {
		for {
			msg, err := stream.Recv()
			if err != nil {
				c.recvErr <- err
				close(c.in)
				return
			}
			c.in <- msg
		}
	}()
	return f.script(n, c)
}

// srvConn is the server side of one Play stream.
type srvConn struct {
	stream  unov1.BotService_PlayServer
	in      chan *unov1.PlayRequest
	recvErr chan error
}

func (c *srvConn) send(t *testing.T, msg *unov1.PlayResponse) {
	t.Helper()
	if err := c.stream.Send(msg); err != nil {
		t.Errorf("server send: %v", err)
	}
}

// recv waits for the bot's next message; nil if the bot half-closed or nothing came in time.
func (c *srvConn) recv(t *testing.T, timeout time.Duration) *unov1.PlayRequest {
	t.Helper()
	select {
	case msg := <-c.in:
		return msg
	case <-time.After(timeout):
		return nil
	}
}

func (c *srvConn) recvAction(t *testing.T, timeout time.Duration) *unov1.Action {
	t.Helper()
	msg := c.recv(t, timeout)
	if msg == nil {
		t.Errorf("no action from the bot within %v", timeout)
		return nil
	}
	a := msg.GetAction()
	if a == nil {
		t.Errorf("expected an Action, got %v", msg)
	}
	return a
}

// hello checks the token metadata and the Hello message, and answers Welcome.
func (c *srvConn) hello(t *testing.T, session string, seats ...*unov1.SeatRef) *unov1.Hello {
	t.Helper()
	md, _ := metadata.FromIncomingContext(c.stream.Context())
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+testToken {
		t.Errorf("authorization metadata = %q, want %q", got, "Bearer "+testToken)
	}
	msg := c.recv(t, 5*time.Second)
	h := msg.GetHello()
	if h == nil {
		t.Fatalf("first message is not Hello: %v", msg)
	}
	c.send(t, &unov1.PlayResponse{Kind: &unov1.PlayResponse_Welcome{Welcome: &unov1.Welcome{
		SessionId: session, BotName: h.GetBotName(), ProtocolVersion: 1, Resumed: h.GetResume() != nil, Seats: seats,
	}}})
	return h
}

func startServer(t *testing.T, script func(n int, c *srvConn) error) (addr string, f *fakeServer) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f = &fakeServer{script: script}
	s := grpc.NewServer()
	unov1.RegisterBotServiceServer(s, f)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String(), f
}

// startBot runs the SDK against addr; the returned stop cancels it and returns Run's error.
func startBot(t *testing.T, addr string, cfg Config) (stop func() error) {
	t.Helper()
	cfg.Addr, cfg.Token = addr, testToken
	if cfg.Name == "" {
		cfg.Name = "tester"
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff, cfg.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
	}
	level := slog.LevelWarn
	if testing.Verbose() {
		level = slog.LevelDebug
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, cfg) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-errc:
			case <-time.After(5 * time.Second):
				err = errors.New("Run did not return after cancel")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// ---------------------------------------------------------------------------- messages

func play(code int32, uno bool) *unov1.LegalAction {
	id := 1000 + 10*code
	if uno {
		id++
	}
	return &unov1.LegalAction{Id: id, Kind: unov1.ActionKind_ACTION_KIND_PLAY, Uno: uno,
		Card: &unov1.Card{Color: unov1.Color(code/16 + 1), Rank: unov1.Rank(code%16 + 1), Code: code}}
}

var (
	draw     = &unov1.LegalAction{Id: 0, Kind: unov1.ActionKind_ACTION_KIND_DRAW, Description: "draw"}
	noCatch  = &unov1.LegalAction{Id: 5, Kind: unov1.ActionKind_ACTION_KIND_NO_CATCH}
	catchOne = &unov1.LegalAction{Id: 11, Kind: unov1.ActionKind_ACTION_KIND_CATCH, TargetSeat: proto.Int32(1)}
)

func request(id, match string, seat int32, timeLeftMs int32, legal ...*unov1.LegalAction) *unov1.DecisionRequest {
	return &unov1.DecisionRequest{
		RequestId: id, MatchId: match, Seat: seat, Prompt: unov1.Prompt_PROMPT_TURN, Required: true,
		TimeLeftMs: timeLeftMs, DecisionMs: timeLeftMs, DefaultActionId: proto.Int32(0),
		View:         &unov1.SeatView{Seat: seat, ActiveColor: unov1.Color_COLOR_RED},
		LegalActions: legal,
	}
}

func optional(r *unov1.DecisionRequest, prompt unov1.Prompt) *unov1.DecisionRequest {
	r.Prompt, r.Required, r.DefaultActionId = prompt, false, nil
	return r
}

func withEvents(r *unov1.DecisionRequest, seqs ...int64) *unov1.DecisionRequest {
	for _, s := range seqs {
		r.Events = append(r.Events, &unov1.Event{Sequence: s, HandNumber: 1,
			Kind: &unov1.Event_Passed{Passed: &unov1.PassedEvent{Seat: 1}}})
	}
	return r
}

func decisionMsg(r *unov1.DecisionRequest) *unov1.PlayResponse {
	return &unov1.PlayResponse{Kind: &unov1.PlayResponse_DecisionRequest{DecisionRequest: r}}
}

func accepted(a *unov1.Action) *unov1.PlayResponse {
	return &unov1.PlayResponse{Kind: &unov1.PlayResponse_ActionResult{ActionResult: &unov1.ActionResult{
		RequestId: a.GetRequestId(), ActionId: a.ActionId, Accepted: true}}}
}

// lastLegal is a decide function that plays the highest legal id (a play when there is one).
func lastLegal(_ context.Context, d *Decision) (int32, error) {
	l := d.Legal()
	return l[len(l)-1].GetId(), nil
}

// ---------------------------------------------------------------------------- tests

func TestHelloTokenLegalAnswerAndMatchState(t *testing.T) {
	ended := make(chan *Match, 1)
	serverDone := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		defer close(serverDone)
		h := c.hello(t, "s1")
		if h.GetBotName() != "tester" || h.GetProtocolVersion() != 1 || h.GetResume() != nil || h.GetBotVersion() != Version {
			t.Errorf("unexpected hello %v", h)
		}
		c.send(t, &unov1.PlayResponse{Kind: &unov1.PlayResponse_MatchStarted{MatchStarted: &unov1.MatchStarted{
			MatchId: "m1", Seat: 2, Labels: map[string]string{"round": "1"}}}})
		req := request("r1", "m1", 2, 2000, draw, play(7, false), play(23, false))
		c.send(t, decisionMsg(req))
		a := c.recvAction(t, 3*time.Second)
		if a.GetRequestId() != "r1" || a.ActionId == nil || !IsLegal(req, a.GetActionId()) || a.GetActionId() != 1230 {
			t.Errorf("bad action %v", a)
		}
		c.send(t, accepted(a))
		c.send(t, &unov1.PlayResponse{Kind: &unov1.PlayResponse_MatchEnded{MatchEnded: &unov1.MatchEnded{
			MatchId: "m1", Seat: 2, Won: true, Cause: unov1.EndCause_END_CAUSE_COMPLETED}}})
		// A clean stop half-closes the stream: the server sees EOF.
		select {
		case err := <-c.recvErr:
			if err != io.EOF {
				t.Errorf("server Recv after the bot stopped: %v, want EOF", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("the bot did not half-close the stream")
		}
		return nil
	})
	stop := startBot(t, addr, Config{
		OnMatchStarted: func(m *Match) { m.Data["started"] = m.Started.GetLabels()["round"] },
		Decide: func(ctx context.Context, d *Decision) (int32, error) {
			if d.Match.ID != "m1" || d.Match.Seat != 2 || d.Match.Data["started"] != "1" {
				t.Errorf("decide got match %+v", d.Match)
			}
			d.Match.Data["decisions"] = 1
			if _, ok := ctx.Deadline(); !ok || d.Deadline.IsZero() {
				t.Error("decide context has no deadline")
			}
			return lastLegal(ctx, d)
		},
		OnMatchEnded: func(m *Match, e *unov1.MatchEnded) {
			if !e.GetWon() || m.Data["decisions"] != 1 {
				t.Errorf("OnMatchEnded got %v %v", e, m.Data)
			}
			ended <- m
		},
	})
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("OnMatchEnded not called")
	}
	if err := stop(); err != nil {
		t.Fatalf("Run returned %v", err)
	}
	<-serverDone
}

func TestTwoMatchesInterleave(t *testing.T) {
	bStarted, done := make(chan struct{}), make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		c.send(t, decisionMsg(request("rA", "mA", 0, 3000, draw, play(7, false))))
		c.send(t, decisionMsg(request("rB", "mB", 1, 3000, draw, play(23, false))))
		// Decide for A cannot return before decide for B has started: with decisions run one
		// after the other, A would time out and answer the fallback (0).
		got := map[string]int32{}
		for range 2 {
			a := c.recvAction(t, 5*time.Second)
			got[a.GetRequestId()] = a.GetActionId()
		}
		if got["rA"] != 1070 || got["rB"] != 1230 {
			t.Errorf("answers %v, want rA:1070 rB:1230 (decided, not the fallback)", got)
		}
		close(done)
		<-c.recvErr
		return nil
	})
	stop := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		switch d.Match.ID {
		case "mA": // cannot finish until match B's decision has started: proves concurrency
			select {
			case <-bStarted:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		case "mB":
			close(bStarted)
		}
		return lastLegal(ctx, d)
	}})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("server script did not finish")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestReconnectResumesSession(t *testing.T) {
	seen := make(chan []int64, 4)
	done := make(chan struct{})
	addr, f := startServer(t, func(n int, c *srvConn) error {
		switch n {
		case 1:
			c.hello(t, "s1")
			c.send(t, decisionMsg(withEvents(request("r1", "m1", 0, 2000, draw, play(7, false)), 1, 2, 3)))
			a := c.recvAction(t, 3*time.Second)
			c.send(t, accepted(a))
			return status.Error(codes.Unavailable, "server going away") // drop the stream
		case 2:
			h := c.hello(t, "s1", &unov1.SeatRef{MatchId: "m1", Seat: 0})
			r := h.GetResume()
			if r.GetSessionId() != "s1" || len(r.GetCursors()) != 1 || r.GetCursors()[0].GetLastSequence() != 3 ||
				r.GetCursors()[0].GetMatchId() != "m1" {
				t.Errorf("resume = %v, want session s1 with cursor m1/0/3", r)
			}
			// Re-sent request with a replayed event (3) and a new one (4).
			c.send(t, decisionMsg(withEvents(request("r2", "m1", 0, 2000, draw, play(7, false)), 3, 4)))
			a := c.recvAction(t, 3*time.Second)
			if a.GetRequestId() != "r2" || a.GetActionId() != 1070 {
				t.Errorf("action after reconnect %v", a)
			}
			c.send(t, accepted(a))
			close(done)
			<-c.recvErr
			return nil
		}
		t.Errorf("unexpected connection %d", n)
		return nil
	})
	stop := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		n, _ := d.Match.Data["n"].(int)
		d.Match.Data["n"] = n + 1
		var seqs []int64
		for _, e := range d.Events {
			seqs = append(seqs, e.GetSequence())
		}
		seen <- append(seqs, int64(n+1))
		return lastLegal(ctx, d)
	}})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconnect")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := f.conns.Load(); got != 2 {
		t.Errorf("connections = %d, want 2", got)
	}
	first, second := <-seen, <-seen
	if len(first) != 4 || len(second) != 2 || second[0] != 4 || second[1] != 2 {
		t.Errorf("events seen %v then %v; want 1,2,3 then only 4 (with match data kept: count 2)", first, second)
	}
}

func TestDeadlineFallsBackToDefault(t *testing.T) {
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		start := time.Now()
		c.send(t, decisionMsg(request("r1", "m1", 0, 1000, draw, play(7, false))))
		a := c.recvAction(t, 3*time.Second)
		if el := time.Since(start); el >= time.Second || el < 600*time.Millisecond {
			t.Errorf("fallback arrived after %v, want about 700ms (deadline 1000ms - 300ms margin)", el)
		}
		if a.GetActionId() != 0 {
			t.Errorf("fallback = %d, want the default 0", a.GetActionId())
		}
		<-c.recvErr
		return nil
	})
	stop := startBot(t, addr, Config{SafetyMargin: 300 * time.Millisecond, Decide: func(ctx context.Context, d *Decision) (int32, error) {
		<-ctx.Done() // too slow
		return 1070, nil
	}})
	time.Sleep(1500 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestOptionalTimeoutIsSilentAndSkipWorks(t *testing.T) {
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		c.send(t, decisionMsg(optional(request("r1", "m1", 0, 200, noCatch, catchOne), unov1.Prompt_PROMPT_UNO_WINDOW)))
		c.send(t, decisionMsg(optional(request("r2", "m2", 0, 200, noCatch, catchOne), unov1.Prompt_PROMPT_UNO_WINDOW)))
		if msg := c.recv(t, 500*time.Millisecond); msg != nil {
			t.Errorf("optional requests got an answer %v, want silence", msg)
		}
		c.send(t, decisionMsg(request("r3", "m1", 0, 1000, draw, play(7, false))))
		if a := c.recvAction(t, 2*time.Second); a.GetRequestId() != "r3" {
			t.Errorf("got %v, want an answer to r3", a)
		}
		<-c.recvErr
		return nil
	})
	stop := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		switch d.Request.GetRequestId() {
		case "r1":
			<-ctx.Done() // too slow
			return 11, nil
		case "r2":
			return 0, ErrSkip
		}
		return lastLegal(ctx, d)
	}})
	time.Sleep(900 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestRejectionRetriesAndIllegalIdIsReplaced(t *testing.T) {
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		c.send(t, decisionMsg(request("r1", "m1", 0, 2000, draw, play(7, false))))
		a := c.recvAction(t, 2*time.Second)
		if a.GetActionId() != 1070 {
			t.Errorf("first answer %v", a)
		}
		c.send(t, &unov1.PlayResponse{Kind: &unov1.PlayResponse_ActionResult{ActionResult: &unov1.ActionResult{
			RequestId: "r1", MatchId: "m1", ActionId: a.ActionId, Code: int32(codes.FailedPrecondition),
			Reason: unov1.ErrorReason_ERROR_REASON_ILLEGAL_ACTION, RequestOpen: true}}})
		if a := c.recvAction(t, 2*time.Second); a.GetRequestId() != "r1" || a.GetActionId() != 0 {
			t.Errorf("retry %v, want r1/0", a)
		}
		c.send(t, decisionMsg(request("r2", "m1", 0, 2000, draw, play(7, false))))
		if a := c.recvAction(t, 2*time.Second); a.GetRequestId() != "r2" || a.GetActionId() != 0 {
			t.Errorf("answer to an illegal choice %v, want r2/0 (fallback)", a)
		}
		<-c.recvErr
		return nil
	})
	stop := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		if d.Request.GetRequestId() == "r2" {
			return 4242, nil
		}
		return lastLegal(ctx, d)
	}})
	time.Sleep(500 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestRequestClosedCancelsDecide(t *testing.T) {
	cancelled := make(chan error, 1)
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		c.send(t, decisionMsg(request("r1", "m1", 0, 5000, draw, play(7, false))))
		time.Sleep(100 * time.Millisecond)
		c.send(t, &unov1.PlayResponse{Kind: &unov1.PlayResponse_RequestClosed{RequestClosed: &unov1.RequestClosed{
			RequestId: "r1", MatchId: "m1", Reason: unov1.CloseReason_CLOSE_REASON_SUPERSEDED}}})
		if msg := c.recv(t, 400*time.Millisecond); msg != nil {
			t.Errorf("closed request got an answer %v", msg)
		}
		<-c.recvErr
		return nil
	})
	stop := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		<-ctx.Done()
		cancelled <- context.Cause(ctx)
		return 0, ctx.Err()
	}})
	select {
	case err := <-cancelled:
		if !errors.Is(err, errRequestClosed) {
			t.Errorf("cause %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("decide not cancelled")
	}
	time.Sleep(500 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestUnauthenticatedIsFatal(t *testing.T) {
	addr, f := startServer(t, func(n int, c *srvConn) error {
		return status.Error(codes.Unauthenticated, "INVALID_TOKEN")
	})
	cfg := Config{Addr: addr, Token: "wrong", Decide: lastLegal,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := Run(ctx, cfg)
	var fe *FatalError
	if !errors.As(err, &fe) || status.Code(fe.Err) != codes.Unauthenticated {
		t.Fatalf("Run = %v, want a FatalError with UNAUTHENTICATED", err)
	}
	if f.conns.Load() != 1 {
		t.Errorf("connections = %d, want 1 (no retry)", f.conns.Load())
	}
}

func TestBackoffIsCappedWithJitter(t *testing.T) {
	b := &bot{cfg: Config{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}}
	for n := range 20 {
		want := min(100*time.Millisecond<<min(n, 10), time.Second)
		for range 50 {
			if d := b.backoff(n); d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, want/2, want)
			}
		}
	}
}

func TestFallback(t *testing.T) {
	r := request("r", "m", 0, 1000, draw, play(7, false))
	r.DefaultActionId = proto.Int32(1070)
	if got := Fallback(r); got != 1070 {
		t.Errorf("Fallback = %d, want the default 1070", got)
	}
	r.DefaultActionId = proto.Int32(99) // not legal
	if got := Fallback(r); got != 0 {
		t.Errorf("Fallback = %d, want the first legal id", got)
	}
	r.DefaultActionId = nil
	r.LegalActions = []*unov1.LegalAction{play(7, false), draw}
	if got := Fallback(r); got != 1070 {
		t.Errorf("Fallback = %d, want the first legal id 1070", got)
	}
}
