package unobot

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
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
	rest    []*unov1.Action // the rest of an ActionBatch being read by recvAction
	batches []int           // the size of every ActionBatch recvAction got
	singles int             // how many lone Actions recvAction got
}

func (c *srvConn) send(t *testing.T, msg *unov1.PlayResponse) {
	t.Helper()
	if err := c.stream.Send(msg); err != nil {
		t.Errorf("server send: %v", err)
	}
}

// patience is how long a test waits for something that must happen: generous, for a busy
// machine. Nothing passes by waiting this long; only a failing test takes it.
const patience = 30 * time.Second

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

// recvAction returns the bot's next answer, whether it came alone or in an ActionBatch (the
// rest of a batch is returned by the next calls).
func (c *srvConn) recvAction(t *testing.T, timeout time.Duration) *unov1.Action {
	t.Helper()
	if len(c.rest) > 0 {
		a := c.rest[0]
		c.rest = c.rest[1:]
		return a
	}
	// An answer must come: a short timeout would only make a busy machine fail the test.
	timeout = max(timeout, patience)
	msg := c.recv(t, timeout)
	if msg == nil {
		t.Errorf("no action from the bot within %v", timeout)
		return nil
	}
	if b := msg.GetActions(); b != nil {
		c.batches = append(c.batches, len(b.GetActions()))
		if len(b.GetActions()) < 2 || len(b.GetActions()) > MaxActionBatch {
			t.Errorf("ActionBatch of %d actions, want 2-%d (one answer goes alone)", len(b.GetActions()), MaxActionBatch)
		}
		if len(b.GetActions()) == 0 {
			return nil
		}
		c.rest = b.GetActions()[1:]
		return b.GetActions()[0]
	}
	a := msg.GetAction()
	if a == nil {
		t.Errorf("expected an Action, got %v", msg)
	}
	c.singles++
	return a
}

// hello checks the token metadata and the Hello message, and answers Welcome.
func (c *srvConn) hello(t *testing.T, session string, seats ...*unov1.SeatRef) *unov1.Hello {
	t.Helper()
	md, _ := metadata.FromIncomingContext(c.stream.Context())
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+testToken {
		t.Errorf("authorization metadata = %q, want %q", got, "Bearer "+testToken)
	}
	msg := c.recv(t, patience)
	h := msg.GetHello()
	if h == nil {
		t.Fatalf("first message is not Hello: %v", msg)
	}
	c.send(t, &unov1.PlayResponse{Kind: &unov1.PlayResponse_Welcome{Welcome: &unov1.Welcome{
		SessionId: session, BotName: h.GetBotName(), ProtocolVersion: 1, Resumed: h.GetResume() != nil, Seats: seats,
	}}})
	return h
}

// countingListener counts accepted TCP connections: one per channel the bot opens.
type countingListener struct {
	net.Listener
	accepted atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

func startServer(t *testing.T, script func(n int, c *srvConn) error) (addr string, f *fakeServer) {
	t.Helper()
	addr, f, _, _ = startServerAt(t, "127.0.0.1:0", &fakeServer{script: script})
	return addr, f
}

// startServerAt serves f on addr ("127.0.0.1:0" for a free port); stop closes the listener and
// every connection, as a server going down does.
func startServerAt(t *testing.T, addr string, f *fakeServer) (string, *fakeServer, *countingListener, func()) {
	t.Helper()
	inner, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	lis := &countingListener{Listener: inner}
	s := grpc.NewServer()
	unov1.RegisterBotServiceServer(s, f)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String(), f, lis, s.Stop
}

// syncBuffer collects log output for assertions.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

type running struct {
	bot  *bot
	logs *syncBuffer
	stop func() error  // cancels Run and returns its error
	done chan struct{} // closed when Run returns (err is then set)
	err  error
}

// startBot runs the SDK against addr (fast backoff unless cfg sets one).
func startBot(t *testing.T, addr string, cfg Config) *running {
	t.Helper()
	cfg.Addr, cfg.Token = addr, testToken
	if cfg.Name == "" {
		cfg.Name = "tester"
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff, cfg.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
	}
	logs := &syncBuffer{}
	var out io.Writer = logs
	if testing.Verbose() {
		out = io.MultiWriter(logs, os.Stderr)
	}
	var h slog.Handler = slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug})
	if cfg.Logger != nil { // the test's own handler sees every record first
		h = teeHandler{cfg.Logger.Handler(), h}
	}
	cfg.Logger = slog.New(h)
	b, err := newBot(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{bot: b, logs: logs, done: make(chan struct{})}
	go func() {
		r.err = b.run(ctx)
		close(r.done)
	}()
	r.stop = func() error {
		cancel()
		select {
		case <-r.done:
			return r.err
		case <-time.After(patience):
			return errors.New("Run did not return after cancel")
		}
	}
	t.Cleanup(func() { _ = r.stop() })
	return r
}

