// The helper cases below are the same table in every SDK's tests.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Card, Color, Rank } from "../src/gen/uno/v1/cards";
import { ActionKind, Event, LegalAction } from "../src/gen/uno/v1/game";
import { cardPoints, isPlayOf, lastPlayedSeat, wildColor } from "../src/helpers";

const card = (color: Color, rank: Rank, code: number): Card => Card.fromPartial({ color, rank, code });
const red0 = card(Color.RED, Rank.ZERO, 0);
const red7 = card(Color.RED, Rank.SEVEN, 7);
const blue9 = card(Color.BLUE, Rank.NINE, 57);
const yelSkip = card(Color.YELLOW, Rank.SKIP, 26);
const grnRev = card(Color.GREEN, Rank.REVERSE, 43);
const blueD2 = card(Color.BLUE, Rank.DRAW_TWO, 60);
const wild = card(Color.WILD, Rank.WILD, 77);
const wd4 = card(Color.WILD, Rank.WILD_DRAW_FOUR, 78);

const playOf = (c: Card, named = Color.UNSPECIFIED, uno = false): LegalAction =>
  LegalAction.fromPartial({ id: 1000 + 10 * c.code, kind: ActionKind.PLAY, card: c, color: named, uno });
const draw = LegalAction.fromPartial({ id: 0, kind: ActionKind.DRAW });
const chooseBlue = LegalAction.fromPartial({ id: 23, kind: ActionKind.CHOOSE_COLOR, color: Color.BLUE });

test("cardPoints", () => {
  const cases: Array<[Card | undefined, number]> = [
    [red0, 0], [red7, 7], [blue9, 9], [yelSkip, 20], [grnRev, 20], [blueD2, 20], [wild, 50], [wd4, 50], [undefined, 0],
  ];
  for (const [c, want] of cases) assert.equal(cardPoints(c), want, JSON.stringify(c));
});

test("isPlayOf", () => {
  const cases: Array<[LegalAction, number, boolean]> = [
    [playOf(red7), 7, true],
    [playOf(red7, Color.UNSPECIFIED, true), 7, true], // the UNO variant plays the same card
    [playOf(red7), 57, false],
    [playOf(wild, Color.GREEN), 77, true],
    [playOf(wd4, Color.GREEN), 77, false],
    [draw, 0, false], // DRAW is no play of red 0
    [chooseBlue, 77, false],
  ];
  for (const [a, code, want] of cases) assert.equal(isPlayOf(a, code), want, `${JSON.stringify(a)} ${code}`);
});

test("wildColor", () => {
  const cases: Array<[LegalAction, Color | undefined]> = [
    [playOf(wild, Color.GREEN), Color.GREEN],
    [playOf(wd4, Color.BLUE, true), Color.BLUE],
    [playOf(red7), undefined],
    [chooseBlue, undefined], // not a play
    [draw, undefined],
  ];
  for (const [a, want] of cases) assert.equal(wildColor(a), want, JSON.stringify(a));
});

test("lastPlayedSeat", () => {
  const played = (seat: number): Event => Event.fromPartial({ played: { seat, card: red7 } });
  const drew = (seat: number): Event => Event.fromPartial({ drew: { seat, amount: 1 } });
  const cases: Array<[Event[], number | undefined]> = [
    [[], undefined],
    [[drew(1)], undefined],
    [[played(2)], 2],
    [[played(0), drew(1), played(3), drew(0)], 3],
    [[played(0), played(1)], 1],
  ];
  for (const [events, want] of cases) assert.equal(lastPlayedSeat(events), want);
});
