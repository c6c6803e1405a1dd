/**
 * The example bot's rule-of-thumb strategy. Stateless: it plays from the DecisionRequest alone.
 *
 *  - catch a seat that missed its UNO call (never a partner); otherwise answer NO_CATCH at once;
 *  - call UNO late when offered, and always pick the play variant with uno = true;
 *  - never bluff a Wild Draw Four: play it only when holding no card of the active colour;
 *  - name the colour held most when playing a Wild (or choosing the first colour);
 *  - prefer playing over drawing: coloured cards first (highest points first, to shed them),
 *    then a Wild, then a Wild Draw Four; under seven-o swap with the smallest hand;
 *  - accept Wild Draw Fours and stacks that cannot be passed on (never challenge);
 *  - draw when nothing can be played, pass a drawn card that cannot be played.
 */
import type { DecideFn } from "./client";
import { DecisionRequest } from "./gen/uno/v1/bot";
import { Card, Color, Rank } from "./gen/uno/v1/cards";
import { ActionKind, LegalAction, SeatView } from "./gen/uno/v1/game";
import { cardPoints } from "./helpers";

const NAMEABLE = [Color.RED, Color.YELLOW, Color.GREEN, Color.BLUE] as const;

/** The colour the hand holds most of (Wilds do not count); ties and empty hands go red first. */
export function colorHeldMost(hand: readonly Card[]): Color {
  let best: Color = Color.RED;
  let bestCount = -1;
  for (const color of NAMEABLE) {
    const n = hand.filter((c) => c.color === color).length;
    if (n > bestCount) {
      best = color;
      bestCount = n;
    }
  }
  return best;
}

/** True if the hand holds a card of the active colour (then a Wild Draw Four would be a bluff). */
export function holdsActiveColor(view: SeatView): boolean {
  return view.activeColor !== Color.UNSPECIFIED && view.hand.some((c) => c.color === view.activeColor);
}

function isTeammate(view: SeatView, seat: number): boolean {
  const me = view.seats[view.seat]?.team;
  const other = view.seats[seat]?.team;
  return me !== undefined && other !== undefined && me === other;
}

function playScore(a: LegalAction, view: SeatView, named: Color): number {
  const card = a.card;
  let score: number;
  if (!card) score = 0;
  else if (card.rank === Rank.WILD_DRAW_FOUR) score = 10;
  else if (card.rank === Rank.WILD) score = 20;
  else score = 100 + cardPoints(card);
  if (card && card.color === Color.WILD && a.color === named) score += 1; // name the colour held most
  if (a.uno) score += 0.5; // the variant that calls UNO
  if (a.targetSeat !== undefined) score -= (view.seats[a.targetSeat]?.cardCount ?? 0) / 1000; // smallest hand
  return score;
}

/** The heuristic's choice for one request: a legal action id, or undefined to stay silent. */
export function heuristicChoice(req: DecisionRequest): number | undefined {
  const legal = req.legalActions;
  const view = req.view ?? SeatView.fromPartial({});
  const of = (kind: ActionKind): LegalAction[] => legal.filter((a) => a.kind === kind);

  const catchable = of(ActionKind.CATCH).filter((a) => a.targetSeat === undefined || !isTeammate(view, a.targetSeat));
  if (catchable.length > 0) return catchable[0].id;
  const callUno = of(ActionKind.CALL_UNO);
  if (callUno.length > 0) return callUno[0].id;
  const noCatch = of(ActionKind.NO_CATCH);
  if (noCatch.length > 0) return noCatch[0].id;

  const named = colorHeldMost(view.hand);
  const chooseColor = of(ActionKind.CHOOSE_COLOR);
  if (chooseColor.length > 0) return (chooseColor.find((a) => a.color === named) ?? chooseColor[0]).id;

  const noBluff = !holdsActiveColor(view);
  const plays = of(ActionKind.PLAY).filter((a) => a.card?.rank !== Rank.WILD_DRAW_FOUR || noBluff);
  if (plays.length > 0) {
    let best = plays[0];
    for (const a of plays) if (playScore(a, view, named) > playScore(best, view, named)) best = a;
    return best.id;
  }

  for (const kind of [ActionKind.ACCEPT, ActionKind.DRAW, ActionKind.PASS]) {
    const a = of(kind);
    if (a.length > 0) return a[0].id;
  }
  // Only a challenge (or something new) is left: take the server's default if any.
  return req.required ? (req.defaultActionId ?? legal[0]?.id) : undefined;
}

/** The heuristic as a decide function for {@link UnoBot}. */
export const heuristicDecide: DecideFn<unknown> = (ctx) => heuristicChoice(ctx.request);
