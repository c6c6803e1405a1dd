import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ActionWriter, MAX_ACTION_BATCH } from "../src/outbox";
import { PlayRequest } from "../src/gen/uno/v1/bot";

/** A stream whose writes stay in flight until the test calls `finish()`. */
class HeldStream {
  readonly written: PlayRequest[] = [];
  private done?: () => void;
  gone = false;
  readonly write = (msg: PlayRequest, done: () => void): boolean => {
    if (this.gone) return false;
    assert.equal(this.done, undefined, "a second write started while one was in flight");
    this.written.push(msg);
    this.done = done;
    return true;
  };
  finish(): void {
    const d = this.done;
    this.done = undefined;
    d?.();
  }
}

const answer = (i: number) => ({ requestId: `r${i}`, actionId: i });
const ids = (msg: PlayRequest): string[] =>
  msg.action ? [msg.action.requestId] : (msg.actions?.actions ?? []).map((a) => a.requestId);

describe("ActionWriter", () => {
  test("drop() removes a closed request's queued answers, and only them, in order", () => {
    const s = new HeldStream();
    const w = new ActionWriter(s.write);
    w.send(answer(0)); // in flight
    for (const i of [1, 2, 1, 3]) w.send(answer(i));
    assert.equal(w.drop("r1"), 2);
    assert.equal(w.drop("r0"), 0, "an answer already being written cannot be taken back");
    s.finish();
    assert.deepEqual(s.written.flatMap(ids), ["r0", "r2", "r3"]);
  });

  test("a lone answer is written at once, alone", () => {
    const s = new HeldStream();
    const w = new ActionWriter(s.write);
    assert.ok(w.send(answer(0)));
    assert.equal(s.written.length, 1, "written before send returned");
    assert.deepEqual(s.written[0].action, answer(0));
    s.finish();
    assert.ok(w.send(answer(1)));
    assert.equal(s.written.length, 2, "the writer is idle again: the next answer goes at once too");
    assert.ok(s.written[1].action);
  });

  test("answers that pile up during a write leave together, in order, at most 256 per message", () => {
    const s = new HeldStream();
    const w = new ActionWriter(s.write);
    w.send(answer(0));
    for (let i = 1; i <= 300; i++) w.send(answer(i));
    assert.equal(s.written.length, 1, "nothing else is written while the first write is in flight");
    assert.equal(w.waiting, 300);
    s.finish();
    assert.equal(s.written.length, 2);
    assert.equal(s.written[1].actions?.actions.length, MAX_ACTION_BATCH);
    s.finish();
    assert.equal(s.written.length, 3);
    assert.equal(s.written[2].actions?.actions.length, 300 - MAX_ACTION_BATCH);
    const order = s.written.flatMap(ids);
    assert.deepEqual(order, Array.from({ length: 301 }, (_, i) => `r${i}`));
    s.finish();
    assert.equal(w.waiting, 0);
  });

  test("two answers that piled up are one ActionBatch; one is a lone Action", () => {
    const s = new HeldStream();
    const w = new ActionWriter(s.write);
    w.send(answer(0));
    w.send(answer(1));
    s.finish();
    assert.ok(s.written[1].action, "a single waiting answer goes as a plain Action");
    w.send(answer(2));
    w.send(answer(3));
    s.finish();
    assert.deepEqual(ids(s.written[2]), ["r2", "r3"]);
    assert.ok(s.written[2].actions);
  });

  test("a gone stream drops what waits and refuses more", () => {
    const s = new HeldStream();
    const w = new ActionWriter(s.write);
    w.send(answer(0));
    w.send(answer(1));
    s.gone = true;
    s.finish();
    assert.equal(w.waiting, 0);
    assert.equal(w.send(answer(2)), false);
  });
});
