/** Builders for protocol messages used by the tests. */
import { DecisionRequest, Prompt } from "../src/gen/uno/v1/bot";
import { Card, Color, Rank } from "../src/gen/uno/v1/cards";
import { ActionKind, Event, LegalAction, Phase, SeatView } from "../src/gen/uno/v1/game";

const COLOR_NAMES: Record<number, string> = {
  [Color.RED]: "red",
  [Color.YELLOW]: "yellow",
  [Color.GREEN]: "green",
  [Color.BLUE]: "blue",
};

export function card(color: Color, rank: Rank): Card {
  const engineColor = color === Color.WILD ? 4 : color - 1;
  const code = engineColor * 16 + (rank - 1);
  const name =
    rank === Rank.WILD ? "wild" : rank === Rank.WILD_DRAW_FOUR ? "wild_draw_four" : `${COLOR_NAMES[color]}_${rank - 1}`;
  return Card.fromPartial({ color, rank, code, name });
}

export const draw = (): LegalAction => LegalAction.fromPartial({ id: 0, kind: ActionKind.DRAW, description: "draw" });
export const pass = (): LegalAction => LegalAction.fromPartial({ id: 1, kind: ActionKind.PASS, description: "pass" });
export const accept = (): LegalAction => LegalAction.fromPartial({ id: 2, kind: ActionKind.ACCEPT, description: "accept" });
export const challenge = (): LegalAction => LegalAction.fromPartial({ id: 3, kind: ActionKind.CHALLENGE });
export const callUno = (): LegalAction => LegalAction.fromPartial({ id: 4, kind: ActionKind.CALL_UNO });
export const noCatch = (): LegalAction => LegalAction.fromPartial({ id: 5, kind: ActionKind.NO_CATCH });
export const catchSeat = (s: number): LegalAction =>
  LegalAction.fromPartial({ id: 10 + s, kind: ActionKind.CATCH, targetSeat: s });
export const chooseColor = (c: Color): LegalAction =>
  LegalAction.fromPartial({ id: 20 + c - 1, kind: ActionKind.CHOOSE_COLOR, color: c });

/** A PLAY action with the protocol's id: 1000 + 10 * code + 2 * named colour + uno. */
export function play(c: Card, named: Color = Color.UNSPECIFIED, uno = false): LegalAction {
  const n = c.color === Color.WILD ? named - 1 : 0;
  return LegalAction.fromPartial({
    id: 1000 + 10 * c.code + 2 * n + (uno ? 1 : 0),
    kind: ActionKind.PLAY,
    card: c,
    color: c.color === Color.WILD ? named : Color.UNSPECIFIED,
    uno,
  });
}

/** Every naming of a Wild card, optionally with the UNO variants. */
export function wildPlays(c: Card, withUno = false): LegalAction[] {
  const out: LegalAction[] = [];
  for (const named of [Color.RED, Color.YELLOW, Color.GREEN, Color.BLUE]) {
    out.push(play(c, named, false));
    if (withUno) out.push(play(c, named, true));
  }
  return out;
}

export interface RequestSpec {
  requestId?: string;
  matchId?: string;
  seat?: number;
  prompt?: Prompt;
  required?: boolean;
  timeLeftMs?: number;
  defaultActionId?: number;
  hand?: Card[];
  top?: Card;
  activeColor?: Color;
  legal: LegalAction[];
  events?: Event[];
  seatCount?: number;
}

let counter = 0;

export function request(spec: RequestSpec): DecisionRequest {
  const seat = spec.seat ?? 0;
  const seatCount = spec.seatCount ?? 4;
  const required = spec.required ?? true;
  const view = SeatView.fromPartial({
    seat,
    hand: spec.hand ?? [],
    topCard: spec.top ?? card(Color.RED, Rank.FIVE),
    activeColor: spec.activeColor ?? spec.top?.color ?? Color.RED,
    currentSeat: seat,
    seats: Array.from({ length: seatCount }, (_, i) => ({ seat: i, cardCount: i === seat ? (spec.hand?.length ?? 0) : 5 })),
    phase: Phase.TURN,
    handNumber: 1,
  });
  return DecisionRequest.fromPartial({
    requestId: spec.requestId ?? `r${++counter}`,
    matchId: spec.matchId ?? "m1",
    seat,
    handNumber: 1,
    prompt: spec.prompt ?? Prompt.TURN,
    required,
    // Far beyond any decide here, so a busy machine cannot turn an answer into a fallback;
    // tests of the fallback give their own.
    timeLeftMs: spec.timeLeftMs ?? (required ? 60_000 : 0),
    decisionMs: 1000,
    defaultActionId: spec.defaultActionId ?? (required ? spec.legal[0].id : undefined),
    view,
    legalActions: [...spec.legal].sort((a, b) => a.id - b.id),
    events: spec.events ?? [],
  });
}

export function event(sequence: number, handNumber = 1): Event {
  return Event.fromPartial({ sequence: BigInt(sequence), handNumber, passed: { seat: 1 } });
}
