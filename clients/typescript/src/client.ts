/**
 * The SDK: one long-lived BotService.Play stream, your decide function, and everything around it
 * (hello, per-seat state, concurrent matches, deadlines, reconnect with backoff, clean stop).
 */
import * as grpc from "@grpc/grpc-js";
import { statSync } from "node:fs";
import { resolve as resolvePath } from "node:path";

import { Address, AddressError, describeStatus, parseAddress } from "./address";
import {
  ActionResult,
  BotServiceClient,
  DecisionRequest,
  MatchEnded,
  MatchStarted,
  PlayRequest,
  PlayResponse,
  RequestClosed,
  StreamError,
  Welcome,
  closeReasonToJSON,
  promptToJSON,
} from "./gen/uno/v1/bot";
import { errorReasonToJSON } from "./gen/uno/v1/errors";
import { Event, LegalAction, SeatView } from "./gen/uno/v1/game";
import { Logger, consoleLogger, prefixed } from "./log";
import { ActionWriter } from "./outbox";

/** The protocol version this SDK speaks (Hello.protocol_version). */
export const PROTOCOL_VERSION = 1;
/** This SDK's version: the one place it is written. */
export const SDK_VERSION = "0.2.0";

/**
 * An environment variable naming a Unix socket that reaches the same game server as the address.
 * The tournament's sandbox sets it (a bot in the sandbox reaches the server through a relay
 * behind its 127.0.0.1 address; the socket skips that hop). A plaintext connection goes there
 * instead of to the address while the path is a socket (see {@link localSocket}); TLS
 * connections and bots without it use the address. The "connected" log line shows which was
 * used. Every UNO Arena SDK does the same.
 */
export const LOCAL_SOCKET_ENV = "UNO_ARENA_LOCAL_SOCKET";

/**
 * Where a connection attempt goes instead of the address: the absolute form of `path` (the value
 * of {@link LOCAL_SOCKET_ENV}) when it is not empty, the connection is plaintext (`tls` false)
 * and the path is a Unix socket right now; undefined means the address. The SDK asks before
 * every connection attempt.
 */
export function localSocket(path: string | undefined, tls: boolean): string | undefined {
  if (!path || tls) return undefined;
  try {
    return statSync(path).isSocket() ? resolvePath(path) : undefined;
  } catch {
    return undefined; // missing or unreadable: the address
  }
}
/** What the SDK adds to Hello.bot_version: its name and version, and the protocol. */
export const SDK_TAG = `uno-bot-typescript/${SDK_VERSION} uno.v${PROTOCOL_VERSION}`;
/** The server's limit on Hello.bot_version, in characters (bot.proto). */
const MAX_BOT_VERSION = 64;

/**
 * Hello.bot_version for a bot whose own version is `own`: `own`, then {@link SDK_TAG}, as in
 * "1.4.2 uno-bot-typescript/0.2.0 uno.v1" (only the tag if `own` is empty). `own` is cut, by
 * characters (code points), so that the whole stays within the server's 64 characters.
 */
export function helloBotVersion(own: string | undefined): string {
  if (!own) return SDK_TAG;
  const room = MAX_BOT_VERSION - [...SDK_TAG].length - 1;
  const chars = [...own];
  return `${chars.length > room ? chars.slice(0, room).join("") : own} ${SDK_TAG}`;
}
/** Hello.max_batch unless `maxBatch` is given. */
export const DEFAULT_MAX_BATCH = 64;
/** The largest Hello.max_batch the server accepts. */
export const MAX_HELLO_BATCH = 1024;

/**
 * What the SDK keeps for one seat the bot holds in one match; `data` is yours. A bot that holds
 * two seats of a match gets two of these. Created on MatchStarted (or the seat's first request),
 * dropped after MatchEnded.
 */
export interface SeatState<S> {
  readonly matchId: string;
  readonly seat: number;
  /** The latest MatchStarted received for this seat (rules, players, clock), if any. */
  started?: MatchStarted;
  /** Your per-seat stash, created by `BotOptions.initSeatState` (default `{}`). */
  data: S;
}

