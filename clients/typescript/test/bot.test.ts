import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { setTimeout as delay } from "node:timers/promises";

import { main, overrun } from "../src/bot";
import { DecideFn } from "../src/client";
import { silentLogger } from "../src/log";
import { Color, Rank } from "../src/gen/uno/v1/cards";
import { FakeBotServer } from "./fake-server";
import { card, draw, play, request } from "./fixtures";

let server: FakeBotServer;
before(async () => {
  server = await FakeBotServer.start();
});
after(() => server.stop());

/** Runs main() with console output captured; returns the exit code and what went to stderr. */
async function run(args: string[]): Promise<{ code: number; stderr: string }> {
  const saved = { token: process.env.UNO_ARENA_TOKEN, addr: process.env.UNO_ARENA_ADDR };
  delete process.env.UNO_ARENA_TOKEN;
  delete process.env.UNO_ARENA_ADDR;
  const log = console.log;
  const err = console.error;
  let stderr = "";
  console.log = () => {};
  console.error = (...parts: unknown[]) => (stderr += parts.join(" ") + "\n");
  try {
    return { code: await main(args), stderr };
  } finally {
    process.exitCode = undefined; // main() sets it, as a program should; this process is the test
    console.log = log;
    console.error = err;
    if (saved.token !== undefined) process.env.UNO_ARENA_TOKEN = saved.token;
    if (saved.addr !== undefined) process.env.UNO_ARENA_ADDR = saved.addr;
  }
}

test("--help exits 0; a missing token, an unknown flag or a bad number exit 2 with one line", async () => {
  assert.equal((await run(["--help"])).code, 0);
  for (const args of [[], ["--token", "t", "--bogus"], ["--token", "t", "--overrun-every", "x"], ["--token", "t", "--log-level", "loud"], ["--token", "t", "--max-batch", "2000"], ["--token", "t", "--max-batch=-1"]]) {
    const { code, stderr } = await run(args);
    assert.equal(code, 2, args.join(" "));
    assert.equal(stderr.split("\n").length, 2, `one line: ${stderr}`);
    assert.ok(stderr.startsWith("uno-arena-ts-bot: "), stderr);
  }
});

test("a malformed address exits 2 at once with one line", async () => {
  for (const addr of ["foo", "localhost", "grpc://localhost:50051", "http://127.0.0.1:50051/x", "127.0.0.1:99999"]) {
    // returning at all shows it never tried to connect (the bot would retry for ever)
    const { code, stderr } = await run(["--addr", addr, "--token", "t"]);
    assert.equal(code, 2, addr);
    assert.ok(stderr.startsWith(`uno-arena-ts-bot: invalid address ${JSON.stringify(addr)} (`), stderr);
    assert.ok(stderr.endsWith("use HOST:PORT, http://HOST:PORT or https://HOST:PORT\n"), stderr);
    assert.equal(stderr.split("\n").length, 2);
  }
  const { code } = await run(["--addr", "http://127.0.0.1:1", "--tls", "--token", "t"]);
  assert.equal(code, 2, "http:// with --tls");
});

test("a refused token exits 1 with a plain line", async () => {
  const s = server.nextSession(10_000).then(async (session) => {
    await session.next();
    session.fail(16, "INVALID_TOKEN: unknown bot token");
  });
  const { code, stderr } = await run(["--addr", `http://${server.address}`, "--token", "wrong", "--log-level", "silent"]);
  await s;
  assert.equal(code, 1);
  assert.equal(
    stderr,
    "uno-arena-ts-bot: server refused the bot, not reconnecting: server closed the stream: UNAUTHENTICATED (INVALID_TOKEN: unknown bot token)\n",
  );
});

test("--overrun-every N makes every Nth decision wait --overrun-ms", async () => {
  let calls = 0;
  const inner: DecideFn<unknown> = () => {
    calls += 1;
    return 7;
  };
  const slow: number[] = [];
  const decide = overrun(inner, 3, 60);
  // which calls overran is read from the chaos line each logs, not from a time a busy machine
  // could reach anyway; each of them did wait its 60 ms (1 ms: a Node timer's rounding)
  const said: string[] = [];
  const log = { ...silentLogger, info: (m: string) => said.push(m) };
  const ctx = { request: request({ legal: [draw()] }), log } as unknown as Parameters<DecideFn<unknown>>[0];
  for (let i = 1; i <= 7; i++) {
    const before = said.length;
    const t0 = performance.now();
    assert.equal(await decide(ctx), 7);
    if (said.length > before) {
      slow.push(i);
      assert.ok(performance.now() - t0 >= 59, `call ${i} overran by only ${performance.now() - t0} ms`);
    }
  }
  assert.deepEqual(slow, [3, 6]);
  assert.equal(calls, 7);
  assert.equal(overrun(inner, 0, 100), inner, "0 = off");
  await delay(0);
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
