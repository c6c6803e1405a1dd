/**
 * The SDK: one long-lived BotService.Play stream, your decide function, and everything around it
 * (hello, per-match state, concurrent matches, deadlines, reconnect with backoff, clean stop).
 */
import * as grpc from "@grpc/grpc-js";

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
import { ErrorReason, errorReasonToJSON } from "./gen/uno/v1/errors";
import { Event, LegalAction, SeatView } from "./gen/uno/v1/game";
import { Logger, consoleLogger, prefixed } from "./log";

/** The protocol version this SDK speaks (Hello.protocol_version). */
export const PROTOCOL_VERSION = 1;

/** What the SDK keeps per match; `data` is yours. Dropped once every seat of the match ended. */
export interface MatchState<S> {
  readonly matchId: string;
  /** Seats this bot holds in the match (usually one; a bot may hold several). */
  readonly seats: ReadonlySet<number>;
  /** The latest MatchStarted received for the match (rules, players, clock), if any. */
  started?: MatchStarted;
  /** Your per-match stash, created by `BotOptions.initMatchState` (default `{}`). */
  data: S;
}

/** Everything a decide function gets for one DecisionRequest. */
export interface DecisionContext<S> {
  /** The full request (prompt, required, deadline, time_left_ms, default_action_id, rules...). */
  request: DecisionRequest;
  /** Shortcut for `request.view`. */
  view: SeatView;
  /** Shortcut for `request.legal_actions` (never empty). */
  legalActions: LegalAction[];
  /** Events new to this seat (duplicates replayed after a reconnect are removed). */
  events: Event[];
  /** Per-match state; stash your own data in `match.data`. */
  match: MatchState<S>;
  /** Aborted when the time budget runs out, the request closes or the stream drops. */
  signal: AbortSignal;
  /** Logger whose lines start with "[match <id> seat <n>]". */
  log: Logger;
}

/**
 * Your bot: return one of `ctx.legalActions[i].id`, or `undefined` / `null` to stay silent
 * (fine for optional requests; for required ones the SDK then plays the fallback, see README).
 * May be async.
 */
export type DecideFn<S> = (ctx: DecisionContext<S>) => number | null | undefined | Promise<number | null | undefined>;

export interface ReconnectOptions {
  /** First delay after a dropped stream, in ms [250]. */
  initialDelayMs?: number;
  /** Cap of the delay, in ms [10000]. */
  maxDelayMs?: number;
  /** Growth factor per failed attempt [2]. */
  multiplier?: number;
  /** Give up (run() rejects) after this many consecutive failed attempts [Infinity]. */
  maxAttempts?: number;
}

export interface BotOptions<S> {
  /** Server address, "host:port". */
  address: string;
  /** Bot token, sent as "authorization: Bearer <token>". */
  token: string;
  /** Hello.bot_name, 1-64 chars of [A-Za-z0-9_.-]. */
  botName: string;
  /** Hello.bot_version [SDK version]. */
  botVersion?: string;
  /** Your decision function. */
  decide: DecideFn<S>;
  /** Creates the per-match stash `MatchState.data` [() => ({})]. */
  initMatchState?: (matchId: string) => S;
  /** true for TLS with the system roots, or your own credentials [insecure]. */
  tls?: boolean | grpc.ChannelCredentials;
  /** Answer this many ms before the deadline, to allow for network lag [50]. */
  safetyMarginMs?: number;
  reconnect?: ReconnectOptions;
  logger?: Logger;
  /** Hello.max_concurrent_matches (advisory) [0 = no limit]. */
  maxConcurrentMatches?: number;
  /** Extra gRPC channel options. */
  channelOptions?: grpc.ChannelOptions;
  /** Called for every MatchStarted (once per seat). */
  onMatchStarted?: (started: MatchStarted, match: MatchState<S>) => void;
  /** Called for every MatchEnded (once per seat), before the match state is dropped. */
  onMatchEnded?: (ended: MatchEnded, match: MatchState<S>) => void;
}

/** Thrown by run() when the server refuses the bot for good (bad token, bad name...). */
export class FatalStreamError extends Error {
  constructor(
    message: string,
    readonly code: grpc.status,
    readonly reason?: ErrorReason,
  ) {
    super(message);
    this.name = "FatalStreamError";
  }
}