/** Everything a decide function gets for one DecisionRequest. */
export interface DecisionContext<S> {
  /**
   * The full request (prompt, required, deadline, time_left_ms, default_action_id, rules...).
   * `request.previousResponseMs` is what the server measured for this seat's previous accepted
   * answer: thinking time plus network lag both ways (0 before the first).
   */
  request: DecisionRequest;
  /** Shortcut for `request.view`. */
  view: SeatView;
  /** Shortcut for `request.legal_actions` (never empty). */
  legalActions: LegalAction[];
  /** Events new to this seat (duplicates replayed after a reconnect are removed). */
  events: Event[];
  /** This seat's state; stash your own data in `seat.data`. */
  seat: SeatState<S>;
  /**
   * Aborted when a required request's budget runs out (the SDK then answers the fallback), when
   * the server closes the request, the seat gets its next request, or the stream drops.
   */
  signal: AbortSignal;
  /** Logger whose lines start with "[match <id> seat <n>]". */
  log: Logger;
}

/**
 * Your bot: return one of `ctx.legalActions[i].id`, or `undefined` / `null` to stay silent
 * (fine for optional requests; for required ones the SDK then plays the fallback, see README).
 * May be async; a long computation must be async (or it blocks every seat: Node has one thread).
 */
export type DecideFn<S> = (ctx: DecisionContext<S>) => number | null | undefined | Promise<number | null | undefined>;

export interface ReconnectOptions {
  /** First delay after a dropped stream, in ms [100]. */
  initialDelayMs?: number;
  /** Cap of the delay, in ms; keep it below the server's reconnect grace (5000) [2000]. */
  maxDelayMs?: number;
  /** Give up (run() rejects) after this many consecutive failed attempts [Infinity]. */
  maxAttempts?: number;
}

export interface BotOptions<S> {
  /** Server address: "HOST:PORT" or "http://HOST:PORT" (plaintext), "https://HOST:PORT" (TLS). */
  address: string;
  /** Bot token, sent as "authorization: Bearer <token>". */
  token: string;
  /** Hello.bot_name, 1-64 chars of [A-Za-z0-9_.-]. */
  botName: string;
  /**
   * The bot's own version [none]. Hello.bot_version carries it with the SDK's name and version
   * and the protocol after it (see {@link helloBotVersion}).
   */
  botVersion?: string;
  /** Your decision function. */
  decide: DecideFn<S>;
  /** Creates the per-seat stash `SeatState.data` [() => ({})]. */
  initSeatState?: (matchId: string, seat: number) => S;
  /**
   * TLS for a HOST:PORT address: true for the system roots, or your own credentials [plaintext].
   * An https:// address uses TLS anyway; an http:// address may not be combined with this.
   */
  tls?: boolean | grpc.ChannelCredentials;
  /**
   * The most the SDK keeps back from a required request's time_left_ms for network lag:
   * decide's budget is time_left_ms - min(safetyMarginMs, time_left_ms / 2) [100].
   */
  safetyMarginMs?: number;
  reconnect?: ReconnectOptions;
  logger?: Logger;
  /** Hello.max_concurrent_matches (advisory) [0 = no limit]. */
  maxConcurrentMatches?: number;
  /**
   * Hello.max_batch: when several messages wait for the bot at the same moment, the server may
   * send up to this many in one PlayResponse.batch, which the SDK unpacks and handles one by one,
   * in order. Only the framing changes; it saves CPU on both sides when the bot plays many
   * tables. 0 turns batching off; at most 1024 [64].
   */
  maxBatch?: number;
  /** Extra gRPC channel options. */
  channelOptions?: grpc.ChannelOptions;
  /** Called for every MatchStarted (once per seat, again after a reconnect). */
  onMatchStarted?: (started: MatchStarted, seat: SeatState<S>) => void;
  /** Called for every MatchEnded (once per seat), before the seat's state is dropped. */
  onMatchEnded?: (ended: MatchEnded, seat: SeatState<S>) => void;
}

/**
 * Thrown by run() when the server ends the stream with a status reconnecting cannot fix:
 * UNAUTHENTICATED, PERMISSION_DENIED, FAILED_PRECONDITION, INVALID_ARGUMENT, UNIMPLEMENTED or
 * ABORTED (SESSION_REPLACED: another process of the bot took the session over).
 */
export class FatalStreamError extends Error {
  constructor(
    message: string,
    readonly code: grpc.status,
  ) {
    super(message);
    this.name = "FatalStreamError";
  }
}

/** The statuses that stop reconnecting; every other ending reconnects. */
export const FATAL_CODES: ReadonlySet<grpc.status> = new Set([
  grpc.status.UNAUTHENTICATED,
  grpc.status.PERMISSION_DENIED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.INVALID_ARGUMENT,
  grpc.status.UNIMPLEMENTED,
  grpc.status.ABORTED,
]);

