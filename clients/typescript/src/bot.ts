#!/usr/bin/env node
/**
 * The example bot: the heuristic strategy on one UNO Arena connection.
 *
 *   npm run bot -- --addr 127.0.0.1:50051 --token T --name ts-heuristic
 *   UNO_ARENA_ADDR=127.0.0.1:50051 UNO_ARENA_TOKEN=T npm run bot
 */
import { parseArgs } from "node:util";

import { FatalStreamError, UnoBot } from "./client";
import { heuristicDecide } from "./heuristic";
import { consoleLogger, parseLogLevel } from "./log";

const USAGE = `usage: uno-arena-ts-bot [--addr HOST:PORT] [--token TOKEN] [--name NAME] [--tls] [--log-level LEVEL]

  --addr       server address            [$UNO_ARENA_ADDR or 127.0.0.1:50051]
  --token      bot token (required)      [$UNO_ARENA_TOKEN]
  --name       bot name                  [$UNO_ARENA_BOT_NAME or ts-heuristic]
  --tls        connect with TLS          [$UNO_ARENA_TLS=1]
  --log-level  debug|info|warn|error     [$UNO_ARENA_LOG_LEVEL or info]`;

export async function main(argv: string[] = process.argv.slice(2)): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      addr: { type: "string" },
      token: { type: "string" },
      name: { type: "string" },
      tls: { type: "boolean" },
      "log-level": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const env = process.env;
  const token = values.token ?? env.UNO_ARENA_TOKEN;
  if (!token) {
    console.error("a bot token is required (--token or UNO_ARENA_TOKEN)\n\n" + USAGE);
    return 2;
  }
  const logger = consoleLogger(parseLogLevel(values["log-level"] ?? env.UNO_ARENA_LOG_LEVEL));
  const bot = new UnoBot({
    address: values.addr ?? env.UNO_ARENA_ADDR ?? "127.0.0.1:50051",
    token,
    botName: values.name ?? env.UNO_ARENA_BOT_NAME ?? "ts-heuristic",
    botVersion: "ts-heuristic 0.1.0",
    tls: values.tls ?? ["1", "true", "yes"].includes((env.UNO_ARENA_TLS ?? "").toLowerCase()),
    decide: heuristicDecide,
    logger,
  });
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) process.exit(130);
    logger.info(`${sig}: stopping (again to force)`);
    bot.stop();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    await bot.run();
    return 0;
  } catch (err) {
    logger.error(err instanceof FatalStreamError ? err.message : String(err));
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

if (require.main === module) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exitCode = 2;
    },
  );
}
