import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { main } from "../src/bot";
import { Color, Rank } from "../src/gen/uno/v1/cards";
import { FakeBotServer } from "./fake-server";
import { card, draw, play, request } from "./fixtures";

let server: FakeBotServer;
before(async () => {
  server = await FakeBotServer.start();
});
after(() => server.stop());

test("--help exits 0, a missing token exits 2", async () => {
  const saved = process.env.UNO_ARENA_TOKEN;
  delete process.env.UNO_ARENA_TOKEN;
  const log = console.log;
  const err = console.error;
  console.log = console.error = () => {};
  try {
    assert.equal(await main(["--help"]), 0);
    assert.equal(await main([]), 2);
  } finally {
    console.log = log;
    console.error = err;
    if (saved !== undefined) process.env.UNO_ARENA_TOKEN = saved;
  }
});

test("the example bot plays from env vars and stops cleanly on SIGTERM", async () => {
  const child = spawn(process.execPath, [join(__dirname, "..", "src", "bot.js"), "--log-level", "warn"], {
    env: { ...process.env, UNO_ARENA_ADDR: server.address, UNO_ARENA_TOKEN: "tok", UNO_ARENA_BOT_NAME: "ts-cli" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  try {
    const s = await server.nextSession(10_000);
    assert.deepEqual(s.metadata.get("authorization"), ["Bearer tok"]);
    const hello = await s.next(10_000);
    assert.equal(hello?.hello?.botName, "ts-cli");
    s.send({ welcome: { sessionId: "x", botName: "ts-cli" } });
    const g3 = card(Color.GREEN, Rank.THREE);
    const req = request({ hand: [g3, g3, g3], activeColor: Color.GREEN, legal: [draw(), play(g3)] });
    s.send({ decisionRequest: req });
    assert.equal((await s.next(10_000))?.action?.actionId, play(g3).id);
    child.kill("SIGTERM");
    assert.equal(await s.next(10_000), undefined, "the bot half-closes its stream");
    s.end();
    const [code] = await once(child, "exit");
    assert.equal(code, 0, stderr);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});
