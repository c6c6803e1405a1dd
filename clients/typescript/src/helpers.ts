/**
 * Small helpers every bot author writes by hand. Every UNO Arena SDK has them with the same names
 * (modulo case) and meaning: card_points, is_play_of, wild_color, last_played_seat.
 */
import { Card, Color, Rank } from "./gen/uno/v1/cards";
import { ActionKind, Event, LegalAction } from "./gen/uno/v1/game";

/** A card's scoring value: number cards their face value, Skip/Reverse/Draw Two 20, Wilds 50. */
export function cardPoints(card: Card | undefined): number {
  const rank = card?.rank ?? Rank.UNSPECIFIED;
  if (rank >= Rank.ZERO && rank <= Rank.NINE) return rank - Rank.ZERO;
  if (rank === Rank.SKIP || rank === Rank.REVERSE || rank === Rank.DRAW_TWO) return 20;
  if (rank === Rank.WILD || rank === Rank.WILD_DRAW_FOUR) return 50;
  return 0;
}

/** True if the legal action plays the card with this Card.code (any UNO / colour / target variant). */
export function isPlayOf(action: LegalAction, cardCode: number): boolean {
  return action.kind === ActionKind.PLAY && action.card !== undefined && action.card.code === cardCode;
}

/** The colour a Wild or Wild Draw Four play names; undefined for any other action (CHOOSE_COLOR too). */
export function wildColor(action: LegalAction): Color | undefined {
  if (action.kind !== ActionKind.PLAY) return undefined;
  const rank = action.card?.rank;
  if (rank !== Rank.WILD && rank !== Rank.WILD_DRAW_FOUR) return undefined;
  return action.color === Color.UNSPECIFIED ? undefined : action.color;
}

/** The seat of the latest PlayedEvent in `events` (oldest first, as sent); undefined if none. */
export function lastPlayedSeat(events: readonly Event[]): number | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const played = events[i].played;
    if (played) return played.seat;
  }
  return undefined;
}