func (r *running) pendingCount() int {
	r.bot.mu.Lock()
	defer r.bot.mu.Unlock()
	return len(r.bot.pending)
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

// optional makes r an optional request as the hardened protocol sends it: no deadline, no
// default_action_id.
func optional(r *unov1.DecisionRequest, prompt unov1.Prompt) *unov1.DecisionRequest {
	r.Prompt, r.Required, r.DefaultActionId, r.TimeLeftMs = prompt, false, nil, 0
	return r
}

func closedMsg(id, match string, seat int32, reason unov1.CloseReason) *unov1.PlayResponse {
	return &unov1.PlayResponse{Kind: &unov1.PlayResponse_RequestClosed{RequestClosed: &unov1.RequestClosed{
		RequestId: id, MatchId: match, Seat: seat, Reason: reason}}}
}

func rejected(id string, action int32, open bool) *unov1.PlayResponse {
	return &unov1.PlayResponse{Kind: &unov1.PlayResponse_ActionResult{ActionResult: &unov1.ActionResult{
		RequestId: id, MatchId: "m1", ActionId: proto.Int32(action), Code: int32(codes.FailedPrecondition),
		Reason: unov1.ErrorReason_ERROR_REASON_ILLEGAL_ACTION, Message: "no", RequestOpen: open}}}
}

func matchStarted(match string, seat int32) *unov1.PlayResponse {
	return &unov1.PlayResponse{Kind: &unov1.PlayResponse_MatchStarted{MatchStarted: &unov1.MatchStarted{MatchId: match, Seat: seat}}}
}

func matchEnded(match string, seat int32) *unov1.PlayResponse {
	return &unov1.PlayResponse{Kind: &unov1.PlayResponse_MatchEnded{MatchEnded: &unov1.MatchEnded{
		MatchId: match, Seat: seat, Cause: unov1.EndCause_END_CAUSE_COMPLETED}}}
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

// batchOf packs messages into one ResponseBatch, as the server does for a bot whose
// Hello.max_batch is 2 or more.
func batchOf(msgs ...*unov1.PlayResponse) *unov1.PlayResponse {
	return &unov1.PlayResponse{Kind: &unov1.PlayResponse_Batch{Batch: &unov1.ResponseBatch{Messages: msgs}}}
}

// lastLegal is a decide function that plays the highest legal id (a play when there is one).
func lastLegal(_ context.Context, d *Decision) (int32, error) {
	l := d.Legal()
	return l[len(l)-1].GetId(), nil
}

// ---------------------------------------------------------------------------- tests

// waitFor polls cond until it holds; it reports an error (usable off the test goroutine) if it
// does not within timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	timeout = max(timeout, patience) // it must happen: only a failing test waits this long
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Errorf("timed out waiting for %s", what)
}

func TestHelloTokenLegalAnswerAndMatchState(t *testing.T) {
	ended := make(chan *Match, 1)
	serverDone := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		defer close(serverDone)
		h := c.hello(t, "s1")
		if h.GetBotName() != "tester" || h.GetProtocolVersion() != 1 || h.GetResume() != nil || h.GetBotVersion() != SDKTag ||
			h.GetMaxBatch() != DefaultMaxBatch {
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
		c.send(t, &unov1.PlayResponse{Kind: &unov1.PlayResponse_MatchEnded{MatchEnded: &unov1.MatchEnded{
			MatchId: "m1", Seat: 2, Won: true, Cause: unov1.EndCause_END_CAUSE_COMPLETED}}})
		// A clean stop half-closes the stream: the server sees EOF.
		select {
		case err := <-c.recvErr:
			if err != io.EOF {
				t.Errorf("server Recv after the bot stopped: %v, want EOF", err)
			}
		case <-time.After(patience):
			t.Error("the bot did not half-close the stream")
		}
		return nil
	})
	r := startBot(t, addr, Config{
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
	case <-time.After(patience):
		t.Fatal("OnMatchEnded not called")
	}
	if err := r.stop(); err != nil {
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
	r := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
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
	case <-time.After(patience):
		t.Fatal("server script did not finish")
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestTwoSeatsOfOneMatchKeepSeparateState(t *testing.T) {
	done := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		c.send(t, matchStarted("m1", 0))
		c.send(t, matchStarted("m1", 2))
		for i, seat := range []int32{0, 2, 0, 2, 0} {
			c.send(t, decisionMsg(request(fmt.Sprint("r", i), "m1", seat, 2000, draw)))
			c.recvAction(t, 3*time.Second) // accepted: no reply
		}
		close(done)
		<-c.recvErr
		return nil
	})
	var mu sync.Mutex
	counts := map[int32][]int{}
	objects := map[int32]*Match{}
	r := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		n, _ := d.Match.Data["n"].(int)
		d.Match.Data["n"] = n + 1
		mu.Lock()
		counts[d.Match.Seat] = append(counts[d.Match.Seat], n+1)
		objects[d.Match.Seat] = d.Match
		mu.Unlock()
		return lastLegal(ctx, d)
	}})
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatal("server script did not finish")
	}
	_ = r.stop()
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(counts[0]) != "[1 2 3]" || fmt.Sprint(counts[2]) != "[1 2]" || objects[0] == objects[2] {
		t.Errorf("per-seat counters %v, want seat 0 [1 2 3] and seat 2 [1 2] on two Match objects", counts)
	}
}

