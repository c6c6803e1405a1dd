// Command heuristic-bot plays UNO Arena with the heuristic package's rules of thumb.
//
//	go run ./cmd/heuristic-bot --addr 127.0.0.1:50051 --token T --name go-heuristic
//
// Flags default to the environment variables UNO_ARENA_ADDR, UNO_ARENA_TOKEN and
// UNO_ARENA_BOT_NAME. It runs until interrupted (Ctrl-C / SIGTERM).
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/uno-arena/uno-arena/clients/go/heuristic"
	"github.com/uno-arena/uno-arena/clients/go/unobot"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func main() {
	addr := flag.String("addr", env("UNO_ARENA_ADDR", "127.0.0.1:50051"), "server host:port [$UNO_ARENA_ADDR]")
	token := flag.String("token", env("UNO_ARENA_TOKEN", ""), "bot token [$UNO_ARENA_TOKEN]")
	name := flag.String("name", env("UNO_ARENA_BOT_NAME", "go-heuristic"), "bot name [$UNO_ARENA_BOT_NAME]")
	useTLS := flag.Bool("tls", false, "connect with TLS (system roots)")
	verbose := flag.Bool("v", false, "debug logging (every request and answer)")
	flag.Parse()
	if *token == "" {
		fmt.Fprintln(os.Stderr, "heuristic-bot: a token is required (--token or UNO_ARENA_TOKEN)")
		os.Exit(2)
	}

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg := unobot.Config{
		Addr:   *addr,
		Token:  *token,
		Name:   *name,
		Decide: heuristic.Decide,
		Logger: log,
	}
	if *useTLS {
		cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	log.Info("starting", "addr", *addr, "name", *name)
	if err := unobot.Run(ctx, cfg); err != nil {
		log.Error("bot stopped", "err", err)
		os.Exit(1)
	}
}
