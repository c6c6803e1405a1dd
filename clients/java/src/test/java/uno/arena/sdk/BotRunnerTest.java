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
    assertEquals(UnoBotClient.DEFAULT_MAX_BATCH, o.maxBatch());
    assertEquals(0, BotRunner.parse(new String[] {"--token", "x", "--max-batch", "0"}, Map.of(), "d", "1").maxBatch());
    assertEquals(1024, BotRunner.parse(new String[] {"--token", "x", "--max-batch=1024"}, Map.of(), "d", "1").maxBatch());
  }

  @Test
  void tokenIsRequiredAndUnknownFlagsRejected() {
    assertThrows(IllegalArgumentException.class, () -> BotRunner.parse(new String[] {}, Map.of(), "n", "1"));
    assertThrows(IllegalArgumentException.class, () -> BotRunner.parse(new String[] {"--token", "t", "--bogus"}, Map.of(), "n", "1"));
    assertThrows(IllegalArgumentException.class, () -> BotRunner.parse(new String[] {"--token"}, Map.of(), "n", "1"));
    assertNull(BotRunner.parse(new String[] {"--help"}, Map.of(), "n", "1"));
    for (String bad : new String[] {"1025", "-1", "x"}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> BotRunner.parse(new String[] {"--token", "t", "--max-batch", bad}, Map.of(), "n", "1"));
      assertTrue(e.getMessage().startsWith("--max-batch must be 0-1024"), e.getMessage());
    }
  }

  @Test
  void addressesAreCheckedBeforeAnythingIsTried() {
    for (String ok : new String[] {"127.0.0.1:5", "http://h:5", "https://h:5", "[::1]:5"}) {
      assertEquals(ok, BotRunner.parse(new String[] {"--addr", ok, "--token", "t"}, Map.of(), "n", "1").addr());
    }
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> BotRunner.parse(new String[] {"--addr", "foo", "--token", "t"}, Map.of(), "n", "1"));
    assertEquals("invalid address \"foo\": use HOST:PORT, http://HOST:PORT or https://HOST:PORT", e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> BotRunner.parse(new String[] {"--token", "t"}, Map.of("UNO_ARENA_ADDR", "grpc://h:1"), "n", "1"));
  }

  @Test
  void aBadAddressExits2WithOneLine() {
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
    System.setErr(new java.io.PrintStream(buf, true, java.nio.charset.StandardCharsets.UTF_8));
    int code;
    try {
      code = BotRunner.run(new String[] {"--addr", "foo", "--token", "t"}, d -> 0, "n");
    } finally {
      System.setErr(err);
    }
    assertEquals(2, code);
    assertEquals(
        "uno-bot: invalid address \"foo\": use HOST:PORT, http://HOST:PORT or https://HOST:PORT\n",
        buf.toString(java.nio.charset.StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"));
  }
}