func TestReconnectResumesSessionOnANewConnection(t *testing.T) {
	seen := make(chan []int64, 4)
	done := make(chan struct{})
	f := &fakeServer{}
	f.script = func(n int, c *srvConn) error {
		switch n {
		case 1:
			c.hello(t, "s1")
			c.send(t, decisionMsg(withEvents(request("r1", "m1", 0, 2000, draw, play(7, false)), 1, 2, 3)))
			c.recvAction(t, 3*time.Second)
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
			close(done)
			<-c.recvErr
			return nil
		}
		t.Errorf("unexpected connection %d", n)
		return nil
	}
	addr, _, lis, _ := startServerAt(t, "127.0.0.1:0", f)
	r := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
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
	case <-time.After(patience):
		t.Fatal("no reconnect")
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if got := f.conns.Load(); got != 2 {
		t.Errorf("streams = %d, want 2", got)
	}
	// The server kept the first TCP connection open; a reused channel would have put the second
	// stream on it.
	if got := lis.accepted.Load(); got != 2 {
		t.Errorf("TCP connections = %d, want 2 (a new channel for every reconnect)", got)
	}
	first, second := <-seen, <-seen
	if len(first) != 4 || len(second) != 2 || second[0] != 4 || second[1] != 2 {
		t.Errorf("events seen %v then %v; want 1,2,3 then only 4 (with match data kept: count 2)", first, second)
	}
}

// The TypeScript SDK once took 6.7 s to come back after a 2 s outage because it reused a channel
// whose own backoff had grown: its attempts failed at once, on the channel's cached error, until
// gRPC's backoff let the channel dial again. Every SDK attempt must dial afresh, so the first
// attempt made after the server is back connects and play resumes. The test asserts that order,
// not a duration: the SDK's run loop is held inside its "reconnecting" log line (after a refused
// attempt, before the next one) while the server comes back.
func TestBackWithinTheBackoffCapAfterAnOutage(t *testing.T) {
	welcomed := make(chan int, 4)
	resumed := make(chan *unov1.Action, 1)
	first := func(n int, c *srvConn) error {
		c.hello(t, "s1")
		welcomed <- 1
		<-c.recvErr
		return nil
	}
	addr, _, _, stopFirst := startServerAt(t, "127.0.0.1:0", &fakeServer{script: first})
	gate := newLogGate(func(msg string) bool {
		return strings.HasPrefix(msg, "reconnecting: connection refused")
	}, 3)
	t.Cleanup(gate.release)
	r := startBot(t, addr, Config{Logger: slog.New(gate), Decide: lastLegal})
	select {
	case <-welcomed:
	case <-time.After(patience):
		t.Fatal("no first connection")
	}
	stopFirst() // the outage: every attempt is refused
	select {
	case <-gate.held: // the third refused attempt is logged; the SDK waits in the log call
	case <-time.After(patience):
		t.Fatalf("no three refused attempts during the outage; logs:\n%s", r.logs.String())
	}
	_, _, lis, _ := startServerAt(t, addr, &fakeServer{script: func(n int, c *srvConn) error {
		c.hello(t, "s2")
		welcomed <- 2
		c.send(t, decisionMsg(request("r1", "m1", 0, 0, draw, play(7, false))))
		resumed <- c.recvAction(t, patience)
		<-c.recvErr
		return nil
	}})
	back := gate.count() // log lines so far; everything after is what the SDK did once the server was back
	gate.release()
	select {
	case <-welcomed:
	case <-time.After(patience):
		t.Fatalf("the bot did not come back; logs:\n%s", r.logs.String())
	}
	select {
	case a := <-resumed:
		if a.GetRequestId() != "r1" || a.GetActionId() != 1070 {
			t.Errorf("first answer after the outage = %v, want r1/1070", a)
		}
	case <-time.After(patience):
		t.Fatal("no answer after the reconnect")
	}
	// Order: the first thing the SDK logged after the server was back is "connected": not one
	// more failed attempt (a reused channel fails at once, on its cached error, until gRPC's own
	// backoff of 1 s and more lets it dial again).
	var after []string
	for _, m := range gate.messages()[back:] {
		if m == "connected" || strings.HasPrefix(m, "reconnecting") {
			after = append(after, m)
		}
	}
	if len(after) == 0 || after[0] != "connected" {
		t.Errorf("after the server came back the SDK logged %q; want \"connected\" first (its next attempt dials afresh)", after)
	}
	if got := lis.accepted.Load(); got != 1 {
		t.Errorf("TCP connections to the returned server = %d, want 1 (the first attempt connects)", got)
	}
	if !strings.Contains(r.logs.String(), "connection refused ("+addr+")") {
		t.Errorf("logs do not say %q:\n%s", "connection refused ("+addr+")", r.logs.String())
	}
}

