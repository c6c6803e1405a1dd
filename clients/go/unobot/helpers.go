package unobot

import unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"

// The four helpers below exist with the same names (modulo case) and meaning in every UNO Arena
// SDK: card_points, is_play_of, wild_color, last_played_seat.

// CardPoints is a card's scoring value: number cards their face value, Skip, Reverse and Draw Two
// 20, Wild and Wild Draw Four 50. A nil or unspecified card is worth 0.
func CardPoints(c *unov1.Card) int {
	switch r := c.GetRank(); {
	case r >= unov1.Rank_RANK_ZERO && r <= unov1.Rank_RANK_NINE:
		return int(r - unov1.Rank_RANK_ZERO)
	case r == unov1.Rank_RANK_SKIP || r == unov1.Rank_RANK_REVERSE || r == unov1.Rank_RANK_DRAW_TWO:
		return 20
	case r == unov1.Rank_RANK_WILD || r == unov1.Rank_RANK_WILD_DRAW_FOUR:
		return 50
	}
	return 0
}

// IsPlayOf reports whether the legal action plays the card with the given Card.code (any
// variant: with or without UNO, any colour named, any seven-o target).
func IsPlayOf(a *unov1.LegalAction, cardCode int32) bool {
	return a.GetKind() == unov1.ActionKind_ACTION_KIND_PLAY && a.GetCard() != nil && a.GetCard().GetCode() == cardCode
}

// WildColor returns the colour a Wild or Wild Draw Four play names; ok is false for any other
// action (including CHOOSE_COLOR, which is not a play).
func WildColor(a *unov1.LegalAction) (color unov1.Color, ok bool) {
	if a.GetKind() != unov1.ActionKind_ACTION_KIND_PLAY {
		return unov1.Color_COLOR_UNSPECIFIED, false
	}
	if r := a.GetCard().GetRank(); r != unov1.Rank_RANK_WILD && r != unov1.Rank_RANK_WILD_DRAW_FOUR {
		return unov1.Color_COLOR_UNSPECIFIED, false
	}
	if a.GetColor() == unov1.Color_COLOR_UNSPECIFIED {
		return unov1.Color_COLOR_UNSPECIFIED, false
	}
	return a.GetColor(), true
}

// LastPlayedSeat returns the seat of the latest PlayedEvent in events (oldest first, as the
// server sends them); ok is false if there is none.
func LastPlayedSeat(events []*unov1.Event) (seat int32, ok bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if p := events[i].GetPlayed(); p != nil {
			return p.GetSeat(), true
		}
	}
	return 0, false
}
