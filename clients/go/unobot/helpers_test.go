package unobot

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
)

// The helper cases below are the same table in every SDK's tests.

func card(color unov1.Color, rank unov1.Rank, code int32) *unov1.Card {
	return &unov1.Card{Color: color, Rank: rank, Code: code}
}

var (
	red0    = card(unov1.Color_COLOR_RED, unov1.Rank_RANK_ZERO, 0)
	red7    = card(unov1.Color_COLOR_RED, unov1.Rank_RANK_SEVEN, 7)
	blue9   = card(unov1.Color_COLOR_BLUE, unov1.Rank_RANK_NINE, 57)
	yelSkip = card(unov1.Color_COLOR_YELLOW, unov1.Rank_RANK_SKIP, 26)
	grnRev  = card(unov1.Color_COLOR_GREEN, unov1.Rank_RANK_REVERSE, 43)
	blueD2  = card(unov1.Color_COLOR_BLUE, unov1.Rank_RANK_DRAW_TWO, 60)
	wild    = card(unov1.Color_COLOR_WILD, unov1.Rank_RANK_WILD, 77)
	wd4     = card(unov1.Color_COLOR_WILD, unov1.Rank_RANK_WILD_DRAW_FOUR, 78)
)

func TestCardPoints(t *testing.T) {
	for _, c := range []struct {
		card *unov1.Card
		want int
	}{{red0, 0}, {red7, 7}, {blue9, 9}, {yelSkip, 20}, {grnRev, 20}, {blueD2, 20}, {wild, 50}, {wd4, 50}, {nil, 0}} {
		if got := CardPoints(c.card); got != c.want {
			t.Errorf("CardPoints(%v) = %d, want %d", c.card, got, c.want)
		}
	}
}

func playOf(c *unov1.Card, named unov1.Color, uno bool) *unov1.LegalAction {
	return &unov1.LegalAction{Id: 1000 + 10*c.GetCode(), Kind: unov1.ActionKind_ACTION_KIND_PLAY, Card: c, Color: named, Uno: uno}
}

var chooseBlue = &unov1.LegalAction{Id: 23, Kind: unov1.ActionKind_ACTION_KIND_CHOOSE_COLOR, Color: unov1.Color_COLOR_BLUE}

func TestIsPlayOf(t *testing.T) {
	for _, c := range []struct {
		action *unov1.LegalAction
		code   int32
		want   bool
	}{
		{playOf(red7, 0, false), 7, true},
		{playOf(red7, 0, true), 7, true}, // the UNO variant plays the same card
		{playOf(red7, 0, false), 57, false},
		{playOf(wild, unov1.Color_COLOR_GREEN, false), 77, true},
		{playOf(wd4, unov1.Color_COLOR_GREEN, false), 77, false},
		{draw, 0, false}, // DRAW is no play of red 0
		{chooseBlue, 77, false},
	} {
		if got := IsPlayOf(c.action, c.code); got != c.want {
			t.Errorf("IsPlayOf(%v, %d) = %v, want %v", c.action, c.code, got, c.want)
		}
	}
}

func TestWildColor(t *testing.T) {
	none := unov1.Color_COLOR_UNSPECIFIED
	for _, c := range []struct {
		action *unov1.LegalAction
		want   unov1.Color
	}{
		{playOf(wild, unov1.Color_COLOR_GREEN, false), unov1.Color_COLOR_GREEN},
		{playOf(wd4, unov1.Color_COLOR_BLUE, true), unov1.Color_COLOR_BLUE},
		{playOf(red7, 0, false), none},
		{chooseBlue, none}, // not a play
		{draw, none},
	} {
		got, ok := WildColor(c.action)
		if got != c.want || ok != (c.want != none) {
			t.Errorf("WildColor(%v) = %v, %v; want %v", c.action, got, ok, c.want)
		}
	}
}