// logGate is an slog.Handler that records every record in order and, at the nth message that
// matches (if match is set), holds the logging goroutine until release is called: a test uses it to stop the SDK at
// a point it has observed (startBot also writes every record to the running bot's logs).
type logGate struct {
	match func(msg string) bool
	n     int
	held  chan struct{} // closed when the goroutine logging the nth match is held
	open  chan struct{} // closed by release
	once  sync.Once

	mu   sync.Mutex
	recs []slog.Record
	hits int
}

func newLogGate(match func(msg string) bool, n int) *logGate {
	return &logGate{match: match, n: n, held: make(chan struct{}), open: make(chan struct{})}
}

func (g *logGate) release() { g.once.Do(func() { close(g.open) }) }

func (g *logGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.recs)
}

func (g *logGate) messages() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	msgs := make([]string, len(g.recs))
	for i, r := range g.recs {
		msgs[i] = r.Message
	}
	return msgs
}

// records returns the records logged so far, in order.
func (g *logGate) records() []slog.Record {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]slog.Record(nil), g.recs...)
}

func (g *logGate) Enabled(context.Context, slog.Level) bool { return true }
func (g *logGate) WithAttrs([]slog.Attr) slog.Handler       { return g }
func (g *logGate) WithGroup(string) slog.Handler            { return g }

func (g *logGate) Handle(_ context.Context, r slog.Record) error {
	g.mu.Lock()
	g.recs = append(g.recs, r.Clone())
	hold := false
	if g.match != nil && g.match(r.Message) {
		g.hits++
		hold = g.hits == g.n
	}
	g.mu.Unlock()
	if hold {
		close(g.held)
		<-g.open
	}
	return nil
}

// teeHandler sends every record to both handlers.
type teeHandler struct{ a, b slog.Handler }

func (h teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.a.Enabled(ctx, l) || h.b.Enabled(ctx, l)
}

func (h teeHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.a.Enabled(ctx, r.Level) {
		_ = h.a.Handle(ctx, r.Clone())
	}
	if h.b.Enabled(ctx, r.Level) {
		return h.b.Handle(ctx, r)
	}
	return nil
}

func (h teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{h.a.WithAttrs(as), h.b.WithAttrs(as)}
}

func (h teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{h.a.WithGroup(name), h.b.WithGroup(name)}
}

func TestBudgetIsTimeLeftMinusMargin(t *testing.T) {
	b := &bot{cfg: Config{SafetyMargin: 100 * time.Millisecond}}
	t0 := time.Now()
	for _, c := range []struct {
		required bool
		left     int32
		want     time.Duration // -1: no timer
	}{
		{true, 1000, 900 * time.Millisecond},
		{true, 201, 101 * time.Millisecond},
		{true, 150, 75 * time.Millisecond}, // margin = min(100 ms, time_left/2)
		{true, 10, 5 * time.Millisecond},
		{true, 0, -1},    // no deadline
		{false, 500, -1}, // optional requests are never timed by the SDK
		{false, 0, -1},
	} {
		req := &unov1.DecisionRequest{Required: c.required, TimeLeftMs: c.left}
		got := b.budget(req, t0)
		if c.want < 0 && !got.IsZero() || c.want >= 0 && got.Sub(t0) != c.want {
			t.Errorf("budget(required=%v, time_left=%d) = %v, want %v", c.required, c.left, got.Sub(t0), c.want)
		}
	}
}

func TestDeadlineFallsBackToDefault(t *testing.T) {
	done := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		start := time.Now()
		c.send(t, decisionMsg(request("r1", "m1", 0, 1000, draw, play(7, false))))
		a := c.recvAction(t, 3*time.Second)
		// Never before the budget (time_left 1000ms - 100ms margin): the clock starts when the
		// bot receives the request, after start. The decide waits for its ctx: only the
		// SDK's timer can end it.
		if el := time.Since(start); el < 900*time.Millisecond {
			t.Errorf("fallback arrived after %v, before the 900ms budget (time_left 1000ms - 100ms margin)", el)
		}
		if a.GetActionId() != 0 {
			t.Errorf("fallback = %d, want the default 0", a.GetActionId())
		}
		close(done)
		<-c.recvErr
		return nil
	})
	r := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		<-ctx.Done() // too slow
		return 1070, nil
	}})
	<-done
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
}

