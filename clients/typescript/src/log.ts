/** Minimal levelled logging; pass your own {@link Logger} to use another library. */

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** A logger writing `<ISO time> <LEVEL> <message>` lines to stderr, from `level` up. */
export function consoleLogger(level: LogLevel = "info"): Logger {
  const min = ORDER[level] ?? ORDER.info;
  const emit = (lvl: Exclude<LogLevel, "silent">, message: string): void => {
    if (ORDER[lvl] >= min) process.stderr.write(`${new Date().toISOString()} ${lvl.toUpperCase()} ${message}\n`);
  };
  return {
    debug: (m) => emit("debug", m),
    info: (m) => emit("info", m),
    warn: (m) => emit("warn", m),
    error: (m) => emit("error", m),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = consoleLogger("silent");

/** Wraps `inner` so that every line starts with `prefix` (e.g. "[match m1 seat 2] "). */
export function prefixed(inner: Logger, prefix: string): Logger {
  return {
    debug: (m) => inner.debug(prefix + m),
    info: (m) => inner.info(prefix + m),
    warn: (m) => inner.warn(prefix + m),
    error: (m) => inner.error(prefix + m),
  };
}

export function parseLogLevel(value: string | undefined): LogLevel {
  const v = (value ?? "info").toLowerCase();
  if (v in ORDER) return v as LogLevel;
  throw new Error(`unknown log level ${JSON.stringify(value)} (debug, info, warn, error, silent)`);
}
