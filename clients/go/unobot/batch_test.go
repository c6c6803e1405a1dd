package unobot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
)

// Batching (issue 11): Hello.max_batch, ResponseBatch in, ActionBatch out.

func TestHelloMaxBatch(t *testing.T) {
	for _, c := range []struct {
		cfg  int32
		want uint32
	}{{0, DefaultMaxBatch}, {NoBatching, 0}, {-5, 0}, {1, 1}, {7, 7}, {MaxHelloBatch, MaxHelloBatch}} {
		b, err := newBot(Config{Addr: "127.0.0.1:1", Decide: lastLegal, MaxBatch: c.cfg})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.hello().GetMaxBatch(); got != c.want {
			t.Errorf("Config.MaxBatch %d: Hello.max_batch = %d, want %d", c.cfg, got, c.want)
		}
	}
	_, err := newBot(Config{Addr: "127.0.0.1:1", Decide: lastLegal, MaxBatch: MaxHelloBatch + 1})
	if err == nil || !strings.Contains(err.Error(), "MaxBatch") {
		t.Errorf("MaxBatch %d: %v, want an error naming MaxBatch", MaxHelloBatch+1, err)
	}
}

// Every message of a ResponseBatch is handled exactly as if it had come alone, in order: the
// matches start before their seats decide, a request closed later in the same batch is not
// answered, and the seats' matches end.
func TestResponseBatchIsHandledInOrder(t *testing.T) {
	ended := make(chan int32, 2)
	done := make(chan struct{})
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		if h := c.hello(t, "s1"); h.GetMaxBatch() != DefaultMaxBatch {
			t.Errorf("Hello.max_batch = %d, want %d", h.GetMaxBatch(), DefaultMaxBatch)
		}
		c.send(t, batchOf(
			matchStarted("m1", 0),
			matchStarted("m1", 1),
			decisionMsg(withEvents(request("r1", "m1", 0, 2000, draw, play(7, false)), 1, 2)),
			decisionMsg(withEvents(request("r2", "m1", 1, 2000, draw, play(23, false)), 1, 2)),
		))
		got := map[string]int32{}
		for range 2 {
			a := c.recvAction(t, 3*time.Second)
			got[a.GetRequestId()] = a.GetActionId()
		}
		if got["r1"] != 1070 || got["r2"] != 1230 {
			t.Errorf("answers %v, want r1:1070 and r2:1230", got)
		}
		// r3 is closed by the next message of the same batch: only r4 gets an answer.
		c.send(t, batchOf(
			decisionMsg(request("r3", "m1", 0, 2000, draw, play(7, false))),
			closedMsg("r3", "m1", 0, unov1.CloseReason_CLOSE_REASON_SUPERSEDED),
			decisionMsg(request("r4", "m1", 0, 2000, draw, play(7, false))),
		))
		if a := c.recvAction(t, 3*time.Second); a.GetRequestId() != "r4" {
			t.Errorf("got %v, want an answer to r4 only", a)
		}
		if msg := c.recv(t, 300*time.Millisecond); msg != nil {
			t.Errorf("got %v, want nothing more (r3 was closed)", msg)
		}
		c.send(t, batchOf(matchEnded("m1", 0), matchEnded("m1", 1)))
		close(done)
		<-c.recvErr
		return nil
	})
	var mu sync.Mutex
	var seen []string
	r := startBot(t, addr, Config{
		Decide: func(ctx context.Context, d *Decision) (int32, error) {
			id := d.Request.GetRequestId()
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s started=%v events=%d", id, d.Match.Started != nil, len(d.Events)))
			mu.Unlock()
			if id == "r3" {
				<-ctx.Done() // answered only if the RequestClosed behind it is ignored
			}
			return lastLegal(ctx, d)
		},
		OnMatchEnded: func(m *Match, _ *unov1.MatchEnded) { ended <- m.Seat },
	})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("server script did not finish")
	}
	for range 2 {
		select {
		case <-ended:
		case <-time.After(patience):
			t.Fatal("OnMatchEnded not called for both seats of the last batch")
		}
	}
	_ = r.stop()
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{"r1 started=true events=2": true, "r2 started=true events=2": true, "r4 started=true events=0": true}
	for _, s := range seen {
		if s != "r3 started=true events=0" && !want[s] {
			t.Errorf("decide saw %q; want the batch's MatchStarted handled before its requests", s)
		}
		delete(want, s)
	}
	if len(want) != 0 {
		t.Errorf("decide not called for %v (saw %v)", want, seen)
	}
}

// gatedStream is a Play stream whose Send blocks while gate is closed, to hold a write in flight.
type gatedStream struct {
	unov1.BotService_PlayClient // only Send is used
	gate                        chan struct{}
	entered                     chan struct{} // receives once per Send call
	mu                          sync.Mutex
	sent                        []*unov1.PlayRequest
}

func (g *gatedStream) Send(m *unov1.PlayRequest) error {
	g.entered <- struct{}{}
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sent = append(g.sent, m)
	return nil
}

func (g *gatedStream) messages() []*unov1.PlayRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*unov1.PlayRequest(nil), g.sent...)
}