// A decide that ignores its ctx and overruns: the fallback goes out on time, and neither the
// stream, nor other seats, nor the same seat's next request and match end wait for it. The
// overrunning decide blocks until the test releases it, after all of that has been seen, so
// "while it was still running" is an order the test controls, not a race against a sleep.
func TestOverrunningDecideHoldsNothingUp(t *testing.T) {
	ended := make(chan struct{}, 1)
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseIt := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(releaseIt) // a failing test must not leave the decide blocked
	var overrunning atomic.Bool
	done := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		c.send(t, matchStarted("m1", 0))
		start := time.Now()
		c.send(t, decisionMsg(request("r1", "m1", 0, 400, draw, play(7, false))))    // overruns
		c.send(t, decisionMsg(request("o1", "m2", 1, 60000, draw, play(23, false)))) // another seat
		// Bounds by causality, not by a quiet machine: the overrunning decide is still blocked
		// (the test has not released it) when the other answers arrive; the fallback never comes
		// before the budget.
		got := map[string]*unov1.Action{}
		for range 2 {
			a := c.recvAction(t, patience)
			got[a.GetRequestId()] = a
			if a.GetRequestId() == "r1" && time.Since(start) < 300*time.Millisecond {
				t.Errorf("overrun seat: fallback after %v, before its 300ms budget", time.Since(start))
			}
		}
		if a := got["o1"]; a.GetActionId() != 1230 {
			t.Errorf("other seat: %v, want o1/1230", a)
		}
		if a := got["r1"]; a.GetActionId() != 0 {
			t.Errorf("overrun seat: %v, want the fallback r1/0", a)
		}
		c.send(t, decisionMsg(request("r2", "m1", 0, 60000, draw, play(7, false)))) // same seat again
		if a := c.recvAction(t, patience); a.GetRequestId() != "r2" || a.GetActionId() != 1070 {
			t.Errorf("same seat's next request: %v, want r2/1070 decided while r1's decide still runs", a)
		}
		c.send(t, matchEnded("m1", 0))
		close(done)
		<-c.recvErr
		return nil
	})
	r := startBot(t, addr, Config{
		Decide: func(ctx context.Context, d *Decision) (int32, error) {
			if d.Request.GetRequestId() == "r1" {
				overrunning.Store(true)
				<-release // ignores ctx
				overrunning.Store(false)
			}
			return lastLegal(ctx, d)
		},
		OnMatchEnded: func(m *Match, _ *unov1.MatchEnded) { ended <- struct{}{} },
	})
	<-done
	select {
	case <-ended:
	case <-time.After(patience):
		t.Fatal("OnMatchEnded not called while the overrunning decide runs")
	}
	if !overrunning.Load() {
		t.Error("r1's decide is not running: the answers above did not come while it overran")
	}
	releaseIt()
	waitFor(t, "the late result to be logged", patience, func() bool {
		return strings.Contains(r.logs.String(), "dropped the late result of decide")
	})
	if n := strings.Count(r.logs.String(), "dropped the late result of decide"); n != 1 {
		t.Errorf("late result logged %d times, want once", n)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestOptionalRequestsAreNotTimedAndSilenceIsTheFallback(t *testing.T) {
	gotCause := make(chan error, 1)
	o3Started := make(chan struct{})
	done := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		// o1: no deadline; decide takes 300 ms and its answer is sent.
		c.send(t, decisionMsg(optional(request("o1", "m1", 0, 0, noCatch, catchOne), unov1.Prompt_PROMPT_UNO_WINDOW)))
		if a := c.recvAction(t, 2*time.Second); a.GetRequestId() != "o1" || a.GetActionId() != 11 {
			t.Errorf("o1: %v, want the late-but-open answer o1/11", a)
		}
		// o2: as today's server sends it (a window deadline of 200 ms): still no SDK timer.
		o2 := optional(request("o2", "m2", 0, 0, noCatch, catchOne), unov1.Prompt_PROMPT_UNO_WINDOW)
		o2.TimeLeftMs = 200
		c.send(t, decisionMsg(o2))
		if a := c.recvAction(t, 2*time.Second); a.GetRequestId() != "o2" || a.GetActionId() != 11 {
			t.Errorf("o2: %v, want o2/11", a)
		}
		// o3 hangs until the server closes it, o4 is skipped, o5 panics, o6 returns an illegal
		// id: silence for all four.
		c.send(t, decisionMsg(optional(request("o3", "m3", 0, 0, noCatch, catchOne), unov1.Prompt_PROMPT_LATE_UNO)))
		for _, id := range []string{"o4", "o5", "o6"} {
			c.send(t, decisionMsg(optional(request(id, "m"+id, 0, 0, noCatch, catchOne), unov1.Prompt_PROMPT_JUMP_IN)))
		}
		<-o3Started // closed while its decide runs (not before it starts: then it never would)
		c.send(t, closedMsg("o3", "m3", 0, unov1.CloseReason_CLOSE_REASON_EXPIRED))
		if msg := c.recv(t, 400*time.Millisecond); msg != nil {
			t.Errorf("got %v, want silence", msg)
		}
		c.send(t, decisionMsg(request("r1", "m1", 0, 60000, draw, play(7, false))))
		if a := c.recvAction(t, 2*time.Second); a.GetRequestId() != "r1" {
			t.Errorf("got %v, want an answer to r1", a)
		}
		close(done)
		<-c.recvErr
		return nil
	})
	r := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		if !d.Required() {
			if _, has := ctx.Deadline(); has || !d.Deadline.IsZero() {
				t.Errorf("%s: optional request with an SDK deadline", d.Request.GetRequestId())
			}
		}
		switch d.Request.GetRequestId() {
		case "o1", "o2":
			time.Sleep(300 * time.Millisecond)
			return 11, nil
		case "o3":
			close(o3Started)
			<-ctx.Done()
			gotCause <- context.Cause(ctx)
			return 11, nil
		case "o4":
			return 0, ErrSkip
		case "o5":
			panic("boom")
		case "o6":
			return 4242, nil
		}
		return lastLegal(ctx, d)
	}})
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatal("server script did not finish")
	}
	if err := <-gotCause; !errors.Is(err, errRequestClosed) {
		t.Errorf("o3's ctx cause = %v, want the request closed", err)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	logs := r.logs.String()
	for _, want := range []string{"decide failed", "decide panicked: boom", "request=o5", "not legal", "request=o6"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q", want)
		}
	}
}

