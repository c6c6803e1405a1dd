package unobot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Main runs a bot as a program and exits the process: it plays until SIGINT or SIGTERM (then
// half-closes the stream and exits 0), exits 2 for a malformed address and 1 when the server
// refuses the bot. Errors are one line on stderr, "<Config.Name>: <what happened>".
func Main(cfg Config) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Run(ctx, cfg)
	stop()
	prog := cfg.Name
	if prog == "" {
		prog = "uno-bot"
	}
	os.Exit(ExitCode(err, os.Stderr, prog))
}

// ExitCode is the exit code for Run's error (0 for nil, 2 for an [*AddressError], 1 otherwise);
// for an error it first writes one line "<prog>: <error>" to w.
func ExitCode(err error, w io.Writer, prog string) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(w, "%s: %v\n", prog, err)
	var ae *AddressError
	if errors.As(err, &ae) {
		return 2
	}
	return 1
}
