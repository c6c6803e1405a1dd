package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
  @Test
  void doublesWithJitterUpToTheCap() {
    Backoff low = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), () -> 0.0);
    Backoff high = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), () -> 0.999999);
    long[] bases = {100, 200, 400, 800, 1000, 1000, 1000};
    for (long base : bases) {
      assertEquals(base / 2, low.next().toMillis());
      long h = high.next().toMillis();
      assertTrue(h <= base && h >= base - 1, "got " + h + " for base " + base);
    }
  }

  @Test
  void resetStartsOver() {
    Backoff b = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30), () -> 0.0);
    b.next();
    b.next();
    b.next();
    b.reset();
    assertEquals(50, b.next().toMillis());
  }

  @Test
  void randomJitterStaysInRange() {
    Backoff b = new Backoff(Duration.ofMillis(250), Duration.ofSeconds(30));
    for (int i = 0; i < 50; i++) {
      long ms = b.next().toMillis();
      assertTrue(ms >= 125 && ms <= 30_000, "got " + ms);
    }
  }
}
