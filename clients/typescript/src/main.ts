/** `runMain`: the process-level part of a bot (signals, exit codes, one-line errors). */
import { AddressError } from "./address";
import { BotOptions, UnoBot } from "./client";

/**
 * Runs a bot as a program: connects, plays until SIGINT/SIGTERM (a second signal forces the
 * exit), and returns the exit code, also set as `process.exitCode`:
 * 0 stopped by a signal, 2 malformed address, 1 refused by the server (or gave up reconnecting).
 * Errors are printed as one line, `<prog>: <what happened>`, never a stack trace.
 */
export async function runMain<S>(options: BotOptions<S>, prog = options.botName || "uno-bot"): Promise<number> {
  const exit = (code: number, message?: string): number => {
    if (message) console.error(`${prog}: ${message}`);
    process.exitCode = code;
    return code;
  };
  let bot: UnoBot<S>;
  try {
    bot = new UnoBot(options);
  } catch (err) {
    if (err instanceof AddressError) return exit(2, err.message);
    throw err;
  }
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) process.exit(130);
    (options.logger ?? console).info(`${sig}: stopping (again to force)`);
    bot.stop();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    await bot.run();
    return exit(0);
  } catch (err) {
    return exit(1, err instanceof Error ? err.message : String(err));
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
