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
        "n: invalid address \"foo\": use HOST:PORT, http://HOST:PORT or https://HOST:PORT\n",
        buf.toString(java.nio.charset.StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"));
  }

  @Test
  void aCommandLineErrorStartsWithTheBotsName() {
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
    System.setErr(new java.io.PrintStream(buf, true, java.nio.charset.StandardCharsets.UTF_8));
    int code;
    int unnamed;
    try {
      code = BotRunner.run(new String[] {"--bogus"}, d -> 0, "my-bot");
      unnamed = BotRunner.run(new String[] {"--bogus"}, d -> 0, "");
    } finally {
      System.setErr(err);
    }
    assertEquals(2, code);
    assertEquals(2, unnamed);
    assertEquals(
        "my-bot: unknown argument --bogus (--help lists the flags)\n"
            + "uno-bot: unknown argument --bogus (--help lists the flags)\n",
        buf.toString(java.nio.charset.StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"));
  }

  @Test
  void theDefaultVersionIsTheSdksOwn() throws Exception {
    // Run from classes (as here): no SDK manifest, so the compiled-in SDK version, which is the
    // pom's version.
    String pom = java.nio.file.Files.readString(java.nio.file.Path.of("pom.xml"));
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("<artifactId>uno-bot</artifactId>\\s*<version>([^<]+)</version>").matcher(pom);
    assertTrue(m.find(), "pom.xml names the SDK's version");
    assertEquals(m.group(1), UnoBotClient.SDK_VERSION, "the compiled-in fallback is the pom's version");
    assertEquals(UnoBotClient.SDK_VERSION, BotRunner.sdkVersion());
    assertTrue(BotRunner.usage().contains("(default " + UnoBotClient.SDK_VERSION + ", the SDK's)"), BotRunner.usage());
    // From the SDK jar: the manifest's version; another jar's manifest (a bot repackaged with the
    // SDK inside) or none: the fallback.
    assertEquals("7.8.9", BotRunner.sdkVersion(BotRunner.MANIFEST_TITLE, "7.8.9"));
    assertEquals(UnoBotClient.SDK_VERSION, BotRunner.sdkVersion("my-bot", "1.0"));
    assertEquals(UnoBotClient.SDK_VERSION, BotRunner.sdkVersion(null, null));
    assertEquals(UnoBotClient.SDK_VERSION, BotRunner.sdkVersion(BotRunner.MANIFEST_TITLE, " "));
    // What run() uses when neither --version nor UNO_ARENA_BOT_VERSION is given, and they win.
    assertEquals(BotRunner.sdkVersion(), BotRunner.parse(new String[] {"--token", "t"}, Map.of(), "n", BotRunner.sdkVersion()).version());
    assertEquals("env-v", BotRunner.parse(new String[] {"--token", "t"}, Map.of("UNO_ARENA_BOT_VERSION", "env-v"), "n", "d").version());
    assertEquals("flag-v", BotRunner.parse(new String[] {"--token", "t", "--version", "flag-v"}, Map.of(), "n", "d").version());
  }

  /** run() without --version: the Hello carries the SDK's version as the bot's own, before the SDK tag. */
  @Test
  void runSendsTheSdksVersionWhenNoneIsGiven() throws Exception {
    java.util.concurrent.CompletableFuture<uno.v1.Hello> hello = new java.util.concurrent.CompletableFuture<>();
    io.grpc.Server server =
        io.grpc.Grpc.newServerBuilderForPort(0, io.grpc.InsecureServerCredentials.create())
            .addService(
                new uno.v1.BotServiceGrpc.BotServiceImplBase() {
                  @Override
                  public io.grpc.stub.StreamObserver<uno.v1.PlayRequest> play(
                      io.grpc.stub.StreamObserver<uno.v1.PlayResponse> out) {
                    return new io.grpc.stub.StreamObserver<>() {
                      @Override
                      public void onNext(uno.v1.PlayRequest r) {
                        hello.complete(r.getHello());
                        // refused for good: run() returns 1 instead of reconnecting
                        out.onError(io.grpc.Status.UNAUTHENTICATED.withDescription("test: version seen").asRuntimeException());
                      }

                      @Override
                      public void onError(Throwable t) {}

                      @Override
                      public void onCompleted() {}
                    };
                  }
                })
            .build()
            .start();
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream said = new java.io.ByteArrayOutputStream();
    System.setErr(new java.io.PrintStream(said, true, java.nio.charset.StandardCharsets.UTF_8));
    int code;
    try {
      code =
          BotRunner.run(
              new String[] {"--addr", "127.0.0.1:" + server.getPort(), "--token", "t", "--name", "my-java-bot"},
              d -> 0,
              "n");
    } finally {
      System.setErr(err);
      server.shutdownNow();
    }
    assertEquals(1, code, "refused: exit 1");
    String line = said.toString(java.nio.charset.StandardCharsets.UTF_8);
    // the refusal's line (after the log's) starts with the bot's --name
    assertTrue(
        java.util.Arrays.stream(line.split("\\R"))
            .anyMatch(l -> l.startsWith("my-java-bot: the server refused the bot: ")),
        line);
    assertEquals(
        BotRunner.sdkVersion() + " " + UnoBotClient.SDK_TAG,
        hello.get(30, java.util.concurrent.TimeUnit.SECONDS).getBotVersion(),
        "the bot's version defaults to the SDK's");
  }
}
