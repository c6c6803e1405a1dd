// Package heuristic is a simple rule-of-thumb UNO Arena bot, written against the unobot SDK.
//
// Rules, in order:
//   - UNO window: catch the offender when offered, otherwise answer NO_CATCH (speeds play up);
//   - late UNO: call it;
//   - Wild Draw Four played on us: accept (no challenge);
//   - a Wild flipped first: name the colour held most;
//   - otherwise play rather than draw: a play that calls UNO first, then coloured cards before
//     Wilds before Wild Draw Fours, higher-scoring cards first; a Wild names the colour held
//     most; a Wild Draw Four is never a bluff (played only without a card of the active colour);
//     under seven-o a 7 swaps with the seat holding fewest cards;
//   - no play: draw, or pass after drawing, or accept a penalty.
package heuristic

import (
	"context"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
	"github.com/uno-arena/uno-arena/clients/go/unobot"
)

// Decide is the bot's unobot.DecideFunc.
func Decide(_ context.Context, d *unobot.Decision) (int32, error) {
	id, ok := Choose(d.Request)
	if !ok {
		return 0, unobot.ErrSkip
	}
	return id, nil
}

// Choose picks an action id for a request; ok is false when the bot prefers not to answer.
func Choose(req *unov1.DecisionRequest) (id int32, ok bool) {
	legal := req.GetLegalActions()
	view := req.GetView()
	pick := func(kinds ...unov1.ActionKind) (int32, bool) {
		for _, k := range kinds {
			if a := unobot.OfKind(legal, k); a != nil {
				return a.GetId(), true
			}
		}
		return 0, false
	}

	switch req.GetPrompt() {
	case unov1.Prompt_PROMPT_UNO_WINDOW:
		return pick(unov1.ActionKind_ACTION_KIND_CATCH, unov1.ActionKind_ACTION_KIND_NO_CATCH)
	case unov1.Prompt_PROMPT_LATE_UNO:
		return pick(unov1.ActionKind_ACTION_KIND_CALL_UNO)
	case unov1.Prompt_PROMPT_WILD_DRAW_FOUR:
		if id, ok := pick(unov1.ActionKind_ACTION_KIND_ACCEPT); ok {
			return id, true
		}
	case unov1.Prompt_PROMPT_CHOOSE_COLOR:
		fav := FavouriteColor(view.GetHand())
		if a := unobot.FindAction(legal, func(a *unov1.LegalAction) bool {
			return a.GetKind() == unov1.ActionKind_ACTION_KIND_CHOOSE_COLOR && a.GetColor() == fav
		}); a != nil {
			return a.GetId(), true
		}
	}

	if a := BestPlay(legal, view); a != nil {
		return a.GetId(), true
	}
	if req.GetPrompt() == unov1.Prompt_PROMPT_JUMP_IN {
		return 0, false // optional: no jump-in worth making
	}
	if id, ok := pick(unov1.ActionKind_ACTION_KIND_DRAW, unov1.ActionKind_ACTION_KIND_PASS,
		unov1.ActionKind_ACTION_KIND_ACCEPT, unov1.ActionKind_ACTION_KIND_NO_CATCH); ok {
		return id, true
	}
	if !req.GetRequired() {
		return 0, false
	}
	return unobot.Fallback(req), true
}

// FavouriteColor is the colour of which the hand holds most cards (Wilds not counted); ties and
// an all-Wild hand go to the first in red, yellow, green, blue order.
func FavouriteColor(hand []*unov1.Card) unov1.Color {
	counts := colorCounts(hand)
	best := unov1.Color_COLOR_RED
	for c := unov1.Color_COLOR_RED; c <= unov1.Color_COLOR_BLUE; c++ {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best
}

func colorCounts(hand []*unov1.Card) map[unov1.Color]int {
	counts := map[unov1.Color]int{}
	for _, c := range hand {
		if c.GetColor() != unov1.Color_COLOR_WILD {
			counts[c.GetColor()]++
		}
	}
	return counts
}

// BestPlay returns the preferred legal play, or nil if there is none the bot wants to make.
func BestPlay(legal []*unov1.LegalAction, view *unov1.SeatView) *unov1.LegalAction {
	counts := colorCounts(view.GetHand())
	holdsActive := counts[view.GetActiveColor()] > 0
	fav := FavouriteColor(view.GetHand())
	cardCount := map[int32]int32{}
	for _, s := range view.GetSeats() {
		cardCount[s.GetSeat()] = s.GetCardCount()
	}

	var best *unov1.LegalAction
	var bestKey [5]int
	for _, a := range legal {
		if a.GetKind() != unov1.ActionKind_ACTION_KIND_PLAY {
			continue
		}
		card := a.GetCard()
		tier := 2 // coloured card
		switch card.GetRank() {
		case unov1.Rank_RANK_WILD_DRAW_FOUR:
			if holdsActive {
				continue // would be a bluff
			}
			tier = 0
		case unov1.Rank_RANK_WILD:
			tier = 1
		}
		if card.GetColor() == unov1.Color_COLOR_WILD && a.GetColor() != fav {
			continue // name the colour held most
		}
		target := 0
		if a.TargetSeat != nil { // seven-o: swap with the seat holding fewest cards
			target = -int(cardCount[a.GetTargetSeat()])
		}
		key := [5]int{b2i(a.GetUno()), tier, unobot.CardPoints(card), counts[card.GetColor()], target}
		if best == nil || less(bestKey, key) {
			best, bestKey = a, key
		}
	}
	return best
}

func less(a, b [5]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