func testAction(i int) *unov1.Action {
	id := int32(i)
	return &unov1.Action{RequestId: fmt.Sprint("r", i), ActionId: &id}
}

// Answers that pile up while a write is in flight leave together, in order, in ActionBatches of
// at most 256, as soon as that write is done; nobody waits for them.
func TestAnswersThatPileUpLeaveInOneActionBatchInOrder(t *testing.T) {
	g := &gatedStream{gate: make(chan struct{}), entered: make(chan struct{}, 1024)}
	c := &conn{stream: g, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	first := make(chan struct{})
	go func() {
		c.sendAction(testAction(0))
		close(first)
	}()
	<-g.entered // answer 0 is being written
	const piled = 300
	// The first write is held until the gate opens below, so a sendAction that waited for it
	// would never return: returning at all is the check, not a time.
	piledUp := make(chan struct{})
	go func() {
		for i := 1; i <= piled; i++ {
			c.sendAction(testAction(i)) // must not wait for the write in flight
		}
		close(piledUp)
	}()
	select {
	case <-piledUp:
	case <-time.After(10 * time.Second):
		close(g.gate)
		t.Fatal("sendAction waited for another answer's write")
	}
	if n := len(g.messages()); n != 0 {
		t.Fatalf("%d messages written while the first write was held", n)
	}
	close(g.gate)
	<-first // the goroutine of the first answer sends what piled up, then returns
	msgs := g.messages()
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3: answer 0 alone, then 256 and 44 in two ActionBatches", len(msgs))
	}
	if a := msgs[0].GetAction(); a.GetRequestId() != "r0" {
		t.Errorf("first message %v, want r0 alone", msgs[0])
	}
	next := 1
	for k, want := range []int{MaxActionBatch, piled - MaxActionBatch} {
		b := msgs[k+1].GetActions().GetActions()
		if len(b) != want {
			t.Errorf("batch %d holds %d answers, want %d", k, len(b), want)
		}
		for _, a := range b {
			if a.GetRequestId() != fmt.Sprint("r", next) || a.GetActionId() != int32(next) {
				t.Fatalf("batch %d: got %s/%d where r%d/%d was due (order lost)", k, a.GetRequestId(), a.GetActionId(), next, next)
			}
			next++
		}
	}
}

// An answer with no write in flight is written before sendAction returns: never held back to
// wait for company.
func TestLoneAnswerIsSentAtOnce(t *testing.T) {
	g := &gatedStream{gate: make(chan struct{}), entered: make(chan struct{}, 16)}
	close(g.gate)
	c := &conn{stream: g, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for i := range 3 {
		c.sendAction(testAction(i))
		msgs := g.messages()
		if len(msgs) != i+1 || msgs[i].GetAction().GetRequestId() != fmt.Sprint("r", i) {
			t.Fatalf("after answer %d: %d messages written (last %v), want it written alone at once", i, len(msgs), msgs[len(msgs)-1])
		}
	}
}

// End to end: while the first answer's write is held (by a client interceptor), the answers of
// the 40 other seats pile up and reach the server in one ActionBatch.
func TestPiledUpAnswersReachTheServerInOneActionBatch(t *testing.T) {
	const others = 40
	gate, held := make(chan struct{}), make(chan struct{})
	var holdOnce sync.Once
	hold := grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn,
		method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		return &holdFirstAction{ClientStream: s, held: held, gate: gate, once: &holdOnce}, err
	})
	done := make(chan struct{})
	var rp atomic.Pointer[running]
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		var msgs []*unov1.PlayResponse
		for i := range others + 1 {
			msgs = append(msgs, decisionMsg(request(fmt.Sprint("r", i), fmt.Sprint("m", i), 0, 5000, draw, play(7, false))))
		}
		c.send(t, batchOf(msgs...))
		<-held // the first answer's write is in flight
		waitFor(t, "startBot to return", time.Second, func() bool { return rp.Load() != nil })
		waitFor(t, "every other answer to be queued", 5*time.Second, func() bool {
			return strings.Count(rp.Load().logs.String(), "msg=answered") == others
		})
		close(gate)
		got := map[string]bool{}
		for range others + 1 {
			got[c.recvAction(t, 3*time.Second).GetRequestId()] = true
		}
		if len(got) != others+1 || c.singles != 1 || fmt.Sprint(c.batches) != fmt.Sprint([]int{others}) {
			t.Errorf("%d distinct answers, %d lone Actions, batches %v; want %d answers: 1 alone, then one batch of %d",
				len(got), c.singles, c.batches, others+1, others)
		}
		close(done)
		<-c.recvErr
		return nil
	})
	rp.Store(startBot(t, addr, Config{Decide: lastLegal, DialOptions: []grpc.DialOption{hold}}))
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("server script did not finish")
	}
}

// holdFirstAction holds the first lone Action the bot sends until gate closes.
type holdFirstAction struct {
	grpc.ClientStream
	held, gate chan struct{}
	once       *sync.Once
}

func (h *holdFirstAction) SendMsg(m any) error {
	if req, ok := m.(*unov1.PlayRequest); ok && req.GetAction() != nil {
		h.once.Do(func() {
			close(h.held)
			<-h.gate
		})
	}
	return h.ClientStream.SendMsg(m)
}
