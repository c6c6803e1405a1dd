package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
	"github.com/uno-arena/uno-arena/clients/go/unobot"
)

func runCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	t.Setenv("UNO_ARENA_ADDR", "")
	t.Setenv("UNO_ARENA_TOKEN", "")
	var stderr bytes.Buffer
	// A hang guard only: every call here must return on its own (a bot that tried to connect
	// would retry until stopped), which is what the check after run asserts, not a duration.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, args, &stderr)
	if ctx.Err() != nil {
		t.Errorf("%s %q: did not return on its own (stopped by the 30 s hang guard, exit %d)", prog, args, code)
	}
	return code, stderr.String()
}

func TestMalformedAddressExits2WithOneLine(t *testing.T) {
	for _, addr := range []string{"foo", "localhost", "grpc://localhost:50051", "http://127.0.0.1:50051/x", "127.0.0.1:99999"} {
		// runCmd checks that run returned on its own: a bot that tried to connect would retry
		// until its hang guard stopped it.
		code, out := runCmd(t, "--addr", addr, "--token", "t")
		if code != 2 || strings.Count(out, "\n") != 1 {
			t.Errorf("--addr %q: exit %d, output %q; want exit 2 without connecting, with one line", addr, code, out)
		}
		want := `heuristic-bot: invalid address "` + addr + `"`
		if !strings.HasPrefix(out, want) || !strings.Contains(out, "use HOST:PORT, http://HOST:PORT or https://HOST:PORT") {
			t.Errorf("--addr %q: output %q", addr, out)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	if code, out := runCmd(t, "--addr", "127.0.0.1:1"); code != 2 || !strings.Contains(out, "a token is required") {
		t.Errorf("missing token: exit %d, %q", code, out)
	}
	if code, _ := runCmd(t, "--help"); code != 0 {
		t.Errorf("--help: exit %d", code)
	}
	if code, _ := runCmd(t, "--bogus"); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
	if code, out := runCmd(t, "--addr", "http://127.0.0.1:1", "--tls", "--token", "t"); code != 2 || strings.Count(out, "\n") != 1 {
		t.Errorf("http:// with --tls: exit %d, %q", code, out)
	}
	if code, out := runCmd(t, "--addr", "127.0.0.1:1", "--token", "t", "--max-batch", "2000"); code != 2 || !strings.Contains(out, "--max-batch must be 0-1024") {
		t.Errorf("--max-batch 2000: exit %d, %q", code, out)
	}
}

type refuser struct {
	unov1.UnimplementedBotServiceServer
}

func (refuser) Play(unov1.BotService_PlayServer) error {
	return status.Error(codes.Unauthenticated, "INVALID_TOKEN: unknown bot token")
}

func TestRefusedTokenExits1WithAPlainLine(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	unov1.RegisterBotServiceServer(s, refuser{})
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	code, out := runCmd(t, "--addr", "http://"+lis.Addr().String(), "--token", "wrong")
	last := strings.Split(strings.TrimSpace(out), "\n")
	want := "heuristic-bot: server refused the bot, not reconnecting: server closed the stream: UNAUTHENTICATED (INVALID_TOKEN: unknown bot token)"
	if code != 1 || last[len(last)-1] != want {
		t.Errorf("exit %d, last line %q; want 1 and %q", code, last[len(last)-1], want)
	}
}

func TestOverrunBlocksEveryNthDecision(t *testing.T) {
	calls := 0
	inner := func(context.Context, *unobot.Decision) (int32, error) { calls++; return 7, nil }
	var logs bytes.Buffer
	d := &unobot.Decision{Log: slog.New(slog.NewTextHandler(&logs, nil))}
	f := overrun(inner, 3, 60*time.Millisecond)
	var slow []int
	for i := 1; i <= 7; i++ {
		logs.Reset()
		start := time.Now()
		if id, _ := f(context.Background(), d); id != 7 {
			t.Fatalf("decision %d = %d", i, id)
		}
		// Which decisions overran is what it logs (a busy machine can make any call slow); an
		// overrun one cannot return before its block (a bound by causality).
		if strings.Contains(logs.String(), "chaos: overrunning this decision") {
			slow = append(slow, i)
			if el := time.Since(start); el < 60*time.Millisecond {
				t.Errorf("decision %d overran for only %v, want the 60ms block", i, el)
			}
		}
	}
	if calls != 7 || len(slow) != 2 || slow[0] != 3 || slow[1] != 6 {
		t.Errorf("slow decisions %v of %d, want [3 6] of 7", slow, calls)
	}
	if g := overrun(inner, 0, time.Second); g == nil {
		t.Error("off returns nil")
	}
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