func TestRequiredFallbackAfterErrorPanicOrIllegalID(t *testing.T) {
	done := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		for _, id := range []string{"illegal", "panic", "error", "skip"} {
			req := request(id, "m1", 0, 2000, draw, play(7, false))
			req.DefaultActionId = proto.Int32(1070)
			c.send(t, decisionMsg(req))
			if a := c.recvAction(t, time.Second); a.GetRequestId() != id || a.GetActionId() != 1070 {
				t.Errorf("%s: %v, want the default 1070", id, a)
			}
		}
		// No default_action_id: the first legal id.
		req := request("nodefault", "m1", 0, 2000, play(7, false), play(23, false))
		req.DefaultActionId = nil
		c.send(t, decisionMsg(req))
		if a := c.recvAction(t, time.Second); a.GetActionId() != 1070 {
			t.Errorf("nodefault: %v, want the first legal id 1070", a)
		}
		close(done)
		<-c.recvErr
		return nil
	})
	r := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		switch d.Request.GetRequestId() {
		case "illegal":
			return 4242, nil
		case "panic":
			panic("boom")
		case "skip":
			return 0, ErrSkip
		}
		return 0, errors.New("no idea")
	}})
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatal("server script did not finish")
	}
	_ = r.stop()
	for _, want := range []string{"request=illegal", "not legal", "decide panicked: boom", "no idea", "skipped a required request"} {
		if !strings.Contains(r.logs.String(), want) {
			t.Errorf("logs lack %q", want)
		}
	}
}

func TestRejectedAnswerIsRetriedExactlyOnce(t *testing.T) {
	done := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		// r1: decide's 1070 rejected -> one retry with the default 0; rejected again -> nothing.
		c.send(t, decisionMsg(request("r1", "m1", 0, 3000, draw, play(7, false))))
		if a := c.recvAction(t, time.Second); a.GetActionId() != 1070 {
			t.Errorf("r1 first answer %v", a)
		}
		c.send(t, rejected("r1", 1070, true))
		if a := c.recvAction(t, time.Second); a.GetRequestId() != "r1" || a.GetActionId() != 0 {
			t.Errorf("r1 retry %v, want r1/0 (the fallback)", a)
		}
		c.send(t, rejected("r1", 0, true))
		if msg := c.recv(t, 300*time.Millisecond); msg != nil {
			t.Errorf("r1 answered a third time: %v", msg)
		}
		// r2: the rejected answer was the fallback itself -> the retry is another legal id.
		r2 := request("r2", "m1", 0, 3000, draw, play(7, false))
		r2.DefaultActionId = proto.Int32(1070)
		c.send(t, decisionMsg(r2))
		if a := c.recvAction(t, time.Second); a.GetActionId() != 1070 {
			t.Errorf("r2 first answer %v", a)
		}
		c.send(t, rejected("r2", 1070, true))
		if a := c.recvAction(t, time.Second); a.GetRequestId() != "r2" || a.GetActionId() != 0 {
			t.Errorf("r2 retry %v, want r2/0", a)
		}
		// r3: rejected with the request closed -> no retry; o1: optional -> no retry.
		c.send(t, decisionMsg(request("r3", "m2", 0, 3000, draw, play(7, false))))
		c.recvAction(t, time.Second)
		c.send(t, rejected("r3", 1070, false))
		c.send(t, decisionMsg(optional(request("o1", "m3", 0, 0, noCatch, catchOne), unov1.Prompt_PROMPT_UNO_WINDOW)))
		if a := c.recvAction(t, time.Second); a.GetRequestId() != "o1" {
			t.Errorf("o1 answer %v", a)
		}
		c.send(t, rejected("o1", 11, true))
		if msg := c.recv(t, 300*time.Millisecond); msg != nil {
			t.Errorf("retried after a closed or optional rejection: %v", msg)
		}
		close(done)
		<-c.recvErr
		return nil
	})
	r := startBot(t, addr, Config{Decide: lastLegal})
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatal("server script did not finish")
	}
	_ = r.stop()
	if !strings.Contains(r.logs.String(), "message=no") || !strings.Contains(r.logs.String(), "reason=ERROR_REASON_ILLEGAL_ACTION") {
		t.Errorf("the rejection's reason and message are not logged:\n%s", r.logs.String())
	}
}

