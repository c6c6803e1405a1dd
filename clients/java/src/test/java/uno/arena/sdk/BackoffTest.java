package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
  @Test
  void doublesFrom100MsWith20PercentJitterAndCapsAt2s() {
    Backoff low = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(2), () -> 0.0);
    Backoff high = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(2), () -> 0.999999);
    long[] bases = {100, 200, 400, 800, 1600, 2000, 2000};
    for (long base : bases) {
      assertEquals(Math.round(base * 0.8), low.next().toMillis());
      long h = high.next().toMillis();
      assertTrue(h <= Math.min(2000, Math.round(base * 1.2)) && h >= Math.min(2000, base * 1.2 - 1), "got " + h + " for base " + base);
    }
  }

  @Test
  void resetStartsOver() {
    Backoff b = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(2), () -> 0.5);
    b.next();
    b.next();
    b.next();
    b.reset();
    assertEquals(100, b.next().toMillis());
  }

  @Test
  void randomJitterStaysInRange() {
    Backoff b = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(2));
    for (int i = 0; i < 50; i++) {
      long ms = b.next().toMillis();
      assertTrue(ms >= 80 && ms <= 2000, "got " + ms);
    }
  }
}
