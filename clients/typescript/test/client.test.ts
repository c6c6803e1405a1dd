import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import * as grpc from "@grpc/grpc-js";

import { BotOptions, DecideFn, FatalStreamError, UnoBot, backoffDelay } from "../src/client";
import { Prompt } from "../src/gen/uno/v1/bot";
import { Color, Rank } from "../src/gen/uno/v1/cards";
import { ErrorReason } from "../src/gen/uno/v1/errors";
import { heuristicDecide } from "../src/heuristic";
import { silentLogger } from "../src/log";
import { FakeBotServer, FakeSession } from "./fake-server";
import { card, catchSeat, draw, event, noCatch, play, request } from "./fixtures";

let server: FakeBotServer;
const bots: Array<{ bot: UnoBot<any>; done: Promise<unknown> }> = [];

function startBot<S = Record<string, unknown>>(
  decide: DecideFn<S>,
  extra: Partial<BotOptions<S>> = {},
): { bot: UnoBot<S>; done: Promise<unknown> } {
  const bot = new UnoBot<S>({
    address: server.address,
    token: "T",
    botName: "tester",
    decide,
    logger: silentLogger,
    reconnect: { initialDelayMs: 10, maxDelayMs: 50 },
    ...extra,
  });
  const done = bot.run().then(
    () => undefined,
    (err: unknown) => err,
  );
  const entry = { bot: bot as UnoBot<any>, done };
  bots.push(entry);
  return entry;
}

/** Accepts the next stream: checks the Hello and answers Welcome. */
async function handshake(sessionId = "s1"): Promise<FakeSession> {
  const s = await server.nextSession();
  const hello = await s.next();
  assert.ok(hello?.hello, "the first message is a Hello");
  s.send({ welcome: { sessionId, serverVersion: "fake", protocolVersion: 1, botName: "tester" } });
  return s;
}

before(async () => {
  server = await FakeBotServer.start();
});

afterEach(async () => {
  for (const { bot, done } of bots.splice(0)) {
    bot.stop(100);
    await done;
  }
});

after(() => server.stop());

