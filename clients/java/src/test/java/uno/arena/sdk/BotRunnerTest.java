package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class BotRunnerTest {
  @Test
  void flagsOverrideEnvironment() {
    Map<String, String> env = Map.of("UNO_ARENA_ADDR", "h:1", "UNO_ARENA_TOKEN", "envtok", "UNO_ARENA_BOT_NAME", "envname");
    BotRunner.Options o = BotRunner.parse(new String[] {"--addr", "127.0.0.1:5", "--token=T", "--tls"}, env, "dflt", "1");
    assertEquals(new BotRunner.Options("127.0.0.1:5", "T", "envname", "1", true, false), o);
    o = BotRunner.parse(new String[] {}, env, "dflt", "1");
    assertEquals("h:1", o.addr());
    assertEquals("envtok", o.token());
    o = BotRunner.parse(new String[] {"--token", "x", "-v"}, Map.of(), "dflt", "1");
    assertEquals("dflt", o.name());
    assertEquals("127.0.0.1:50051", o.addr());
    assertTrue(o.verbose());
  }

  @Test
  void tokenIsRequiredAndUnknownFlagsRejected() {
    assertThrows(IllegalArgumentException.class, () -> BotRunner.parse(new String[] {}, Map.of(), "n", "1"));
    assertThrows(IllegalArgumentException.class, () -> BotRunner.parse(new String[] {"--token", "t", "--bogus"}, Map.of(), "n", "1"));
    assertThrows(IllegalArgumentException.class, () -> BotRunner.parse(new String[] {"--token"}, Map.of(), "n", "1"));
    assertNull(BotRunner.parse(new String[] {"--help"}, Map.of(), "n", "1"));
  }
}