type Call = grpc.ClientDuplexStream<PlayRequest, PlayResponse>;

interface SeatEntry<S> extends SeatState<S> {
  /** Last event sequence processed (Resume cursor, de-duplication). */
  last: bigint;
}

interface OpenRequest {
  readonly request: DecisionRequest;
  readonly key: string;
  readonly controller: AbortController;
  readonly writer: ActionWriter;
  readonly log: Logger;
  /** True once the one retry after a rejection was sent. */
  retried: boolean;
}

interface SessionOutcome {
  welcomed: boolean;
  status?: grpc.StatusObject;
}

const TIMEOUT = Symbol("timeout");
const CLOSED = Symbol("closed");

const seatKey = (matchId: string, seat: number): string => `${matchId}\u0000${seat}`;

/** Delay before reconnect attempt `attempt` (0-based): doubling from the first delay, capped, +-20%. */
export function backoffDelay(attempt: number, opts: ReconnectOptions = {}, random: () => number = Math.random): number {
  const initial = opts.initialDelayMs ?? 100;
  const max = opts.maxDelayMs ?? 2000;
  const base = Math.min(max, initial * Math.pow(2, Math.min(attempt, 30)));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** Decide's budget for a request, in ms from its arrival; undefined: the SDK sets no timer. */
export function decisionBudgetMs(req: DecisionRequest, maxMarginMs = 100): number | undefined {
  if (!req.required || req.timeLeftMs <= 0) return undefined; // optional requests are never timed
  return req.timeLeftMs - Math.min(maxMarginMs, req.timeLeftMs / 2);
}

/** The answer the SDK sends for a required request when decide's own is missing or unusable. */
export function fallbackAction(req: DecisionRequest): number | undefined {
  if (!req.required) return undefined; // silence
  const legal = req.legalActions.map((a) => a.id);
  if (req.defaultActionId !== undefined && legal.includes(req.defaultActionId)) return req.defaultActionId;
  return legal[0];
}

/**
 * A bot connected to UNO Arena. `run()` keeps one Play stream open (reconnecting when it drops,
 * on a new channel each time) until `stop()`; every DecisionRequest goes to `decide`,
 * concurrently across matches and seats.
 */
export class UnoBot<S = Record<string, unknown>> {
  /** The parsed server address. */
  readonly address: Address;
  private readonly opts: BotOptions<S>;
  private readonly log: Logger;
  private readonly creds: grpc.ChannelCredentials;
  /** Where the current (or last) connection attempt went: the address, or "unix:PATH". */
  private target: string;
  private readonly seats = new Map<string, SeatEntry<S>>();
  private readonly open = new Map<string, OpenRequest>();
  private call?: Call;
  private stopping = false;
  private running = false;
  private wake?: () => void;
  private _sessionId = "";

  /** Throws an {@link AddressError} for a malformed address, before anything connects. */
  constructor(options: BotOptions<S>) {
    this.opts = options;
    this.address = parseAddress(options.address);
    if (this.address.scheme === "http" && options.tls) {
      throw new AddressError(options.address, "http:// is plaintext but the tls option is set");
    }
    const maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
    if (!Number.isInteger(maxBatch) || maxBatch < 0 || maxBatch > MAX_HELLO_BATCH) {
      throw new RangeError(`maxBatch must be a whole number from 0 to ${MAX_HELLO_BATCH} (got ${String(options.maxBatch)})`);
    }
    this.log = options.logger ?? consoleLogger();
    this.creds =
      typeof options.tls === "object"
        ? options.tls
        : options.tls === true || this.address.tls
          ? grpc.credentials.createSsl()
          : grpc.credentials.createInsecure();
    this.target = this.address.target;
  }

  /** Welcome.session_id of the current (or last) session; "" before the first Welcome. */
  get sessionId(): string {
    return this._sessionId;
  }

  /** The state of every seat the bot holds now. */
  get activeSeats(): SeatState<S>[] {
    return [...this.seats.values()];
  }

  /** The state of one seat, if the bot holds it. */
  seatState(matchId: string, seat: number): SeatState<S> | undefined {
    return this.seats.get(seatKey(matchId, seat));
  }

  /**
   * Connects and plays until stop() (resolves) or a fatal refusal / too many failed reconnects
   * (rejects). Call once.
   */
  async run(): Promise<void> {
    if (this.running) throw new Error("UnoBot.run() is already running");
    this.running = true;
    const reconnect = this.opts.reconnect ?? {};
    const maxAttempts = reconnect.maxAttempts ?? Infinity;
    let failures = 0;
    try {
      while (!this.stopping) {
        const outcome = await this.session();
        if (this.stopping) break;
        const st = outcome.status;
        const why = describeStatus(st, this.target);
        if (st && FATAL_CODES.has(st.code)) throw new FatalStreamError(`server refused the bot, not reconnecting: ${why}`, st.code);
        if (outcome.welcomed) failures = 0; // however a welcomed stream ends, start over from the first delay
        if (failures >= maxAttempts) throw new Error(`giving up after ${failures} failed reconnect attempts: ${why}`);
        const delay = backoffDelay(failures, reconnect);
        failures += 1;
        this.log.warn(`reconnecting in ${delay} ms (attempt ${failures}): ${why}`);
        await this.sleep(delay);
      }
    } finally {
      this.running = false;
      this.abortAll("stopped");
      this.log.info("bot stopped");
    }
  }

  /**
   * Stops the bot: half-closes the stream (the server starts the reconnect grace for its seats),
   * cancels it if the server has not ended it within `graceMs`, and makes run() resolve.
   */
  stop(graceMs = 1000): void {
    if (this.stopping) return;
    this.stopping = true;
    this.log.info("stopping");
    this.wake?.();
    const call = this.call;
    if (call) {
      try {
        call.end();
      } catch {
        /* already ended */
      }
      setTimeout(() => call.cancel(), graceMs).unref();
    }
  }

  // ------------------------------------------------------------------ one stream

  /** One Play stream on a channel of its own (a reused channel's own backoff could outlast ours). */
  private session(): Promise<SessionOutcome> {
    return new Promise((resolve) => {
      const socket = localSocket(process.env[LOCAL_SOCKET_ENV], this.creds._isSecure());
      this.target = socket === undefined ? this.address.target : `unix:${socket}`;
      const client = new BotServiceClient(this.target, this.creds, this.opts.channelOptions);
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${this.opts.token}`);
      const call = client.play(metadata);
      this.call = call;
      const writer = new ActionWriter((msg, written) => this.send(call, msg, written));
      let welcomed = false;
      let done = false;
      const finish = (status?: grpc.StatusObject): void => {
        if (done) return;
        done = true;
        if (this.call === call) this.call = undefined;
        this.abortAll("stream ended");
        client.close();
        resolve({ welcomed, status });
      };
      call.on("data", (resp: PlayResponse) => {
        if (resp.welcome) welcomed = true;
        if (resp.batch) {
          // Several messages that were waiting at once (Hello.max_batch): each exactly as if it
          // had come alone, in order.
          for (const m of resp.batch.messages) this.dispatch(m, writer);
        } else {
          this.dispatch(resp, writer);
        }
      });
      call.on("error", (err: grpc.ServiceError) => finish({ code: err.code, details: err.details, metadata: err.metadata }));
      call.on("status", (st: grpc.StatusObject) => finish(st));
      if (this.stopping) {
        call.cancel();
        return;
      }
      const cursors = [...this.seats.values()].map((s) => ({ matchId: s.matchId, seat: s.seat, lastSequence: s.last }));
      const hello = PlayRequest.fromPartial({
        hello: {
          botName: this.opts.botName,
          botVersion: helloBotVersion(this.opts.botVersion),
          protocolVersion: PROTOCOL_VERSION,
          maxConcurrentMatches: this.opts.maxConcurrentMatches ?? 0,
          maxBatch: this.opts.maxBatch ?? DEFAULT_MAX_BATCH,
          resume: this._sessionId ? { sessionId: this._sessionId, cursors } : undefined,
        },
      });
      this.log.info(
        `connecting to ${this.target} as ${this.opts.botName}` + (this._sessionId ? ` (resuming ${this._sessionId})` : ""),
      );
      this.send(call, hello);
    });
  }

  /** Writes to the stream if it is still the current one; `written` runs once the stream took it. */
  private send(call: Call, msg: PlayRequest, written?: () => void): boolean {
    if (this.call !== call || call.writableEnded) return false;
    try {
      call.write(msg, written);
      return true;
    } catch (err) {
      this.log.warn(`could not write to the stream: ${describe(err)}`);
      return false;
    }
  }

  /** Handles one server message; never waits for the bot's code. */
  private dispatch(resp: PlayResponse, writer: ActionWriter): void {
    try {
      this.handle(resp, writer);
    } catch (err) {
      this.log.error(`error handling a server message: ${describe(err)}`);
    }
  }

  private handle(resp: PlayResponse, writer: ActionWriter): void {
    if (resp.welcome) this.onWelcome(resp.welcome);
    else if (resp.decisionRequest) this.onDecisionRequest(resp.decisionRequest, writer);
    else if (resp.actionResult) this.onActionResult(resp.actionResult);
    else if (resp.requestClosed) this.onRequestClosed(resp.requestClosed, writer);
    else if (resp.matchStarted) this.onMatchStarted(resp.matchStarted);
    else if (resp.matchEnded) this.onMatchEnded(resp.matchEnded);
    else if (resp.seatEvents) this.newEvents(this.seatEntry(resp.seatEvents.matchId, resp.seatEvents.seat), resp.seatEvents.events);
    else if (resp.error) this.onStreamError(resp.error);
    // Pong and kinds unknown to this SDK version are ignored.
  }

  private onWelcome(w: Welcome): void {
    const reconnect = this._sessionId !== "";
    this._sessionId = w.sessionId;
    this.log.info(
      `connected to ${this.target}: session ${w.sessionId}, server ${w.serverVersion}, playing as ${w.botName}` +
        (w.resumed ? ", resumed" : "") +
        (w.seats.length ? `, ${w.seats.length} seat(s) in running matches` : ""),
    );
    if (reconnect) {
      // Seats not listed were lost while the bot was away (the takeover bot finished them).
      const held = new Set(w.seats.map((s) => seatKey(s.matchId, s.seat)));
      for (const [key, s] of this.seats) {
        if (!held.has(key)) {
          this.seatLog(s.matchId, s.seat).warn("seat no longer held after the reconnect; forgetting it");
          this.seats.delete(key);
        }
      }
    }
    for (const s of w.seats) this.seatEntry(s.matchId, s.seat);
  }

  private onStreamError(e: StreamError): void {
    const text = `stream error ${grpc.status[e.code] ?? e.code} / ${errorReasonToJSON(e.reason)}: ${e.message}`;
    if (e.fatal) this.log.error(text + " (the server ends the stream)");
    else this.log.warn(text);
  }

  // ------------------------------------------------------------------ seats and events

  private seatEntry(matchId: string, seat: number): SeatEntry<S> {
    const key = seatKey(matchId, seat);
    let s = this.seats.get(key);
    if (!s) {
      const data = this.opts.initSeatState ? this.opts.initSeatState(matchId, seat) : ({} as S);
      s = { matchId, seat, data, last: 0n };
      this.seats.set(key, s);
    }
    return s;
  }

  /** Records the events' sequences and returns the ones not seen before. */
  private newEvents(s: SeatEntry<S>, events: Event[]): Event[] {
    const fresh: Event[] = [];
    for (const ev of events) {
      if (ev.sequence > s.last) {
        fresh.push(ev);
        s.last = ev.sequence;
      }
    }
    return fresh;
  }

  private onMatchStarted(ms: MatchStarted): void {
    const s = this.seatEntry(ms.matchId, ms.seat);
    const first = s.started === undefined;
    s.started = ms;
    if (first) {
      const players = ms.seats.map((p) => p.player?.botName ?? `builtin:${p.player?.builtin ?? "?"}`).join(", ");
      this.seatLog(ms.matchId, ms.seat).info(`match started: ${players}`);
    }
    this.hook("onMatchStarted", () => this.opts.onMatchStarted?.(ms, s), ms.matchId, ms.seat);
  }

  private onMatchEnded(me: MatchEnded): void {
    const key = seatKey(me.matchId, me.seat);
    const s = this.seatEntry(me.matchId, me.seat);
    const fresh = this.newEvents(s, me.events);
    for (const [id, o] of this.open) {
      if (o.key === key) {
        o.controller.abort(CLOSED);
        this.open.delete(id);
        o.writer.drop(id); // an answer still queued is late: not sent
      }
    }
    this.seatLog(me.matchId, me.seat).info(
      `match ended: ${me.won ? "won" : "lost"}, winners [${me.winners.join(", ")}], totals [${me.totals.join(", ")}], ` +
        `strikes ${me.strikes}, rejected ${me.rejectedActions}` +
        (me.takenOver ? ", taken over" : ""),
    );
    const ended = fresh.length === me.events.length ? me : { ...me, events: fresh };
    this.hook("onMatchEnded", () => this.opts.onMatchEnded?.(ended, s), me.matchId, me.seat);
    this.seats.delete(key);
  }

  private hook(name: string, f: () => void, matchId: string, seat: number): void {
    try {
      f();
    } catch (err) {
      this.seatLog(matchId, seat).error(`${name} threw: ${describe(err)}`);
    }
  }

  private seatLog(matchId: string, seat: number): Logger {
    return prefixed(this.log, `[match ${matchId} seat ${seat}] `);
  }

  // ------------------------------------------------------------------ decisions

  private onDecisionRequest(req: DecisionRequest, writer: ActionWriter): void {
    const received = performance.now();
    const key = seatKey(req.matchId, req.seat);
    const log = this.seatLog(req.matchId, req.seat);
    const seat = this.seatEntry(req.matchId, req.seat);
    const events = this.newEvents(seat, req.events);
    // At most one request is open per seat: a new one means the old one is over (this is how an
    // answered request is forgotten: an accepted answer gets no reply).
    for (const [id, o] of this.open) {
      if (o.key === key || id === req.requestId) {
        o.controller.abort(CLOSED);
        this.open.delete(id);
        if (id !== req.requestId) o.writer.drop(id); // a queued answer to the old one is late
      }
    }
    const entry: OpenRequest = { request: req, key, controller: new AbortController(), writer, log, retried: false };
    this.open.set(req.requestId, entry);
    const budget = decisionBudgetMs(req, this.opts.safetyMarginMs ?? 100);
    log.debug(
      `request ${req.requestId}: ${promptToJSON(req.prompt)}${req.required ? "" : " (optional)"}${req.resent ? " (resent)" : ""}, ` +
        `${req.legalActions.length} legal action(s), ${req.timeLeftMs} ms left` +
        (budget === undefined ? "" : `, budget ${budget} ms`) +
        (req.previousResponseMs ? `, previous answer took ${req.previousResponseMs} ms at the server` : ""),
    );
    void this.decide(entry, seat, events, budget, received);
  }

  private async decide(entry: OpenRequest, seat: SeatEntry<S>, events: Event[], budget: number | undefined, received: number): Promise<void> {
    const req = entry.request;
    const log = entry.log;
    const signal = entry.controller.signal;
    let timer: NodeJS.Timeout | undefined;
    if (budget !== undefined) {
      timer = setTimeout(() => entry.controller.abort(TIMEOUT), Math.max(0, budget - (performance.now() - received)));
    }
    const interrupted = new Promise<typeof TIMEOUT | typeof CLOSED>((resolve) => {
      signal.addEventListener("abort", () => resolve(signal.reason === TIMEOUT ? TIMEOUT : CLOSED), { once: true });
    });
    const ctx: DecisionContext<S> = {
      request: req,
      view: req.view ?? SeatView.fromPartial({}),
      legalActions: req.legalActions,
      events,
      seat,
      signal,
      log,
    };
    const decided = Promise.resolve().then(() => this.opts.decide(ctx));
    let result: number | null | undefined | typeof TIMEOUT | typeof CLOSED;
    let failed = false;
    try {
      result = await Promise.race([decided, interrupted]);
    } catch (err) {
      log.error(`decide failed on request ${req.requestId}: ${describe(err)}`);
      result = undefined;
      failed = true;
    } finally {
      if (timer) clearTimeout(timer);
    }
    if (result === TIMEOUT || result === CLOSED) {
      // The late result of decide is dropped; say so once.
      decided.then(
        (late) => log.info(`dropped the late result of decide for request ${req.requestId}: ${String(late)}`),
        (err: unknown) => log.info(`decide failed late on request ${req.requestId}: ${describe(err)}`),
      );
    }
    if (this.open.get(req.requestId) !== entry || result === CLOSED) return; // closed, superseded or stream gone
    if (!signal.aborted) entry.controller.abort(CLOSED); // decide is over: release anything it still waits on

    let id: number | undefined;
    if (result === TIMEOUT) {
      id = fallbackAction(req);
      log.warn(
        `decide did not answer request ${req.requestId} within its ${budget} ms budget (time_left ${req.timeLeftMs} ms) on ` +
          `${promptToJSON(req.prompt)}: answering the fallback ${id}`,
      );
    } else if (typeof result === "number" && req.legalActions.some((a) => a.id === result)) {
      id = result;
      const elapsed = Math.round(performance.now() - received);
      if (budget !== undefined && elapsed > budget) {
        log.warn(`decide took ${elapsed} ms, over its ${budget} ms budget (a synchronous decide cannot be interrupted)`);
      }
    } else if (result === undefined || result === null) {
      id = fallbackAction(req);
      if (req.required && !failed) log.warn(`decide returned nothing for the required request ${req.requestId}: answering the fallback ${id}`);
    } else {
      id = fallbackAction(req);
      log.error(
        `decide returned ${String(result)} for request ${req.requestId}, not a legal action id: ` +
          (id === undefined ? "staying silent" : `answering the fallback ${id}`),
      );
    }
    if (id === undefined) {
      this.open.delete(req.requestId); // silence is the answer to an optional chance
      return;
    }
    this.answer(entry, id);
  }

  /**
   * Sends an Action: at once, or together with the other answers given while a write is in
   * flight (see ActionWriter). An accepted answer gets no reply: the request stays open, for the
   * one retry after a rejection, until its RequestClosed, the seat's next request or the match's
   * end.
   */
  private answer(entry: OpenRequest, actionId: number): void {
    const req = entry.request;
    if (!entry.writer.send({ requestId: req.requestId, actionId })) {
      this.open.delete(req.requestId);
      return;
    }
    const desc = req.legalActions.find((a) => a.id === actionId)?.description ?? "";
    entry.log.debug(`answer ${req.requestId}: ${actionId} ${desc}`);
  }

  /** An ActionResult is always a rejection: accepted answers get no reply. */
  private onActionResult(r: ActionResult): void {
    const entry = this.open.get(r.requestId);
    const log = entry?.log ?? this.seatLog(r.matchId, r.seat);
    const what =
      `${grpc.status[r.code] ?? r.code} / ${errorReasonToJSON(r.reason)}: ${r.message}` +
      (r.requestOpen ? " (request still open)" : "");
    if (r.code === grpc.status.ABORTED) {
      // late: the request closed while the answer was on its way, a race a correct bot meets
      log.info(`answer ${r.actionId ?? "(none)"} on ${r.requestId} arrived late (request already closed): ${what}`);
    } else {
      log.warn(`action ${r.actionId ?? "(none)"} on ${r.requestId} rejected: ${what}`);
    }
    if (!entry) return;
    if (!r.requestOpen || !entry.request.required || entry.retried) {
      if (entry.retried && r.requestOpen) log.error(`not answering ${r.requestId} a third time (one retry per request)`);
      this.open.delete(r.requestId);
      return;
    }
    // Exactly one retry: the fallback, or if that is what was rejected, another legal id.
    entry.retried = true;
    let retry = fallbackAction(entry.request);
    if (retry === r.actionId) retry = entry.request.legalActions.find((a) => a.id !== r.actionId)?.id ?? retry;
    if (retry === undefined) return;
    log.info(`retrying ${r.requestId} once with the fallback ${retry}`);
    this.answer(entry, retry);
  }

  private onRequestClosed(rc: RequestClosed, writer: ActionWriter): void {
    const entry = this.open.get(rc.requestId);
    if (entry) {
      entry.controller.abort(CLOSED);
      this.open.delete(rc.requestId);
    }
    // An answer still waiting behind a write in flight is never sent: the request is closed.
    const dropped = writer.drop(rc.requestId);
    const log = this.seatLog(rc.matchId, rc.seat);
    const text =
      `request ${rc.requestId} closed: ${closeReasonToJSON(rc.reason)}` +
      (rc.appliedActionId !== undefined ? `, server applied ${rc.appliedActionId}` : "") +
      `, strikes ${rc.strikes}`;
    if (rc.appliedActionId !== undefined) log.warn(text);
    else log.debug(text);
    if (dropped) log.debug(`dropped the queued answer to ${rc.requestId}`);
  }

  private abortAll(why: string): void {
    for (const o of this.open.values()) o.controller.abort(CLOSED);
    if (this.open.size) this.log.debug(`${why}: dropped ${this.open.size} open request(s); the server re-sends them on resume`);
    this.open.clear();
  }

  /** Number of requests the SDK still tracks (tests). */
  get openRequests(): number {
    return this.open.size;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    }).then(() => {
      this.wake = undefined;
    });
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
