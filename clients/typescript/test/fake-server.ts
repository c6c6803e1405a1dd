/** An in-process fake of the server side of BotService.Play, for the SDK tests. */
import * as grpc from "@grpc/grpc-js";

import { BotServiceService, BotServiceServer, PlayRequest, PlayResponse } from "../src/gen/uno/v1/bot";
import type { DeepPartial } from "../src/gen/uno/v1/bot";

type ServerCall = grpc.ServerDuplexStream<PlayRequest, PlayResponse>;

/** One Play stream as the server sees it. */
/**
 * How long a test waits for something that must happen: generous, for a busy machine (the test
 * runner's own limit is 30 s a test). Nothing passes by waiting this long.
 */
export const PATIENCE_MS = 20_000;

export class FakeSession {
  readonly metadata: grpc.Metadata;
  /** The client's "ip:port": a new TCP connection (a new channel) has a new port. */
  readonly peer: string;
  /** When the stream arrived (performance.now()). */
  readonly openedAt = performance.now();
  private readonly inbox: PlayRequest[] = [];
  private readonly waiters: Array<(m: PlayRequest | undefined) => void> = [];
  /** True once the client half-closed or cancelled. */
  clientGone = false;
  /** The size of every ActionBatch received (its actions reach `next()` one by one). */
  readonly batches: number[] = [];
  /** How many lone Actions were received. */
  singles = 0;

  constructor(readonly call: ServerCall) {
    this.metadata = call.metadata;
    this.peer = call.getPeer();
    call.on("data", (m: PlayRequest) => {
      if (m.actions) {
        // Applied in order exactly as if each had come alone: so the tests see them.
        this.batches.push(m.actions.actions.length);
        for (const action of m.actions.actions) this.deliver(PlayRequest.fromPartial({ action }));
        return;
      }
      if (m.action) this.singles += 1;
      this.deliver(m);
    });
    const gone = (): void => {
      this.clientGone = true;
      for (const w of this.waiters.splice(0)) w(undefined);
    };
    call.on("end", gone);
    call.on("cancelled", gone);
    call.on("error", gone);
  }

  private deliver(m: PlayRequest): void {
    const w = this.waiters.shift();
    if (w) w(m);
    else this.inbox.push(m);
  }

  /**
   * The next message from the bot (each Action of an ActionBatch as if it had come alone);
   * resolves undefined if the bot left. A message must come: it waits at least PATIENCE_MS (a
   * shorter timeout would only fail a busy machine), then rejects.
   */
  next(timeoutMs = PATIENCE_MS): Promise<PlayRequest | undefined> {
    return this.within(Math.max(timeoutMs, PATIENCE_MS));
  }

  private within(timeoutMs: number): Promise<PlayRequest | undefined> {
    const queued = this.inbox.shift();
    if (queued) return Promise.resolve(queued);
    if (this.clientGone) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new Error(`no message from the bot within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (m: PlayRequest | undefined): void => {
        clearTimeout(timer);
        resolve(m);
      };
      this.waiters.push(waiter);
    });
  }

  /** Resolves with the next message if one arrives within `ms`, else undefined. */
  async maybeNext(ms: number): Promise<PlayRequest | undefined> {
    try {
      return await this.within(ms);
    } catch {
      return undefined;
    }
  }

  send(resp: DeepPartial<PlayResponse>): void {
    this.call.write(PlayResponse.fromPartial(resp));
  }

  /** Ends the stream with an error status (what a dropped or refused stream looks like). */
  fail(code: grpc.status, details: string): void {
    this.call.emit("error", { code, details, metadata: new grpc.Metadata() });
  }

  /** Ends the stream with OK. */
  end(): void {
    this.call.end();
  }
}

export class FakeBotServer {
  readonly sessions: FakeSession[] = [];
  private readonly pending: FakeSession[] = [];
  private readonly waiters: Array<(s: FakeSession) => void> = [];

  private constructor(
    readonly server: grpc.Server,
    readonly port: number,
  ) {}

  /** Starts on 127.0.0.1:`wanted` (0: a free port). */
  static async start(wanted = 0): Promise<FakeBotServer> {
    const server = new grpc.Server();
    let fake: FakeBotServer | undefined;
    const early: ServerCall[] = [];
    const impl: BotServiceServer = {
      play: (call: ServerCall) => {
        if (fake) fake.accept(call);
        else early.push(call);
      },
    };
    server.addService(BotServiceService, impl);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${wanted}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    fake = new FakeBotServer(server, port);
    for (const c of early) fake.accept(c);
    return fake;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  private accept(call: ServerCall): void {
    const s = new FakeSession(call);
    this.sessions.push(s);
    const w = this.waiters.shift();
    if (w) w(s);
    else this.pending.push(s);
  }

  /** Handshakes: accept the next stream, check its Hello and answer Welcome. */
  async handshake(sessionId = "s1", seats: Array<{ matchId: string; seat: number }> = []): Promise<{ session: FakeSession; hello: PlayRequest }> {
    const session = await this.nextSession();
    const hello = await session.next();
    if (!hello?.hello) throw new Error(`the first message is not a Hello: ${JSON.stringify(hello)}`);
    session.send({ welcome: { sessionId, serverVersion: "fake", protocolVersion: 1, botName: hello.hello.botName, seats } });
    return { session, hello };
  }

  /** The next Play stream opened by a bot (waiting at least PATIENCE_MS, as `next` does). */
  nextSession(timeoutMs = PATIENCE_MS): Promise<FakeSession> {
    timeoutMs = Math.max(timeoutMs, PATIENCE_MS);
    const s = this.pending.shift();
    if (s) return Promise.resolve(s);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no Play stream within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push((session) => {
        clearTimeout(timer);
        resolve(session);
      });
    });
  }

  stop(): void {
    this.server.forceShutdown();
  }
}
