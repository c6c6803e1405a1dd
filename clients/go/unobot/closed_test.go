package unobot

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
)

// Issue 20: no answer goes out for a request the server has said is closed.

// r0's answer is held in its write (by a client interceptor) while r1's answer waits in the
// queue behind it; the server then closes r1. Once the bot has read the close, the write is let
// go: r0's answer arrives, r1's never does (the next answer is r2's).
func TestQueuedAnswerToAClosedRequestIsNeverSent(t *testing.T) {
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
		c.send(t, decisionMsg(request("r0", "m0", 0, 5000, draw, play(7, false))))
		<-held // r0's answer is being written
		c.send(t, decisionMsg(request("r1", "m1", 0, 5000, draw, play(7, false))))
		waitFor(t, "startBot to return", time.Second, func() bool { return rp.Load() != nil })
		waitFor(t, "r1's answer to be queued", 5*time.Second, func() bool {
			return strings.Contains(rp.Load().logs.String(), "msg=answered match=m1")
		})
		c.send(t, closedMsg("r1", "m1", 0, unov1.CloseReason_CLOSE_REASON_EXPIRED))
		waitFor(t, "the bot to read the close", 5*time.Second, func() bool {
			return strings.Contains(rp.Load().logs.String(), "msg=\"request closed\" match=m1")
		})
		close(gate)
		if a := c.recvAction(t, 3*time.Second); a.GetRequestId() != "r0" {
			t.Errorf("first answer %v, want r0's", a)
		}
		c.send(t, decisionMsg(request("r2", "m2", 0, 5000, draw, play(7, false))))
		if a := c.recvAction(t, 3*time.Second); a.GetRequestId() != "r2" {
			t.Errorf("answer %v after r0's, want r2's (r1 was closed while its answer was queued)", a)
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

// A decide that ignores its context returns after its request was closed: its answer is
// dropped. r1's decide has started before the close is sent; r2's decide, which the bot reads
// after the close of r1, lets r1's return.
func TestDecideThatReturnsAfterItsRequestClosedSendsNothing(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	var rp atomic.Pointer[running]
	addr, _ := startServer(t, func(n int, c *srvConn) error {
		c.hello(t, "s1")
		c.send(t, decisionMsg(request("r1", "m1", 0, 5000, draw, play(7, false))))
		<-started
		c.send(t, closedMsg("r1", "m1", 0, unov1.CloseReason_CLOSE_REASON_EXPIRED))
		c.send(t, decisionMsg(request("r2", "m2", 0, 5000, draw, play(7, false))))
		if a := c.recvAction(t, 3*time.Second); a.GetRequestId() != "r2" {
			t.Errorf("answer %v, want r2's", a)
		}
		waitFor(t, "startBot to return", time.Second, func() bool { return rp.Load() != nil })
		waitFor(t, "r1's decide to return", 5*time.Second, func() bool {
			return strings.Contains(rp.Load().logs.String(), "msg=\"dropped the late result of decide\" match=m1")
		})
		c.send(t, decisionMsg(request("r3", "m3", 0, 5000, draw, play(7, false))))
		if a := c.recvAction(t, 3*time.Second); a.GetRequestId() != "r3" {
			t.Errorf("answer %v, want r3's (r1 was closed before its decide returned)", a)
		}
		close(done)
		<-c.recvErr
		return nil
	})
	rp.Store(startBot(t, addr, Config{Decide: func(ctx context.Context, d *Decision) (int32, error) {
		if d.Request.GetRequestId() == "r1" {
			close(started)
			<-release // ignores ctx: returns only once r2 has come
		} else if d.Request.GetRequestId() == "r2" {
			close(release)
		}
		return lastLegal(ctx, d)
	}}))
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("server script did not finish")
	}
}

// dropQueued removes only the closed request's answers and keeps the others in order.
func TestDropQueuedKeepsTheOthersInOrder(t *testing.T) {
	c := &conn{}
	for i := range 5 {
		c.queued = append(c.queued, testAction(i%3))
	}
	if n := c.dropQueued("r1"); n != 2 {
		t.Errorf("dropped %d, want 2", n)
	}
	var got []string
	for _, a := range c.queued {
		got = append(got, a.GetRequestId())
	}
	if fmt.Sprint(got) != "[r0 r2 r0]" {
		t.Errorf("queue %v, want [r0 r2 r0]", got)
	}
}

// Issue 21: Hello.bot_version names the bot's version, the SDK's and the protocol, within the
// server's 64 characters.
func TestHelloBotVersionNamesTheSDKAndTheProtocol(t *testing.T) {
	if SDKTag != "uno-bot-go/"+Version+" uno.v1" || ProtocolVersion != 1 {
		t.Errorf("SDKTag %q", SDKTag)
	}
	if got := HelloBotVersion(""); got != SDKTag {
		t.Errorf("HelloBotVersion(\"\") = %q, want %q", got, SDKTag)
	}
	if got := HelloBotVersion("1.4.2"); got != "1.4.2 "+SDKTag {
		t.Errorf("HelloBotVersion(1.4.2) = %q", got)
	}
	long := HelloBotVersion(strings.Repeat("é", 100)) // the server counts characters
	if utf8.RuneCountInString(long) != 64 || !strings.HasSuffix(long, " "+SDKTag) || !utf8.ValidString(long) {
		t.Errorf("long version %q (%d characters), want 64 ending in the tag", long, utf8.RuneCountInString(long))
	}
	b, err := newBot(Config{Addr: "127.0.0.1:1", Decide: lastLegal, Version: "7.1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.hello().GetBotVersion(); got != "7.1 "+SDKTag {
		t.Errorf("Hello.bot_version %q", got)
	}
}

// A late answer (ABORTED: its request closed first) is logged at INFO; a fault at WARN. An
// examination found every late answer of a correct bot logged as a warning "action rejected".
func TestALateAnswerIsInformationAndAFaultAWarning(t *testing.T) {
	var out strings.Builder
	b := &bot{
		log:     slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})),
		pending: map[string]*pending{},
	}
	b.onActionResult(nil, &unov1.ActionResult{RequestId: "m1-3", MatchId: "m1", Code: 10,
		Reason: unov1.ErrorReason_ERROR_REASON_DEADLINE_PASSED})
	b.onActionResult(nil, &unov1.ActionResult{RequestId: "m1-4", MatchId: "m1", Code: 9,
		Reason: unov1.ErrorReason_ERROR_REASON_ILLEGAL_ACTION})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 log lines, got %q", out.String())
	}
	if !strings.Contains(lines[0], "level=INFO") || !strings.Contains(lines[0], "answer arrived late") ||
		!strings.Contains(lines[0], "request=m1-3") {
		t.Errorf("late answer logged as %q", lines[0])
	}
	if !strings.Contains(lines[1], "level=WARN") || !strings.Contains(lines[1], "action rejected") ||
		!strings.Contains(lines[1], "request=m1-4") {
		t.Errorf("fault logged as %q", lines[1])
	}
}