describe("UnoBot against a fake BotService", () => {
  test("sends Hello first, with the token as bearer metadata", async () => {
    startBot(heuristicDecide);
    const s = await server.nextSession();
    assert.deepEqual(s.metadata.get("authorization"), ["Bearer T"]);
    const first = await s.next();
    assert.ok(first?.hello);
    assert.equal(first.hello.botName, "tester");
    assert.equal(first.hello.protocolVersion, 1);
    assert.equal(first.hello.resume, undefined);
    assert.equal(first.action, undefined);
  });

  test("answers a decision request with a legal id", async () => {
    const { bot } = startBot(heuristicDecide);
    const s = await handshake();
    const red7 = card(Color.RED, Rank.SEVEN);
    const req = request({ hand: [red7, card(Color.BLUE, Rank.TWO)], legal: [draw(), play(red7), play(red7, 0, true)] });
    s.send({ decisionRequest: req });
    const msg = await s.next();
    assert.ok(msg?.action);
    assert.equal(msg.action.requestId, req.requestId);
    assert.ok(req.legalActions.some((a) => a.id === msg.action!.actionId));
    assert.equal(msg.action.actionId, 1071, "the heuristic plays red 7 calling UNO");
    s.send({ actionResult: { requestId: req.requestId, matchId: "m1", accepted: true, actionId: 1071 } });
    await delay(20);
    assert.equal(bot.sessionId, "s1");
    assert.ok(bot.activeMatches.has("m1"));
  });

  test("handles two matches concurrently with separate per-match state", async () => {
    const seen: string[] = [];
    const decide: DecideFn<{ count: number }> = async (ctx) => {
      ctx.match.data.count += 1;
      seen.push(`${ctx.request.matchId}:${ctx.match.data.count}`);
      if (ctx.request.matchId === "slow") await delay(150);
      return ctx.legalActions[ctx.legalActions.length - 1].id;
    };
    const ended: string[] = [];
    const { bot } = startBot(decide, {
      initMatchState: () => ({ count: 0 }),
      onMatchEnded: (me, m) => ended.push(`${me.matchId}:${m.data.count}`),
    });
    const s = await handshake();
    const a1 = request({ matchId: "slow", seat: 1, legal: [draw(), play(card(Color.RED, Rank.ONE))] });
    const b1 = request({ matchId: "fast", seat: 2, legal: [draw(), play(card(Color.BLUE, Rank.ONE))] });
    s.send({ matchStarted: { matchId: "slow", seat: 1 } });
    s.send({ matchStarted: { matchId: "fast", seat: 2 } });
    s.send({ decisionRequest: a1 });
    s.send({ decisionRequest: b1 });
    const first = await s.next();
    const second = await s.next();
    assert.equal(first?.action?.requestId, b1.requestId, "the fast match is not held up by the slow one");
    assert.equal(first?.action?.actionId, 1000 + 10 * 49);
    assert.equal(second?.action?.requestId, a1.requestId);
    assert.equal(second?.action?.actionId, 1000 + 10 * 1);
    // A second decision in the fast match sees its own state only.
    const b2 = request({ matchId: "fast", seat: 2, legal: [draw()] });
    s.send({ decisionRequest: b2 });
    assert.equal((await s.next())?.action?.requestId, b2.requestId);
    assert.deepEqual(seen.sort(), ["fast:1", "fast:2", "slow:1"]);
    s.send({ matchEnded: { matchId: "fast", seat: 2, won: true } });
    await delay(20);
    assert.deepEqual(ended, ["fast:2"]);
    assert.ok(!bot.activeMatches.has("fast"), "state is dropped on MatchEnded");
    assert.ok(bot.activeMatches.has("slow"));
  });

  test("reconnects after the stream drops and resumes the session", async () => {
    startBot(heuristicDecide);
    const s1 = await handshake("sess-1");
    const req = request({ matchId: "m9", seat: 3, legal: [draw()], events: [event(1), event(2), event(3)] });
    s1.send({ decisionRequest: req });
    assert.equal((await s1.next())?.action?.actionId, 0);
    s1.fail(grpc.status.UNAVAILABLE, "server going away");

    const s2 = await server.nextSession();
    assert.deepEqual(s2.metadata.get("authorization"), ["Bearer T"]);
    const hello = await s2.next();
    assert.ok(hello?.hello);
    assert.equal(hello.hello.resume?.sessionId, "sess-1");
    assert.deepEqual(
      hello.hello.resume?.cursors.map((c) => [c.matchId, c.seat, c.lastSequence]),
      [["m9", 3, 3n]],
    );
    s2.send({ welcome: { sessionId: "sess-1", resumed: true, seats: [{ matchId: "m9", seat: 3 }] } });
    const again = request({ matchId: "m9", seat: 3, legal: [draw(), play(card(Color.RED, Rank.NINE))] });
    s2.send({ decisionRequest: again });
    const msg = await s2.next();
    assert.equal(msg?.action?.requestId, again.requestId);
    assert.equal(msg?.action?.actionId, 1000 + 10 * 9);
  });

  test("keeps retrying with backoff while the server refuses connections", async () => {
    const lonely = await FakeBotServer.start();
    const addr = lonely.address;
    lonely.stop(); // nothing listens there any more
    const { bot, done } = startBot(heuristicDecide, { address: addr, reconnect: { initialDelayMs: 5, maxDelayMs: 20, maxAttempts: 3 } });
    const err = await done;
    assert.ok(err instanceof Error);
    assert.match(err.message, /giving up after 3 failed reconnect attempts/);
    assert.equal(bot.sessionId, "");
  });

  test("falls back to the default action when decide overruns the deadline", async () => {
    let aborted = false;
    const decide: DecideFn<unknown> = (ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener("abort", () => {
          aborted = true;
          resolve(1070); // too late: ignored
        });
      });
    startBot(decide, { safetyMarginMs: 50 });
    const s = await handshake();
    const red7 = card(Color.RED, Rank.SEVEN);
    const req = request({ legal: [draw(), play(red7)], timeLeftMs: 200, defaultActionId: 0 });
    const t0 = Date.now();
    s.send({ decisionRequest: req });
    const msg = await s.next(2000);
    const took = Date.now() - t0;
    assert.equal(msg?.action?.actionId, 0, "the request's default_action_id");
    assert.ok(took >= 100 && took < 1000, `answered ${took} ms after sending (budget 150 ms)`);
    assert.ok(aborted, "decide's signal was aborted");
  });

  test("stays silent on optional requests decide skips, and on closed requests", async () => {
    let release: (() => void) | undefined;
    const decide: DecideFn<unknown> = async (ctx) => {
      if (ctx.request.prompt === Prompt.UNO_WINDOW) return undefined;
      if (ctx.request.matchId === "closing") {
        await new Promise<void>((r) => (release = r));
        return 0;
      }
      return ctx.legalActions[0].id;
    };
    startBot(decide);
    const s = await handshake();
    s.send({
      decisionRequest: request({ prompt: Prompt.UNO_WINDOW, required: false, legal: [noCatch(), catchSeat(2)] }),
    });
    const closing = request({ matchId: "closing", legal: [draw()] });
    s.send({ decisionRequest: closing });
    await delay(30);
    s.send({ requestClosed: { requestId: closing.requestId, matchId: "closing", reason: 3 } });
    await delay(30);
    release?.();
    const req = request({ matchId: "m2", legal: [draw()] });
    s.send({ decisionRequest: req });
    const msg = await s.next();
    assert.equal(msg?.action?.requestId, req.requestId, "nothing was sent for the skipped or closed requests");
    assert.equal(await s.maybeNext(50), undefined);
  });

  test("retries a rejected answer once with the fallback", async () => {
    startBot(() => 1070);
    const s = await handshake();
    const red7 = card(Color.RED, Rank.SEVEN);
    const req = request({ legal: [draw(), play(red7)], defaultActionId: 0 });
    s.send({ decisionRequest: req });
    assert.equal((await s.next())?.action?.actionId, 1070);
    s.send({
      actionResult: { requestId: req.requestId, accepted: false, code: 9, reason: ErrorReason.ILLEGAL_ACTION, requestOpen: true },
    });
    assert.equal((await s.next())?.action?.actionId, 0);
  });

  test("stops for good when the token is refused", async () => {
    const { done } = startBot(heuristicDecide);
    const s = await server.nextSession();
    await s.next();
    s.fail(grpc.status.UNAUTHENTICATED, "invalid token");
    const err = await done;
    assert.ok(err instanceof FatalStreamError, String(err));
    assert.equal(err.code, grpc.status.UNAUTHENTICATED);
  });

  test("stop() half-closes the stream and run() resolves", async () => {
    const { bot, done } = startBot(heuristicDecide);
    const s = await handshake();
    bot.stop();
    assert.equal(await s.next(), undefined, "the server sees the bot leave");
    s.end();
    assert.equal(await done, undefined);
  });
});

describe("backoffDelay", () => {
  test("grows exponentially, is capped and jittered", () => {
    const opts = { initialDelayMs: 100, maxDelayMs: 1000 };
    assert.equal(backoffDelay(0, opts, () => 1), 100);
    assert.equal(backoffDelay(0, opts, () => 0), 50);
    assert.equal(backoffDelay(3, opts, () => 1), 800);
    assert.equal(backoffDelay(10, opts, () => 1), 1000);
    assert.equal(backoffDelay(10, opts, () => 0), 500);
  });
});
