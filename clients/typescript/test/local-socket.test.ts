/**
 * The local-socket shortcut (UNO_ARENA_LOCAL_SOCKET): the tournament's sandbox names the game
 * server's Unix socket, and a plaintext connection goes there instead of through the relay
 * behind the address. TLS connections, and a variable that names no socket, keep the address.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import * as grpc from "@grpc/grpc-js";

import { LOCAL_SOCKET_ENV, UnoBot, localSocket } from "../src/client";
import { BotServiceService, BotServiceServer, PlayRequest, PlayResponse, Prompt } from "../src/gen/uno/v1/bot";
import { ActionKind } from "../src/gen/uno/v1/game";
import { Logger } from "../src/log";

/** How long the test waits for what must happen: generous, for a busy machine. */
const PATIENCE_MS = 20_000;

const dir = mkdtempSync(join(tmpdir(), "uno-ts-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Starts a plain listener on a new Unix socket path (a socket, for stat). */
async function socketFile(name: string): Promise<{ path: string; close: () => void }> {
  const path = join(dir, name);
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(path, resolve));
  return { path, close: () => srv.close() };
}

/** A port nothing listens on (bound once, then released). */
async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

class Lines implements Logger {
  readonly lines: string[] = [];
  debug(m: string): void {
    this.lines.push(m);
  }
  info(m: string): void {
    this.lines.push(m);
  }
  warn(m: string): void {
    this.lines.push(m);
  }
  error(m: string): void {
    this.lines.push(m);
  }
}

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${PATIENCE_MS} ms`)), PATIENCE_MS);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

test("the socket is used only for a plaintext connection to a real socket", async () => {
  const sock = await socketFile("probe.sock");
  try {
    assert.equal(localSocket(sock.path, false), sock.path);
    assert.equal(localSocket(sock.path, true), undefined, "TLS keeps the address");
    assert.equal(localSocket(undefined, false), undefined, "unset");
    assert.equal(localSocket("", false), undefined, "empty");
    const plain = join(dir, "not-a-socket");
    writeFileSync(plain, "");
    assert.equal(localSocket(plain, false), undefined, "a regular file");
    assert.equal(localSocket(dir, false), undefined, "a folder");
    assert.equal(localSocket(join(dir, "missing.sock"), false), undefined, "a missing path");
  } finally {
    sock.close();
  }
});

test("a TLS bot tries its address even when the variable names a socket", async () => {
  const sock = await socketFile("tls.sock");
  const port = await deadPort();
  const logs = new Lines();
  process.env[LOCAL_SOCKET_ENV] = sock.path;
  try {
    const bot = new UnoBot({
      address: `127.0.0.1:${port}`,
      token: "T",
      botName: "ts-tls",
      tls: true,
      decide: () => 0,
      logger: logs,
      reconnect: { initialDelayMs: 5, maxDelayMs: 10, maxAttempts: 0 },
    });
    await assert.rejects(within(bot.run(), "giving up"), /giving up/);
    const text = logs.lines.join("\n");
    assert.match(text, new RegExp(`connecting to 127\\.0\\.0\\.1:${port} as ts-tls`));
    assert.doesNotMatch(text, /unix:/);
  } finally {
    delete process.env[LOCAL_SOCKET_ENV];
    sock.close();
  }
});

test("a bot plays through the socket while its address is dead", async () => {
  const path = join(dir, "server.sock");
  const server = new grpc.Server();
  const seen: { auth?: string; hello?: PlayRequest; answer?: PlayRequest } = {};
  let answered!: () => void;
  const answer = new Promise<void>((resolve) => (answered = resolve));
  const impl: BotServiceServer = {
    play: (call: grpc.ServerDuplexStream<PlayRequest, PlayResponse>) => {
      seen.auth = String(call.metadata.get("authorization")[0]);
      call.on("data", (m: PlayRequest) => {
        if (m.hello) {
          seen.hello = m;
          call.write(PlayResponse.fromPartial({ welcome: { sessionId: "s1", protocolVersion: 1, botName: m.hello.botName } }));
          call.write(
            PlayResponse.fromPartial({
              decisionRequest: {
                requestId: "r1",
                matchId: "m1",
                prompt: Prompt.TURN,
                required: true,
                timeLeftMs: 60_000,
                defaultActionId: 0,
                legalActions: [
                  { id: 0, kind: ActionKind.DRAW },
                  { id: 1070, kind: ActionKind.PLAY },
                ],
              },
            }),
          );
        } else if (m.action || m.actions) {
          seen.answer = m;
          answered();
        }
      });
      call.on("end", () => call.end());
    },
  };
  server.addService(BotServiceService, impl);
  await new Promise<number>((resolve, reject) =>
    server.bindAsync(`unix:${path}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const port = await deadPort();
  const logs = new Lines();
  process.env[LOCAL_SOCKET_ENV] = path;
  const bot = new UnoBot({
    address: `127.0.0.1:${port}`,
    token: "T",
    botName: "ts-socket",
    decide: ({ request }) => request.legalActions.find((a) => a.kind === ActionKind.PLAY)?.id ?? 0,
    logger: logs,
    reconnect: { initialDelayMs: 10, maxDelayMs: 50 },
  });
  const done = bot.run();
  try {
    await within(answer, "the answer through the socket");
  } finally {
    bot.stop(100);
    await within(done, "run() ending after stop()");
    delete process.env[LOCAL_SOCKET_ENV];
    server.forceShutdown();
  }
  assert.equal(seen.auth, "Bearer T");
  assert.equal(seen.hello?.hello?.botName, "ts-socket");
  const action = seen.answer?.action ?? seen.answer?.actions?.actions[0];
  assert.deepEqual({ requestId: action?.requestId, actionId: action?.actionId }, { requestId: "r1", actionId: 1070 });
  assert.ok(
    logs.lines.some((l) => l.startsWith(`connected to unix:${path}:`)),
    `no "connected to unix:${path}" line in:\n${logs.lines.join("\n")}`,
  );
});