interface MatchEntry<S> extends MatchState<S> {
  readonly seats: Set<number>;
}

interface OpenRequest {
  readonly request: DecisionRequest;
  readonly controller: AbortController;
  readonly call: grpc.ClientDuplexStream<PlayRequest, PlayResponse>;
  readonly legalIds: ReadonlySet<number>;
  /** Ids sent so far (the first answer, then at most one retry after a rejection). */
  readonly sent: number[];
}

interface SessionOutcome {
  welcomed: boolean;
  status?: grpc.StatusObject;
  fatal?: FatalStreamError;
}

const TIMEOUT = Symbol("timeout");
const CLOSED = Symbol("closed");
const FATAL_CODES = new Set([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.FAILED_PRECONDITION]);

const seatKey = (matchId: string, seat: number): string => `${matchId}\u0000${seat}`;

/** Delay before reconnect attempt `attempt` (0-based): capped exponential with equal jitter. */
export function backoffDelay(attempt: number, opts: ReconnectOptions = {}, random: () => number = Math.random): number {
  const initial = opts.initialDelayMs ?? 250;
  const max = opts.maxDelayMs ?? 10_000;
  const mult = opts.multiplier ?? 2;
  const ceiling = Math.min(max, initial * Math.pow(mult, attempt));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * A bot connected to UNO Arena. `run()` keeps one Play stream open (reconnecting when it drops)
 * until `stop()`; every DecisionRequest goes to `decide`, concurrently across matches and seats.
 */
export class UnoBot<S = Record<string, unknown>> {
  private readonly opts: BotOptions<S>;
  private readonly log: Logger;
  private readonly client: BotServiceClient;
  private readonly matches = new Map<string, MatchEntry<S>>();
  /** Last event sequence processed per (match, seat), for Resume cursors and de-duplication. */
  private readonly cursors = new Map<string, { matchId: string; seat: number; last: bigint }>();
  private readonly open = new Map<string, OpenRequest>();
  private call?: grpc.ClientDuplexStream<PlayRequest, PlayResponse>;
  private stopping = false;
  private running = false;
  private wake?: () => void;
  private lastStreamError?: StreamError;
  private _sessionId = "";

  constructor(options: BotOptions<S>) {
    this.opts = options;
    this.log = options.logger ?? consoleLogger();
    const creds =
      options.tls === true
        ? grpc.credentials.createSsl()
        : options.tls
          ? options.tls
          : grpc.credentials.createInsecure();
    this.client = new BotServiceClient(options.address, creds, options.channelOptions);
  }

  /** Welcome.session_id of the current (or last) session; "" before the first Welcome. */
  get sessionId(): string {
    return this._sessionId;
  }

  /** Matches currently tracked (read-only view). */
  get activeMatches(): ReadonlyMap<string, MatchState<S>> {
    return this.matches;
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
        if (outcome.fatal) throw outcome.fatal;
        if (outcome.welcomed) failures = 0;
        if (failures >= maxAttempts) {
          throw new Error(`giving up after ${failures} failed reconnect attempts`);
        }
        const delay = backoffDelay(failures, reconnect);
        failures += 1;
        const st = outcome.status;
        this.log.warn(
          `stream ended (${st ? `${grpc.status[st.code] ?? st.code}: ${st.details}` : "no status"}); ` +
            `reconnecting in ${delay} ms (attempt ${failures})`,
        );
        await this.sleep(delay);
      }
    } finally {
      this.running = false;
      this.abortAll("stopped");
      this.client.close();
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

  private session(): Promise<SessionOutcome> {
    return new Promise((resolve) => {
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${this.opts.token}`);
      const call = this.client.play(metadata);
      this.call = call;
      this.lastStreamError = undefined;
      let welcomed = false;
      let done = false;
      const finish = (status?: grpc.StatusObject): void => {
        if (done) return;
        done = true;
        if (this.call === call) this.call = undefined;
        this.abortAll("stream ended");
        let fatal: FatalStreamError | undefined;
        const reason = this.lastStreamError?.reason;
        if (status && !this.stopping) {
          if (FATAL_CODES.has(status.code) || reason === ErrorReason.SESSION_REPLACED) {
            const why = reason ? ` / ${errorReasonToJSON(reason)}` : "";
            fatal = new FatalStreamError(
              `server refused the bot: ${grpc.status[status.code]}${why}: ${status.details}`,
              status.code,
              reason,
            );
          }
        }
        resolve({ welcomed, status, fatal });
      };
      call.on("data", (resp: PlayResponse) => {
        if (resp.welcome) welcomed = true;
        try {
          this.onResponse(resp, call);
        } catch (err) {
          this.log.error(`error handling a server message: ${describe(err)}`);
        }
      });
      call.on("error", (err: grpc.ServiceError) => finish({ code: err.code, details: err.details, metadata: err.metadata }));
      call.on("status", (st: grpc.StatusObject) => finish(st));
      if (this.stopping) {
        call.cancel();
        return;
      }
      const cursors = [...this.cursors.values()].map((c) => ({ matchId: c.matchId, seat: c.seat, lastSequence: c.last }));
      const hello = PlayRequest.fromPartial({
        hello: {
          botName: this.opts.botName,
          botVersion: this.opts.botVersion ?? "uno-arena-bot-ts 0.1.0",
          protocolVersion: PROTOCOL_VERSION,
          maxConcurrentMatches: this.opts.maxConcurrentMatches ?? 0,
          resume: this._sessionId ? { sessionId: this._sessionId, cursors } : undefined,
        },
      });
      this.log.info(
        `connecting to ${this.opts.address} as ${this.opts.botName}` + (this._sessionId ? ` (resuming ${this._sessionId})` : ""),
      );
      this.send(call, hello);
    });
  }

  private send(call: grpc.ClientDuplexStream<PlayRequest, PlayResponse>, msg: PlayRequest): boolean {
    if (this.call !== call || call.writableEnded) return false;
    try {
      call.write(msg);
      return true;
    } catch (err) {
      this.log.warn(`could not write to the stream: ${describe(err)}`);
      return false;
    }
  }

  private onResponse(resp: PlayResponse, call: grpc.ClientDuplexStream<PlayRequest, PlayResponse>): void {
    if (resp.welcome) this.onWelcome(resp.welcome);
    else if (resp.decisionRequest) void this.onDecisionRequest(resp.decisionRequest, call);
    else if (resp.actionResult) this.onActionResult(resp.actionResult);
    else if (resp.requestClosed) this.onRequestClosed(resp.requestClosed);
    else if (resp.matchStarted) this.onMatchStarted(resp.matchStarted);
    else if (resp.matchEnded) this.onMatchEnded(resp.matchEnded);
    else if (resp.seatEvents) this.newEvents(resp.seatEvents.matchId, resp.seatEvents.seat, resp.seatEvents.events);
    else if (resp.error) this.onStreamError(resp.error);
    // Pong and kinds unknown to this SDK version are ignored.
  }

  private onWelcome(w: Welcome): void {
    this._sessionId = w.sessionId;
    this.log.info(
      `welcome: session ${w.sessionId}, server ${w.serverVersion}, playing as ${w.botName}` +
        (w.resumed ? ", resumed" : "") +
        (w.seats.length ? `, ${w.seats.length} seat(s) in running matches` : ""),
    );
    for (const s of w.seats) this.matchEntry(s.matchId, s.seat);
  }

  private onStreamError(e: StreamError): void {
    this.lastStreamError = e;
    const text = `stream error ${grpc.status[e.code] ?? e.code} / ${errorReasonToJSON(e.reason)}: ${e.message}`;
    if (e.fatal) this.log.error(text + " (the server ends the stream)");
    else this.log.warn(text);
  }

  // ------------------------------------------------------------------ matches and events

  private matchEntry(matchId: string, seat: number): MatchEntry<S> {
    let m = this.matches.get(matchId);
    if (!m) {
      m = { matchId, seats: new Set(), data: this.opts.initMatchState ? this.opts.initMatchState(matchId) : ({} as S) };
      this.matches.set(matchId, m);
    }
    m.seats.add(seat);
    return m;
  }

  /** Records the events' sequences and returns the ones not seen before. */
  private newEvents(matchId: string, seat: number, events: Event[]): Event[] {
    const key = seatKey(matchId, seat);
    let c = this.cursors.get(key);
    if (!c) {
      c = { matchId, seat, last: 0n };
      this.cursors.set(key, c);
    }
    const fresh: Event[] = [];
    for (const ev of events) {
      if (ev.sequence > c.last) {
        fresh.push(ev);
        c.last = ev.sequence;
      }
    }
    return fresh;
  }

  private onMatchStarted(ms: MatchStarted): void {
    const m = this.matchEntry(ms.matchId, ms.seat);
    m.started = ms;
    const players = ms.seats.map((s) => s.player?.botName ?? `builtin:${s.player?.builtin ?? "?"}`).join(", ");
    this.seatLog(ms.matchId, ms.seat).info(`match started: ${players}`);
    this.opts.onMatchStarted?.(ms, m);
  }

  private onMatchEnded(me: MatchEnded): void {
    this.newEvents(me.matchId, me.seat, me.events);
    const m = this.matchEntry(me.matchId, me.seat);
    this.seatLog(me.matchId, me.seat).info(
      `match ended: ${me.won ? "won" : "lost"}, winners [${me.winners.join(", ")}], totals [${me.totals.join(", ")}], ` +
        `strikes ${me.strikes}, rejected ${me.rejectedActions}` +
        (me.takenOver ? ", taken over" : ""),
    );
    try {
      this.opts.onMatchEnded?.(me, m);
    } finally {
      for (const [id, o] of this.open) {
        if (o.request.matchId === me.matchId && o.request.seat === me.seat) {
          o.controller.abort(CLOSED);
          this.open.delete(id);
        }
      }
      this.cursors.delete(seatKey(me.matchId, me.seat));
      m.seats.delete(me.seat);
      if (m.seats.size === 0) this.matches.delete(me.matchId);
    }
  }

  private seatLog(matchId: string, seat: number): Logger {
    return prefixed(this.log, `[match ${matchId} seat ${seat}] `);
  }

  // ------------------------------------------------------------------ decisions

  private async onDecisionRequest(req: DecisionRequest, call: grpc.ClientDuplexStream<PlayRequest, PlayResponse>): Promise<void> {
    const log = this.seatLog(req.matchId, req.seat);
    const events = this.newEvents(req.matchId, req.seat, req.events);
    const match = this.matchEntry(req.matchId, req.seat);
    const previous = this.open.get(req.requestId);
    previous?.controller.abort(CLOSED);
    const entry: OpenRequest = {
      request: req,
      controller: new AbortController(),
      call,
      legalIds: new Set(req.legalActions.map((a) => a.id)),
      sent: [],
    };
    this.open.set(req.requestId, entry);
    log.debug(
      `request ${req.requestId}: ${promptToJSON(req.prompt)}${req.required ? "" : " (optional)"}${req.resent ? " (resent)" : ""}, ` +
        `${req.legalActions.length} legal action(s), ${req.timeLeftMs} ms left`,
    );

    const margin = this.opts.safetyMarginMs ?? 50;
    // time_left_ms = 0 means no deadline (a jump-in chance).
    const budget = req.timeLeftMs > 0 ? Math.max(0, req.timeLeftMs - margin) : undefined;
    const signal = entry.controller.signal;
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    if (budget !== undefined) timer = setTimeout(() => entry.controller.abort(TIMEOUT), budget);
    const interrupted = new Promise<typeof TIMEOUT | typeof CLOSED>((resolve) => {
      signal.addEventListener("abort", () => resolve(signal.reason === TIMEOUT ? TIMEOUT : CLOSED), { once: true });
    });

    let result: number | null | undefined | typeof TIMEOUT | typeof CLOSED;
    let failed = false;
    try {
      const ctx: DecisionContext<S> = {
        request: req,
        view: req.view ?? SeatView.fromPartial({}),
        legalActions: req.legalActions,
        events,
        match,
        signal,
        log,
      };
      result = await Promise.race([Promise.resolve().then(() => this.opts.decide(ctx)), interrupted]);
    } catch (err) {
      log.error(`decide failed on request ${req.requestId}: ${describe(err)}`);
      result = undefined;
      failed = true;
    } finally {
      if (timer) clearTimeout(timer);
    }
    const elapsed = Math.round(performance.now() - started);
    if (this.open.get(req.requestId) !== entry || result === CLOSED) return; // closed, superseded or stream gone
    if (!signal.aborted) entry.controller.abort(CLOSED); // decide is over: release anything it still waits on

    let id: number | undefined;
    if (result === TIMEOUT) {
      id = this.fallback(req);
      log.warn(
        `decide exceeded its ${budget} ms budget (time_left ${req.timeLeftMs} ms) on ${promptToJSON(req.prompt)}: ` +
          (id === undefined ? "staying silent (optional request)" : `answering fallback ${id}`),
      );
    } else if (typeof result === "number" && entry.legalIds.has(result)) {
      id = result;
      if (budget !== undefined && elapsed > budget) {
        log.warn(`decide took ${elapsed} ms, over its ${budget} ms budget (a synchronous decide cannot be interrupted)`);
      }
    } else if (result === undefined || result === null) {
      if (req.required) {
        id = this.fallback(req);
        if (!failed) log.warn(`decide returned nothing for a required ${promptToJSON(req.prompt)}: answering fallback ${id}`);
      }
    } else {
      id = this.fallback(req);
      log.warn(`decide returned ${String(result)}, not a legal action id: ` + (id === undefined ? "staying silent" : `answering fallback ${id}`));
    }
    if (id === undefined) {
      this.open.delete(req.requestId);
      return;
    }
    this.answer(entry, id, log);
  }

  /** Fallback for a required request: the server's default action, else the first legal action. */
  private fallback(req: DecisionRequest): number | undefined {
    if (!req.required) return undefined;
    return req.defaultActionId ?? req.legalActions[0]?.id;
  }

  private answer(entry: OpenRequest, actionId: number, log: Logger): void {
    const req = entry.request;
    entry.sent.push(actionId);
    const desc = req.legalActions.find((a) => a.id === actionId)?.description ?? "";
    log.debug(`answer ${req.requestId}: ${actionId} ${desc}`);
    if (!this.send(entry.call, PlayRequest.fromPartial({ action: { requestId: req.requestId, actionId } }))) {
      this.open.delete(req.requestId);
    }
  }

  private onActionResult(r: ActionResult): void {
    const entry = this.open.get(r.requestId);
    const log = this.seatLog(entry?.request.matchId ?? r.matchId, entry?.request.seat ?? r.seat);
    if (r.accepted) {
      this.open.delete(r.requestId);
      log.debug(`action ${r.actionId} accepted (${r.responseMs} ms)`);
      return;
    }
    log.warn(
      `action ${r.actionId ?? "(none)"} on ${r.requestId} rejected: ${grpc.status[r.code] ?? r.code} / ` +
        `${errorReasonToJSON(r.reason)}: ${r.message}`,
    );
    if (!entry) return;
    // One retry while the request is still open: the fallback (or the first legal id not yet tried).
    // Optional requests are not retried: silence is a valid answer there.
    if (r.requestOpen && entry.request.required && entry.sent.length < 2) {
      const tried = new Set(entry.sent);
      const candidates = [entry.request.defaultActionId, ...entry.request.legalActions.map((a) => a.id)];
      const retry = candidates.find((id): id is number => id !== undefined && entry.legalIds.has(id) && !tried.has(id));
      if (retry !== undefined) {
        log.warn(`retrying ${r.requestId} with ${retry}`);
        this.answer(entry, retry, log);
        return;
      }
    }
    this.open.delete(r.requestId);
  }

  private onRequestClosed(rc: RequestClosed): void {
    const entry = this.open.get(rc.requestId);
    if (entry) {
      entry.controller.abort(CLOSED);
      this.open.delete(rc.requestId);
    }
    const log = this.seatLog(rc.matchId, rc.seat);
    const text =
      `request ${rc.requestId} closed: ${closeReasonToJSON(rc.reason)}` +
      (rc.appliedActionId !== undefined ? `, server applied ${rc.appliedActionId}` : "") +
      `, strikes ${rc.strikes}`;
    if (rc.appliedActionId !== undefined) log.warn(text);
    else log.debug(text);
  }

  private abortAll(why: string): void {
    for (const o of this.open.values()) o.controller.abort(CLOSED);
    if (this.open.size) this.log.debug(`${why}: dropped ${this.open.size} open request(s); the server re-sends them on resume`);
    this.open.clear();
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
