package unobot

import (
	"errors"
	"io"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FatalError is returned by [Run] when the server ended the stream with a status that
// reconnecting cannot fix: UNAUTHENTICATED (bad token), PERMISSION_DENIED (a name the token may
// not use), FAILED_PRECONDITION (e.g. an unsupported protocol version), INVALID_ARGUMENT (a bad
// Hello field), UNIMPLEMENTED (not an UNO Arena server) or ABORTED (SESSION_REPLACED: another
// process of the same bot took the session over). Every other ending is reconnected.
type FatalError struct {
	Err  error  // the stream's error (a gRPC status error)
	Addr string // the server's address
}

func (e *FatalError) Error() string {
	return "server refused the bot, not reconnecting: " + describe(e.Err, e.Addr)
}
func (e *FatalError) Unwrap() error { return e.Err }

// fatalCodes are the statuses that stop reconnecting; every other ending reconnects.
var fatalCodes = map[codes.Code]bool{
	codes.Unauthenticated:    true,
	codes.PermissionDenied:   true,
	codes.FailedPrecondition: true,
	codes.InvalidArgument:    true,
	codes.Unimplemented:      true,
	codes.Aborted:            true,
}

func isFatal(err error) bool {
	if err == nil || errors.Is(err, errStreamEnded) {
		return false
	}
	s, ok := status.FromError(err)
	return ok && fatalCodes[s.Code()]
}

// errStreamEnded is a stream the server ended with OK status (a clean end: reconnect).
var errStreamEnded = errors.New("server ended the stream")

// codeNames are the canonical gRPC code names (codes.Code.String() gives "Unavailable").
var codeNames = map[codes.Code]string{
	codes.OK: "OK", codes.Canceled: "CANCELLED", codes.Unknown: "UNKNOWN",
	codes.InvalidArgument: "INVALID_ARGUMENT", codes.DeadlineExceeded: "DEADLINE_EXCEEDED",
	codes.NotFound: "NOT_FOUND", codes.AlreadyExists: "ALREADY_EXISTS",
	codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Aborted: "ABORTED",
	codes.OutOfRange: "OUT_OF_RANGE", codes.Unimplemented: "UNIMPLEMENTED", codes.Internal: "INTERNAL",
	codes.Unavailable: "UNAVAILABLE", codes.DataLoss: "DATA_LOSS", codes.Unauthenticated: "UNAUTHENTICATED",
}

func codeName(c codes.Code) string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return c.String()
}

// connFailures maps what the transport reports when it cannot reach the server to plain words.
var connFailures = []struct{ needle, words string }{
	{"connection refused", "connection refused"},
	{"no such host", "unknown host"},
	{"i/o timeout", "connection timed out"},
	{"network is unreachable", "network unreachable"},
	{"no route to host", "no route to host"},
	{"connection reset", "connection reset"},
	{"x509:", "TLS certificate not trusted"},
	{"tls:", "TLS handshake failed"},
	{"first record does not look like a TLS handshake", "TLS handshake failed (is the server plaintext? use http://)"},
	{"error reading server preface", "server closed the connection (is the server TLS? use https://)"},
}

// describe says in plain words how a stream or connection attempt ended, e.g.
// "connection refused (127.0.0.1:50051)" or "server closed the stream: UNAVAILABLE (shutting down)".
func describe(err error, addr string) string {
	switch {
	case err == nil:
		return "no error"
	case errors.Is(err, errStreamEnded), errors.Is(err, io.EOF):
		return "the server ended the stream (" + addr + ")"
	}
	s, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	msg := s.Message()
	if s.Code() == codes.Unavailable {
		for _, f := range connFailures {
			if strings.Contains(msg, f.needle) {
				return f.words + " (" + addr + ")"
			}
		}
	}
	if msg == "" {
		return "server closed the stream: " + codeName(s.Code())
	}
	return "server closed the stream: " + codeName(s.Code()) + " (" + msg + ")"
}
