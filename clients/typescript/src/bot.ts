#!/usr/bin/env node
/**
 * The example bot: the heuristic strategy on one UNO Arena connection.
 *
 *   npm run bot -- --addr 127.0.0.1:50051 --token T --name ts-heuristic
 *   UNO_ARENA_ADDR=127.0.0.1:50051 UNO_ARENA_TOKEN=T npm run bot
 */
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";

import { AddressError, parseAddress } from "./address";
import { BotOptions, DEFAULT_MAX_BATCH, DecideFn, MAX_HELLO_BATCH } from "./client";
import { heuristicDecide } from "./heuristic";
import { consoleLogger, parseLogLevel } from "./log";
import { runMain } from "./main";

const PROG = "uno-arena-ts-bot";

const USAGE = `usage: ${PROG} [--addr ADDRESS] [--token TOKEN] [--name NAME] [--tls] [--log-level LEVEL]
                        [--max-batch N] [--overrun-every N --overrun-ms MS]

  --addr           HOST:PORT or http://HOST:PORT (plaintext), https://HOST:PORT (TLS)
                                              [$UNO_ARENA_ADDR or 127.0.0.1:50051]
  --token          bot token (required)       [$UNO_ARENA_TOKEN]
  --name           bot name                   [$UNO_ARENA_BOT_NAME or ts-heuristic]
  --tls            TLS for a HOST:PORT address, same as https://  [$UNO_ARENA_TLS=1]
  --log-level      debug|info|warn|error      [$UNO_ARENA_LOG_LEVEL or info]
  --max-batch      Hello.max_batch: the most waiting messages the server may send in one
                   batch, 0 = never batch, at most 1024 [64]
  --overrun-every  chaos: every Nth decision overruns its deadline [0 = off]
  --overrun-ms     chaos: how long an overrunning decision waits, in ms [0]`;

/** Usage errors: one line, exit 2. */
class UsageError extends Error {}

function count(name: string, value: string | undefined): number {
  const n = Number(value ?? "0");
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number, 0 or more (got ${JSON.stringify(value)})`);
  return n;
}

/**
 * Wraps decide so that every nth call first waits `ms` milliseconds, ignoring its signal: a
 * decision that overruns its deadline, for chaos tests. It waits asynchronously (a synchronous
 * block would stop every seat: Node runs one thread). n = 0 turns it off.
 */
export function overrun<S>(decide: DecideFn<S>, n: number, ms: number): DecideFn<S> {
  if (n <= 0 || ms <= 0) return decide;
  let calls = 0;
  return async (ctx) => {
    calls += 1;
    if (calls % n === 0) {
      ctx.log.info(`chaos: overrunning request ${ctx.request.requestId} by waiting ${ms} ms`);
      await sleep(ms);
    }
    return decide(ctx);
  };
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<number> {
  const fail = (code: number, message: string): number => {
    console.error(`${PROG}: ${message}`);
    return code;
  };
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        addr: { type: "string" },
        token: { type: "string" },
        name: { type: "string" },
        tls: { type: "boolean" },
        "log-level": { type: "string" },
        "max-batch": { type: "string" },
        "overrun-every": { type: "string" },
        "overrun-ms": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    return fail(2, `${err instanceof Error ? err.message : String(err)} (see --help)`);
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const env = process.env;
  let options: BotOptions<unknown>;
  try {
    const address = values.addr ?? env.UNO_ARENA_ADDR ?? "127.0.0.1:50051";
    const tls = values.tls ?? ["1", "true", "yes"].includes((env.UNO_ARENA_TLS ?? "").toLowerCase());
    if (parseAddress(address).scheme === "http" && tls) {
      throw new UsageError(`--tls conflicts with the plaintext address ${JSON.stringify(address)}: use https://`);
    }
    const token = values.token ?? env.UNO_ARENA_TOKEN;
    if (!token) throw new UsageError("a token is required (--token or UNO_ARENA_TOKEN)");
    let level;
    try {
      level = parseLogLevel(values["log-level"] ?? env.UNO_ARENA_LOG_LEVEL);
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    const every = count("overrun-every", values["overrun-every"]);
    const ms = count("overrun-ms", values["overrun-ms"]);
    const maxBatch = values["max-batch"] === undefined ? DEFAULT_MAX_BATCH : count("max-batch", values["max-batch"]);
    if (maxBatch > MAX_HELLO_BATCH) throw new UsageError(`--max-batch must be 0-${MAX_HELLO_BATCH} (got ${maxBatch})`);
    options = {
      address,
      token,
      botName: values.name ?? env.UNO_ARENA_BOT_NAME ?? "ts-heuristic",
      botVersion: "ts-heuristic 0.2.0",
      tls,
      decide: overrun(heuristicDecide, every, ms),
      logger: consoleLogger(level),
      maxBatch,
    };
  } catch (err) {
    if (err instanceof UsageError || err instanceof AddressError) return fail(2, err.message);
    throw err;
  }
  return runMain(options, PROG);
}

if (require.main === module) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(`${PROG}: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
}
