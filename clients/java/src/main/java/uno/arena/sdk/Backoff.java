package uno.arena.sdk;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Exponential reconnect backoff with jitter, capped.
 *
 * <p>Attempt {@code n} (0-based) waits a random time in {@code [base/2, base]} where {@code base =
 * min(max, initial * 2^n)} ("equal jitter"): never zero, never more than {@code max}, and spread so
 * that many bots restarted at once do not reconnect in lock-step. {@link #reset()} after a
 * successful connection (the server's Welcome) starts again from {@code initial}.
 */
public final class Backoff {
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
    long half = base / 2;
    return Duration.ofMillis(half + (long) (random.getAsDouble() * (base - half)));
  }

  /** Forget past failures: the next delay is about {@code initial} again. */
  public synchronized void reset() {
    attempt = 0;
  }
}
