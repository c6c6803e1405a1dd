// Command heuristic-bot plays UNO Arena with the heuristic package's rules of thumb.
//
//	go run ./cmd/heuristic-bot --addr 127.0.0.1:50051 --token T --name go-heuristic
//
// Flags default to the environment variables UNO_ARENA_ADDR, UNO_ARENA_TOKEN and
// UNO_ARENA_BOT_NAME. It runs until interrupted (Ctrl-C / SIGTERM), then exits 0. Exit codes:
// 2 for bad usage (a malformed address, a missing token), 1 when the server refuses the bot.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/uno-arena/uno-arena/clients/go/heuristic"
	"github.com/uno-arena/uno-arena/clients/go/unobot"
)

const prog = "heuristic-bot"

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command; it returns the exit code.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", env("UNO_ARENA_ADDR", "127.0.0.1:50051"),
		"server: HOST:PORT or http://HOST:PORT (plaintext), https://HOST:PORT (TLS) [$UNO_ARENA_ADDR]")
	token := fs.String("token", env("UNO_ARENA_TOKEN", ""), "bot token [$UNO_ARENA_TOKEN]")
	name := fs.String("name", env("UNO_ARENA_BOT_NAME", "go-heuristic"), "bot name [$UNO_ARENA_BOT_NAME]")
	useTLS := fs.Bool("tls", false, "connect to a HOST:PORT address with TLS (system roots); same as https://")
	verbose := fs.Bool("v", false, "debug logging (every request and answer)")
	maxBatch := fs.Int("max-batch", unobot.DefaultMaxBatch,
		"Hello.max_batch: the most waiting messages the server may send in one batch (0 = never batch, at most 1024)")
	overrunEvery := fs.Int("overrun-every", 0, "chaos: every Nth decision overruns its deadline (0 = off)")
	overrunMs := fs.Int("overrun-ms", 0, "chaos: how long an overrunning decision blocks, in ms")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, prog+": "+format+"\n", a...)
		return code
	}
	if fs.NArg() > 0 {
		return fail(2, "unexpected argument %q (flags only; see --help)", fs.Arg(0))
	}
	parsed, err := unobot.ParseAddress(*addr)
	if err != nil {
		return fail(2, "%v", err)
	}
	if parsed.Scheme == "http" && *useTLS {
		return fail(2, "--tls conflicts with the plaintext address %q: use https://", *addr)
	}
	if *token == "" {
		return fail(2, "a token is required (--token or UNO_ARENA_TOKEN)")
	}
	if *overrunEvery < 0 || *overrunMs < 0 {
		return fail(2, "--overrun-every and --overrun-ms must be 0 or more")
	}

	if *maxBatch < 0 || *maxBatch > unobot.MaxHelloBatch {
		return fail(2, "--max-batch must be 0-%d", unobot.MaxHelloBatch)
	}
	batch := int32(*maxBatch)
	if batch == 0 {
		batch = unobot.NoBatching
	}

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	cfg := unobot.Config{
		Addr:     *addr,
		Token:    *token,
		Name:     *name,
		Decide:   overrun(heuristic.Decide, *overrunEvery, time.Duration(*overrunMs)*time.Millisecond),
		Logger:   log,
		MaxBatch: batch,
	}
	if *useTLS {
		cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	log.Info("starting", "addr", *addr, "name", *name)
	return unobot.ExitCode(unobot.Run(ctx, cfg), stderr, prog)
}

// overrun wraps decide so that every nth call first blocks for d, ignoring its context: a
// decision that overruns its deadline, for chaos tests. n = 0 turns it off.
func overrun(decide unobot.DecideFunc, n int, d time.Duration) unobot.DecideFunc {
	if n <= 0 || d <= 0 {
		return decide
	}
	var calls atomic.Int64
	return func(ctx context.Context, dec *unobot.Decision) (int32, error) {
		if calls.Add(1)%int64(n) == 0 {
			dec.Log.Info("chaos: overrunning this decision", "block_ms", d.Milliseconds())
			time.Sleep(d)
		}
		return decide(ctx, dec)
	}
}