func TestLastPlayedSeat(t *testing.T) {
	played := func(seat int32) *unov1.Event {
		return &unov1.Event{Kind: &unov1.Event_Played{Played: &unov1.PlayedEvent{Seat: seat, Card: red7}}}
	}
	drew := func(seat int32) *unov1.Event {
		return &unov1.Event{Kind: &unov1.Event_Drew{Drew: &unov1.DrewEvent{Seat: seat, Amount: 1}}}
	}
	for _, c := range []struct {
		events []*unov1.Event
		want   int32 // -1: none
	}{
		{nil, -1},
		{[]*unov1.Event{drew(1)}, -1},
		{[]*unov1.Event{played(2)}, 2},
		{[]*unov1.Event{played(0), drew(1), played(3), drew(0)}, 3},
		{[]*unov1.Event{played(0), played(1)}, 1},
	} {
		got, ok := LastPlayedSeat(c.events)
		if c.want < 0 && ok || c.want >= 0 && (!ok || got != c.want) {
			t.Errorf("LastPlayedSeat(%v) = %d, %v; want %d", c.events, got, ok, c.want)
		}
	}
}

func TestParseAddress(t *testing.T) {
	good := []struct {
		in, target string
		tls        bool
	}{
		{"127.0.0.1:50051", "127.0.0.1:50051", false},
		{"localhost:50051", "localhost:50051", false},
		{"uno.example.org:443", "uno.example.org:443", false},
		{"http://127.0.0.1:50051", "127.0.0.1:50051", false},
		{"HTTP://127.0.0.1:50051", "127.0.0.1:50051", false},
		{"https://uno.example.org:443", "uno.example.org:443", true},
		{"[::1]:50051", "[::1]:50051", false},
		{"http://[::1]:50051", "[::1]:50051", false},
		{"https://[2001:db8::1]:8443", "[2001:db8::1]:8443", true},
	}
	for _, c := range good {
		a, err := ParseAddress(c.in)
		if err != nil || a.Target != c.target || a.TLS != c.tls {
			t.Errorf("ParseAddress(%q) = %+v, %v; want %s tls=%v", c.in, a, err, c.target, c.tls)
		}
	}
	for _, in := range []string{
		"", "foo", "localhost", "127.0.0.1", "http://localhost", "grpc://localhost:50051", "dns:///localhost:50051",
		"http://127.0.0.1:50051/", "http://127.0.0.1:50051/uno", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:port",
		"::1:50051", ":50051", "http://user@host:1", "host:50051?x=1", "unix:///tmp/sock", "http://", "bad host!:1", "-x:1",
	} {
		_, err := ParseAddress(in)
		var ae *AddressError
		if !errors.As(err, &ae) {
			t.Errorf("ParseAddress(%q) = %v, want an AddressError", in, err)
			continue
		}
		want := fmt.Sprintf("invalid address %q (", in)
		if msg := err.Error(); len(msg) < len(want) || msg[:len(want)] != want {
			t.Errorf("ParseAddress(%q) error %q", in, msg)
		}
	}
}

func TestDescribeInPlainWords(t *testing.T) {
	const addr = "127.0.0.1:50051"
	for _, c := range []struct {
		err  error
		want string
	}{
		{status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:50051: connect: connection refused"`),
			"connection refused (127.0.0.1:50051)"},
		{status.Error(codes.Unavailable, "shutting down"), "server closed the stream: UNAVAILABLE (shutting down)"},
		{status.Error(codes.Unauthenticated, "INVALID_TOKEN: unknown token"), "server closed the stream: UNAUTHENTICATED (INVALID_TOKEN: unknown token)"},
		{status.Error(codes.ResourceExhausted, ""), "server closed the stream: RESOURCE_EXHAUSTED"},
		{errStreamEnded, "the server ended the stream (127.0.0.1:50051)"},
		{io.EOF, "the server ended the stream (127.0.0.1:50051)"},
	} {
		if got := describe(c.err, addr); got != c.want {
			t.Errorf("describe(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestExitCode(t *testing.T) {
	var out strings.Builder
	_, addrErr := ParseAddress("foo")
	for _, c := range []struct {
		err  error
		code int
		line string
	}{
		{nil, 0, ""},
		{addrErr, 2, "my-bot: invalid address \"foo\" (no port): use HOST:PORT, http://HOST:PORT or https://HOST:PORT\n"},
		{&FatalError{Err: status.Error(codes.Unauthenticated, "bad token"), Addr: "h:1"}, 1,
			"my-bot: server refused the bot, not reconnecting: server closed the stream: UNAUTHENTICATED (bad token)\n"},
	} {
		out.Reset()
		if code := ExitCode(c.err, &out, "my-bot"); code != c.code || out.String() != c.line {
			t.Errorf("ExitCode(%v) = %d, %q; want %d, %q", c.err, code, out.String(), c.code, c.line)
		}
	}
}
