package heuristic

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
	"github.com/uno-arena/uno-arena/clients/go/unobot"
)

// card builds a card from its engine code (engine colour*16 + engine rank).
func card(code int32) *unov1.Card {
	if code >= 77 {
		return &unov1.Card{Color: unov1.Color_COLOR_WILD, Rank: unov1.Rank(code - 64 + 1), Code: code}
	}
	return &unov1.Card{Color: unov1.Color(code/16 + 1), Rank: unov1.Rank(code%16 + 1), Code: code}
}

const (
	red7, red8, red2 = 7, 8, 2
	blue1, blue2     = 49, 50
	blue3            = 51
	green4, green5   = 36, 37
	redDrawTwo       = 12
	wild, wd4        = 77, 78
)

func hand(codes ...int32) []*unov1.Card {
	var h []*unov1.Card
	for _, c := range codes {
		h = append(h, card(c))
	}
	return h
}

func simple(kind unov1.ActionKind, id int32) *unov1.LegalAction {
	return &unov1.LegalAction{Id: id, Kind: kind}
}

var (
	draw      = simple(unov1.ActionKind_ACTION_KIND_DRAW, 0)
	pass      = simple(unov1.ActionKind_ACTION_KIND_PASS, 1)
	accept    = simple(unov1.ActionKind_ACTION_KIND_ACCEPT, 2)
	challenge = simple(unov1.ActionKind_ACTION_KIND_CHALLENGE, 3)
	callUno   = simple(unov1.ActionKind_ACTION_KIND_CALL_UNO, 4)
	noCatch   = simple(unov1.ActionKind_ACTION_KIND_NO_CATCH, 5)
)

func catch(seat int32) *unov1.LegalAction {
	return &unov1.LegalAction{Id: 10 + seat, Kind: unov1.ActionKind_ACTION_KIND_CATCH, TargetSeat: proto.Int32(seat)}
}

func chooseColor(c int32) *unov1.LegalAction {
	return &unov1.LegalAction{Id: 20 + c, Kind: unov1.ActionKind_ACTION_KIND_CHOOSE_COLOR, Color: unov1.Color(c + 1)}
}

// plays lists the legal plays of a card: every named colour for a Wild, and with and without
// UNO when uno is set.
func plays(code int32, uno bool) []*unov1.LegalAction {
	var out []*unov1.LegalAction
	colours := []int32{0}
	if code >= 77 {
		colours = []int32{0, 1, 2, 3}
	}
	for _, c := range colours {
		for _, u := range []bool{false, true} {
			if u && !uno {
				continue
			}
			a := &unov1.LegalAction{Kind: unov1.ActionKind_ACTION_KIND_PLAY,
				Card: card(code), Uno: u}
			a.Id = 1000 + 10*code + 2*c
			if u {
				a.Id++
			}
			if code >= 77 {
				a.Color = unov1.Color(c + 1)
			}
			out = append(out, a)
		}
	}
	return out
}

func req(prompt unov1.Prompt, active unov1.Color, h []*unov1.Card, legal ...[]*unov1.LegalAction) *unov1.DecisionRequest {
	r := &unov1.DecisionRequest{RequestId: "r", Prompt: prompt, Required: true,
		View: &unov1.SeatView{Hand: h, ActiveColor: active}}
	for _, l := range legal {
		r.LegalActions = append(r.LegalActions, l...)
	}
	return r
}

func one(a ...*unov1.LegalAction) []*unov1.LegalAction { return a }

func TestChoose(t *testing.T) {
	red, green := unov1.Color_COLOR_RED, unov1.Color_COLOR_GREEN
	turn := unov1.Prompt_PROMPT_TURN
	cases := []struct {
		name string
		req  *unov1.DecisionRequest
		want int32
	}{
		{"prefers playing over drawing", req(turn, red, hand(red7, blue1), one(draw), plays(red7, false)), 1070},
		{"wild names the colour held most", req(turn, green, hand(red2, blue1, blue2, wild), one(draw), plays(wild, false)), 1776},
		{"coloured card before wild", req(turn, red, hand(red7, wild, blue1), one(draw), plays(red7, false), plays(wild, false)), 1070},
		{"calls UNO with the play", req(turn, red, hand(red7, red8), one(draw), plays(red7, true), plays(red8, true)), 1081},
		{"plays Wild Draw Four when holding no active colour", req(turn, red, hand(blue3, wd4), one(draw), plays(wd4, false)), 1786},
		{"never bluffs a Wild Draw Four", req(unov1.Prompt_PROMPT_DRAWN, red, hand(red2, blue3, wd4), plays(wd4, false), one(pass)), 1},
		{"draws rather than bluff", req(turn, red, hand(red2, wd4), one(draw), plays(wd4, false)), 0},
		{"catches a missed UNO", req(unov1.Prompt_PROMPT_UNO_WINDOW, red, hand(red7), one(noCatch, catch(2))), 12},
		{"no catch when none offered", req(unov1.Prompt_PROMPT_UNO_WINDOW, red, hand(red7), one(noCatch)), 5},
		{"calls UNO late", req(unov1.Prompt_PROMPT_LATE_UNO, red, hand(red7), one(callUno)), 4},
		{"accepts a Wild Draw Four", req(unov1.Prompt_PROMPT_WILD_DRAW_FOUR, red, hand(red7), one(accept, challenge)), 2},
		{"stacks a Draw Two", req(unov1.Prompt_PROMPT_STACK, red, hand(redDrawTwo, red7), one(accept), plays(redDrawTwo, false)), 1120},
		{"chooses the colour held most", req(unov1.Prompt_PROMPT_CHOOSE_COLOR, 0, hand(green4, green5, blue1, wild),
			one(chooseColor(0), chooseColor(1), chooseColor(2), chooseColor(3))), 22},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Choose(c.req)
			if !ok || got != c.want {
				t.Errorf("Choose = %d (ok %v), want %d", got, ok, c.want)
			}
			if !unobot.IsLegal(c.req, got) {
				t.Errorf("%d is not legal", got)
			}
		})
	}
}

func TestJumpInIsOptional(t *testing.T) {
	r := req(unov1.Prompt_PROMPT_JUMP_IN, unov1.Color_COLOR_RED, hand(red7), plays(red7, false))
	r.Required = false
	if got, ok := Choose(r); !ok || got != 1070 {
		t.Errorf("jump-in = %d %v, want to jump in with 1070", got, ok)
	}
	d := &unobot.Decision{Request: req(unov1.Prompt_PROMPT_JUMP_IN, unov1.Color_COLOR_RED, hand(red2, wd4), plays(wd4, false))}
	d.Request.Required = false
	if _, err := Decide(context.Background(), d); !errors.Is(err, unobot.ErrSkip) {
		t.Errorf("bluff jump-in: err = %v, want ErrSkip", err)
	}
}

func TestFavouriteColor(t *testing.T) {
	if got := FavouriteColor(hand(wild, wd4)); got != unov1.Color_COLOR_RED {
		t.Errorf("all-wild hand: %v", got)
	}
	if got := FavouriteColor(hand(red2, green4, green5, wild)); got != unov1.Color_COLOR_GREEN {
		t.Errorf("got %v, want green", got)
	}
}