// The server sends no ActionResult for an accepted answer (issue 11): nothing waits for one, and
// nothing piles up: the SDK keeps at most the seat's latest request.
func TestNoActionResultNeededToProgress(t *testing.T) {
	var rp atomic.Pointer[running]
	done := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		for i := range 5 {
			c.send(t, decisionMsg(request(fmt.Sprint("r", i), "m1", 0, 2000, draw, play(7, false))))
			if a := c.recvAction(t, time.Second); a.GetRequestId() != fmt.Sprint("r", i) || a.GetActionId() != 1070 {
				t.Errorf("answer %d: %v", i, a)
			}
		}
		waitFor(t, "startBot to return", time.Second, func() bool { return rp.Load() != nil })
		r := rp.Load()
		waitFor(t, "old requests to be forgotten", time.Second, func() bool { return r.pendingCount() <= 1 })
		c.send(t, matchEnded("m1", 0))
		waitFor(t, "the last request to be forgotten at the match end", time.Second, func() bool { return r.pendingCount() == 0 })
		close(done)
		<-c.recvErr
		return nil
	})
	// The server script starts when the bot connects, after startBot returned.
	rp.Store(startBot(t, addr, Config{Decide: lastLegal}))
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatal("server script did not finish")
	}
}

func TestRequestClosedCancelsDecide(t *testing.T) {
	cancelled := make(chan error, 1)
	started, done := make(chan struct{}), make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		c.send(t, decisionMsg(request("r1", "m1", 0, 60000, draw, play(7, false))))
		<-started // closed while its decide runs
		c.send(t, closedMsg("r1", "m1", 0, unov1.CloseReason_CLOSE_REASON_SUPERSEDED))
		if msg := c.recv(t, 400*time.Millisecond); msg != nil {
			t.Errorf("closed request got an answer %v", msg)
		}
		close(done)
		<-c.recvErr
		return nil
	})
	r := startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		close(started)
		<-ctx.Done()
		cancelled <- context.Cause(ctx)
		return 0, ctx.Err()
	}})
	select {
	case err := <-cancelled:
		if !errors.Is(err, errRequestClosed) {
			t.Errorf("cause %v", err)
		}
	case <-time.After(patience):
		t.Fatal("decide not cancelled")
	}
	<-done
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestFatalCodesStopAndOthersReconnect(t *testing.T) {
	fatal := []codes.Code{codes.Unauthenticated, codes.PermissionDenied, codes.FailedPrecondition,
		codes.InvalidArgument, codes.Unimplemented, codes.Aborted}
	for _, code := range fatal {
		t.Run("fatal/"+codeName(code), func(t *testing.T) {
			addr, f := startServer(t, func(n int, c *srvConn) error { return status.Error(code, "go away") })
			r := startBot(t, addr, Config{Decide: lastLegal})
			select {
			case <-r.done:
				err := r.err
				var fe *FatalError
				if !errors.As(err, &fe) || status.Code(fe.Err) != code {
					t.Fatalf("Run = %v, want a FatalError with %v", err, code)
				}
				if want := "server closed the stream: " + codeName(code) + " (go away)"; !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			case <-time.After(patience):
				t.Fatal("Run did not stop")
			}
			if f.conns.Load() != 1 {
				t.Errorf("streams = %d, want 1 (no retry)", f.conns.Load())
			}
		})
	}
	others := map[string]func() error{
		"UNAVAILABLE":        func() error { return status.Error(codes.Unavailable, "x") },
		"RESOURCE_EXHAUSTED": func() error { return status.Error(codes.ResourceExhausted, "x") },
		"INTERNAL":           func() error { return status.Error(codes.Internal, "x") },
		"UNKNOWN":            func() error { return status.Error(codes.Unknown, "x") },
		"CANCELLED":          func() error { return status.Error(codes.Canceled, "x") },
		"DEADLINE_EXCEEDED":  func() error { return status.Error(codes.DeadlineExceeded, "x") },
		"clean end":          func() error { return nil },
	}
	for name, end := range others {
		t.Run("reconnects/"+name, func(t *testing.T) {
			again := make(chan struct{})
			addr, _ := startServer(t, func(n int, c *srvConn) error {
				if n == 1 {
					c.hello(t, "s1")
					return end()
				}
				if n == 2 {
					close(again)
				}
				<-c.recvErr
				return nil
			})
			r := startBot(t, addr, Config{Decide: lastLegal})
			select {
			case <-again:
			case <-r.done:
				t.Fatalf("Run returned %v", r.err)
			case <-time.After(patience):
				t.Fatal("no reconnect")
			}
		})
	}
}

