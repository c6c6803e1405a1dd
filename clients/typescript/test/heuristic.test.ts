import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { Prompt } from "../src/gen/uno/v1/bot";
import { Color, Rank } from "../src/gen/uno/v1/cards";
import { colorHeldMost, heuristicChoice } from "../src/heuristic";
import {
  accept,
  callUno,
  card,
  catchSeat,
  challenge,
  chooseColor,
  draw,
  noCatch,
  pass,
  play,
  request,
  wildPlays,
} from "./fixtures";

const wild = card(Color.WILD, Rank.WILD);
const wd4 = card(Color.WILD, Rank.WILD_DRAW_FOUR);

describe("heuristicChoice", () => {
  test("names the colour held most when playing a Wild", () => {
    const hand = [card(Color.GREEN, Rank.ONE), card(Color.GREEN, Rank.TWO), card(Color.YELLOW, Rank.THREE), wild];
    const req = request({ hand, top: card(Color.RED, Rank.FIVE), legal: [draw(), ...wildPlays(wild)] });
    const chosen = req.legalActions.find((a) => a.id === heuristicChoice(req));
    assert.equal(chosen?.card?.rank, Rank.WILD);
    assert.equal(chosen?.color, Color.GREEN);
  });

  test("calls UNO with the play that leaves one card", () => {
    const red7 = card(Color.RED, Rank.SEVEN);
    const req = request({ hand: [red7, card(Color.BLUE, Rank.ONE)], legal: [draw(), play(red7), play(red7, 0, true)] });
    assert.equal(heuristicChoice(req), 1071);
    const lastWild = request({ hand: [wild, card(Color.BLUE, Rank.ONE)], legal: [draw(), ...wildPlays(wild, true)] });
    const a = lastWild.legalActions.find((x) => x.id === heuristicChoice(lastWild));
    assert.equal(a?.uno, true);
    assert.equal(a?.color, Color.BLUE);
  });

  test("never bluffs a Wild Draw Four", () => {
    const hand = [card(Color.RED, Rank.TWO), wd4];
    const bluff = request({ hand, top: card(Color.RED, Rank.FIVE), activeColor: Color.RED, legal: [draw(), ...wildPlays(wd4)] });
    assert.equal(heuristicChoice(bluff), 0, "draws instead of bluffing");
    const honest = request({ hand, top: card(Color.BLUE, Rank.FIVE), activeColor: Color.BLUE, legal: [draw(), ...wildPlays(wd4)] });
    const a = honest.legalActions.find((x) => x.id === heuristicChoice(honest));
    assert.equal(a?.card?.rank, Rank.WILD_DRAW_FOUR);
    assert.equal(a?.color, Color.RED);
    const drawn = request({ prompt: Prompt.DRAWN, hand, activeColor: Color.RED, legal: [pass(), ...wildPlays(wd4)] });
    assert.equal(heuristicChoice(drawn), 1, "passes a drawn Wild Draw Four it may not play honestly");
  });

  test("prefers playing over drawing, coloured cards before Wilds", () => {
    const blue5 = card(Color.BLUE, Rank.FIVE);
    const blueSkip = card(Color.BLUE, Rank.SKIP);
    const hand = [blue5, blueSkip, wild, card(Color.RED, Rank.ONE)];
    const req = request({ hand, activeColor: Color.BLUE, legal: [draw(), play(blue5), play(blueSkip), ...wildPlays(wild)] });
    assert.equal(heuristicChoice(req), play(blueSkip).id, "the highest-scoring coloured card");
  });

  test("catches a missed UNO, otherwise answers NO_CATCH", () => {
    const window = request({ prompt: Prompt.UNO_WINDOW, required: false, legal: [noCatch(), catchSeat(2)] });
    assert.equal(heuristicChoice(window), 12);
    const nothing = request({ prompt: Prompt.UNO_WINDOW, required: false, legal: [noCatch()] });
    assert.equal(heuristicChoice(nothing), 5);
  });

  test("calls UNO late when it forgot", () => {
    const late = request({ prompt: Prompt.LATE_UNO, required: false, legal: [callUno()] });
    assert.equal(heuristicChoice(late), 4);
  });

  test("accepts a Wild Draw Four rather than challenging", () => {
    const req = request({ prompt: Prompt.WILD_DRAW_FOUR, legal: [accept(), challenge()] });
    assert.equal(heuristicChoice(req), 2);
  });

  test("chooses the first colour it holds most of", () => {
    const hand = [card(Color.BLUE, Rank.ONE), card(Color.BLUE, Rank.TWO), card(Color.RED, Rank.ONE)];
    const req = request({
      prompt: Prompt.CHOOSE_COLOR,
      hand,
      legal: [Color.RED, Color.YELLOW, Color.GREEN, Color.BLUE].map(chooseColor),
    });
    assert.equal(heuristicChoice(req), 23);
  });
});

describe("colorHeldMost", () => {
  test("ignores Wilds and breaks ties red first", () => {
    assert.equal(colorHeldMost([wild, wd4]), Color.RED);
    assert.equal(colorHeldMost([card(Color.YELLOW, Rank.ONE), card(Color.GREEN, Rank.ONE)]), Color.YELLOW);
  });
});
