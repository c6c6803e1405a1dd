package uno.arena.sdk;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Exponential reconnect backoff with jitter, capped.
 *
 * <p>Attempt {@code n} (0-based) waits {@code initial * 2^n} times a random factor in [0.8, 1.2],
 * never more than {@code max}. The defaults (100 ms, 2 s) give about 100, 200, 400, 800, 1600,
 * 2000, 2000... ms, all below the server's default 5 s reconnect grace, spread so that many bots
 * restarted at once do not reconnect in lock-step. {@link #reset()} after a welcomed stream starts
 * again from {@code initial}.
 */
public final class Backoff {
  /** Relative jitter: each delay is the base times a factor in [1 - JITTER, 1 + JITTER]. */
  static final double JITTER = 0.2;

  private final long initialMs;
  private final long maxMs;
  private final DoubleSupplier random;
  private int attempt;

  public Backoff(Duration initial, Duration max) {
    this(initial, max, () -> ThreadLocalRandom.current().nextDouble());
  }

  Backoff(Duration initial, Duration max, DoubleSupplier random) {
    if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("need 0 < initial <= max");
    }
    this.initialMs = initial.toMillis();
    this.maxMs = max.toMillis();
    this.random = random;
  }

  /** The delay before the next attempt; each call moves to the next attempt. */
  public synchronized Duration next() {
    long base = initialMs;
    for (int i = 0; i < attempt && base < maxMs; i++) {
      base *= 2;
    }
    base = Math.min(base, maxMs);
    attempt++;
    double factor = 1 - JITTER + 2 * JITTER * random.getAsDouble();
    return Duration.ofMillis(Math.min(maxMs, Math.round(base * factor)));
  }

  /** Forget past failures: the next delay is about {@code initial} again. */
  public synchronized void reset() {
    attempt = 0;
  }
}