// The backoff starts over from MinBackoff once a stream is welcomed, however it ends. What the SDK
// waits is read from its "reconnecting" log lines (attempt number and delay, in order), and every
// actual gap is checked against the delay logged before it by causality (never shorter): no
// bound here depends on how busy the machine is.
func TestBackoffResetsAfterWelcome(t *testing.T) {
	var mu sync.Mutex
	var starts, ends []time.Time
	finished := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		defer func() {
			mu.Lock()
			ends = append(ends, time.Now())
			mu.Unlock()
		}()
		switch {
		case n <= 5: // refused before Welcome: the backoff grows to its cap
			return status.Error(codes.Unavailable, "not yet")
		case n == 6: // welcomed, then ends with an error
			c.hello(t, "s1")
			return status.Error(codes.Unavailable, "restarting")
		case n <= 9: // refused again: the backoff starts over from the minimum
			return status.Error(codes.Unavailable, "not yet")
		case n == 10: // welcomed, then ends cleanly
			c.hello(t, "s1")
			return nil
		default:
			if n == 11 {
				close(finished)
			}
			<-c.recvErr
			return nil
		}
	})
	minB, maxB := 20*time.Millisecond, 320*time.Millisecond
	rec := newLogGate(nil, 0)
	startBot(t, addr, Config{MinBackoff: minB, MaxBackoff: maxB, Decide: lastLegal, Logger: slog.New(rec)})
	select {
	case <-finished:
	case <-time.After(patience):
		t.Fatal("too few reconnects")
	}
	type step struct {
		attempt int64
		delay   time.Duration
	}
	var got []step
	for _, r := range rec.records() {
		if !strings.HasPrefix(r.Message, "reconnecting") {
			continue
		}
		var s step
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "attempt":
				s.attempt = a.Value.Int64()
			case "delay":
				s.delay = a.Value.Duration()
			}
			return true
		})
		got = append(got, s)
	}
	// Streams 1-5 refused (the delay doubles to the cap, 16 x 20 ms = 320 ms), 6 welcomed (back to
	// attempt 1), 7-9 refused, 10 welcomed (attempt 1 again). Without the reset, the attempts
	// would go on 6, 7, ... at the cap.
	wantAttempt := []int64{1, 2, 3, 4, 5, 1, 2, 3, 4, 1}
	if len(got) != len(wantAttempt) {
		t.Fatalf("reconnect log lines %v, want %d (one after each of streams 1-10)", got, len(wantAttempt))
	}
	for i, s := range got {
		base := min(minB<<(wantAttempt[i]-1), maxB)
		if s.attempt != wantAttempt[i] || s.delay < base*8/10-time.Millisecond || s.delay > base*12/10+time.Millisecond {
			t.Errorf("after stream %d: attempt %d delay %v, want attempt %d delay %v +-20%%", i+1, s.attempt, s.delay, wantAttempt[i], base)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Causality: the delay starts after the stream ended, so the next stream never starts sooner.
	for n := 1; n <= 10; n++ {
		if g := starts[n].Sub(ends[n-1]); g < got[n-1].delay-time.Millisecond {
			t.Errorf("stream %d began %v after stream %d ended, before the logged delay %v", n+1, g, n, got[n-1].delay)
		}
	}
}

func TestBackoffScheduleAndJitter(t *testing.T) {
	b := &bot{cfg: Config{}}
	b.cfg.setDefaults()
	for n := range 20 {
		base := min(100*time.Millisecond<<min(n, 10), 2*time.Second)
		lo, hi := base, base
		for range 200 {
			d := b.backoff(n)
			if d < base*8/10 || d > base*12/10 {
				t.Fatalf("backoff(%d) = %v, want %v +-20%%", n, d, base)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		if hi-lo < base/10 {
			t.Errorf("backoff(%d) has no jitter: %v..%v", n, lo, hi)
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

func TestMalformedAddressIsRefusedBeforeConnecting(t *testing.T) {
	// Run would retry forever if it tried to connect: returning at all shows it did not.
	ret := make(chan error, 1)
	go func() { ret <- Run(context.Background(), Config{Addr: "localhost", Token: "t", Decide: lastLegal}) }()
	var err error
	select {
	case err = <-ret:
	case <-time.After(patience):
		t.Fatal("Run did not return: it tried to connect to a malformed address")
	}
	var ae *AddressError
	if !errors.As(err, &ae) {
		t.Fatalf("Run = %v, want an AddressError", err)
	}
	want := `invalid address "localhost" (no port): use HOST:PORT, http://HOST:PORT or https://HOST:PORT`
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	err = Run(context.Background(), Config{Addr: "http://127.0.0.1:1", TLS: &tls.Config{}, Token: "t", Decide: lastLegal})
	if !errors.As(err, &ae) {
		t.Errorf("http:// with Config.TLS: %v, want an AddressError", err)
	}
}
