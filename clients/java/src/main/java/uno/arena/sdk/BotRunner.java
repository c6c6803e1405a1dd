package uno.arena.sdk;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Map;
import java.util.logging.ConsoleHandler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * A ready-made {@code main} for a bot: parses flags and environment variables, sets up logging,
 * stops cleanly on SIGINT / SIGTERM, and exits with a status that says what happened.
 *
 * <pre>
 *   --addr ADDR        HOST:PORT, http://HOST:PORT or https://HOST:PORT
 *                                           (env UNO_ARENA_ADDR, default 127.0.0.1:50051)
 *   --token TOKEN      bot token             (env UNO_ARENA_TOKEN, required)
 *   --name NAME        bot name              (env UNO_ARENA_BOT_NAME, default given by the bot)
 *   --version V        bot version string    (env UNO_ARENA_BOT_VERSION, default the SDK's
 *                                           version: {@link #sdkVersion()})
 *   --tls              TLS for a HOST:PORT address (env UNO_ARENA_TLS=1; same as https://)
 *   --verbose          log every decision    (env UNO_ARENA_VERBOSE=1)
 *   --max-batch N      Hello.max_batch, 0 = never batch, at most 1024 (default 64)
 * </pre>
 *
 * <p>Exit status: 0 after SIGINT / SIGTERM (the stream is half-closed first); 2 for a bad command
 * line or address (one line on stderr, nothing is tried); 1 when the server refuses the bot (bad
 * token, name not allowed, session replaced...), also with one line. Each line starts with the
 * bot's name, as the Go, TypeScript and Rust bots' do: its {@code --name} (or
 * UNO_ARENA_BOT_NAME) once the command line is read, the {@code defaultName} the program gives
 * before that ({@code my-bot: unknown argument --bogus ...}).
 *
 * <p>Usage: {@code public static void main(String[] a) { BotRunner.main(a, new MyBot(), "my-bot"); }}
 */
public final class BotRunner {
  /** How the one-line errors on stderr start when the program gives no default name. */
  static final String PROGRAM = "uno-bot";

  /** The name an error line starts with: the bot's name, else {@link #PROGRAM}. */
  static String program(String name) {
    return name == null || name.isBlank() ? PROGRAM : name;
  }

  private BotRunner() {}

  /** Parsed command line. */
  public record Options(
      String addr, String token, String name, String version, boolean tls, boolean verbose, int maxBatch) {
    /** With the default Hello.max_batch (64). */
    public Options(String addr, String token, String name, String version, boolean tls, boolean verbose) {
      this(addr, token, name, version, tls, verbose, UnoBotClient.DEFAULT_MAX_BATCH);
    }
  }

  /** Runs the bot with this command line until stopped, then exits the JVM with the status above. */
  public static void main(String[] args, Bot bot, String defaultName) {
    System.exit(run(args, bot, defaultName));
  }

  /** Like {@link #main} but returns the exit status instead of exiting. */
  public static int run(String[] args, Bot bot, String defaultName) {
    // keep log handlers alive while the shutdown hook logs the clean stop (must precede any logging)
    if (System.getProperty("java.util.logging.manager") == null) {
      System.setProperty("java.util.logging.manager", ShutdownFriendlyLogManager.class.getName());
    }
    Options o;
    try {
      o = parse(args, System.getenv(), defaultName, sdkVersion());
    } catch (IllegalArgumentException e) {
      System.err.println(program(defaultName) + ": " + e.getMessage());
      return 2;
    }
    if (o == null) {
      System.out.println(usage());
      return 0;
    }
    configureLogging(o.verbose());
    UnoBotClient client =
        UnoBotClient.builder()
            .target(o.addr())
            .tls(o.tls())
            .token(o.token())
            .botName(o.name())
            .botVersion(o.version())
            .maxBatch(o.maxBatch())
            .bot(bot)
            .build();
    Thread hook =
        new Thread(
            () -> {
              client.stop();
              try {
                client.awaitTermination(Duration.ofSeconds(5));
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              if (LogManager.getLogManager() instanceof ShutdownFriendlyLogManager) {
                ((ShutdownFriendlyLogManager) LogManager.getLogManager()).resetNow();
              }
            },
            "uno-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    stopOnSignals(client);
    Logger.getLogger(BotRunner.class.getName())
        .info("bot " + o.name() + " " + o.version() + " connecting to " + o.addr() + (o.tls() ? " (TLS)" : ""));
    int code = 0;
    try {
      client.run();
    } catch (UnoBotException e) {
      System.err.println(program(o.name()) + ": " + e.getMessage());
      code = 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down (a signal we could not handle ourselves)
    }
    return code;
  }

  /**
   * SIGINT / SIGTERM stop the client (half-close) so that {@link #main} exits 0, where the JVM's
   * default handling would exit 130 / 143. Uses sun.misc.Signal (module jdk.unsupported) through
   * reflection, which keeps the build free of "internal proprietary API" warnings; without it the
   * shutdown hook still stops the client cleanly.
   */
  private static void stopOnSignals(UnoBotClient client) {
    Logger log = Logger.getLogger(BotRunner.class.getName());
    for (String name : new String[] {"INT", "TERM"}) {
      try {
        Class<?> signal = Class.forName("sun.misc.Signal");
        Class<?> handlerType = Class.forName("sun.misc.SignalHandler");
        Object handler =
            Proxy.newProxyInstance(
                handlerType.getClassLoader(),
                new Class<?>[] {handlerType},
                (proxy, method, a) -> {
                  if (method.getName().equals("handle")) {
                    log.info("SIG" + name + " received, stopping");
                    client.stop();
                    return null;
                  }
                  switch (method.getName()) {
                    case "hashCode":
                      return System.identityHashCode(proxy);
                    case "equals":
                      return proxy == a[0];
                    default:
                      return "SIG" + name + " handler";
                  }
                });
        signal
            .getMethod("handle", signal, handlerType)
            .invoke(null, signal.getConstructor(String.class).newInstance(name), handler);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        log.fine("cannot handle SIG" + name + " (" + e + "); the shutdown hook will stop the bot");
      }
    }
  }

  /** The Implementation-Title the build writes into the SDK jar's manifest (pom.xml). */
  static final String MANIFEST_TITLE = "uno-bot";

  /**
   * The SDK's version, the default of {@code --version}: the Implementation-Version that the
   * build writes from the pom into the SDK jar's manifest, when the SDK runs from that jar; else
   * {@link UnoBotClient#SDK_VERSION} (run from classes, as in an IDE or the SDK's own tests, or
   * repackaged into another jar whose manifest is not the SDK's).
   */
  public static String sdkVersion() {
    Package p = BotRunner.class.getPackage();
    return p == null ? UnoBotClient.SDK_VERSION : sdkVersion(p.getImplementationTitle(), p.getImplementationVersion());
  }

  /** {@link #sdkVersion()} from a manifest's Implementation-Title and -Version (either may be null). */
  static String sdkVersion(String manifestTitle, String manifestVersion) {
    if (MANIFEST_TITLE.equals(manifestTitle) && manifestVersion != null && !manifestVersion.isBlank()) {
      return manifestVersion.strip();
    }
    return UnoBotClient.SDK_VERSION;
  }

  /** Parses flags over environment variables; returns null for --help. */
  public static Options parse(String[] args, Map<String, String> env, String defaultName, String defaultVersion) {
    String addr = env.getOrDefault("UNO_ARENA_ADDR", "127.0.0.1:50051");
    String token = env.getOrDefault("UNO_ARENA_TOKEN", "");
    String name = env.getOrDefault("UNO_ARENA_BOT_NAME", defaultName);
    String version = env.getOrDefault("UNO_ARENA_BOT_VERSION", defaultVersion);
    boolean tls = truthy(env.get("UNO_ARENA_TLS"));
    boolean verbose = truthy(env.get("UNO_ARENA_VERBOSE"));
    int maxBatch = UnoBotClient.DEFAULT_MAX_BATCH;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String value = null;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        value = a.substring(eq + 1);
        a = a.substring(0, eq);
      }
      switch (a) {
        case "--addr":
        case "--token":
        case "--name":
        case "--version":
        case "--max-batch":
          if (value == null) {
            if (i + 1 >= args.length) {
              throw new IllegalArgumentException(a + " needs a value");
            }
            value = args[++i];
          }
          if (a.equals("--addr")) {
            addr = value;
          } else if (a.equals("--token")) {
            token = value;
          } else if (a.equals("--name")) {
            name = value;
          } else if (a.equals("--max-batch")) {
            maxBatch = parseMaxBatch(value);
          } else {
            version = value;
          }
          break;
        case "--tls":
          tls = true;
          break;
        case "--verbose":
        case "-v":
          verbose = true;
          break;
        case "--help":
        case "-h":
          return null;
        default:
          throw new IllegalArgumentException("unknown argument " + args[i] + " (--help lists the flags)");
      }
    }
    if (token.isEmpty()) {
      throw new IllegalArgumentException("a bot token is required (--token or UNO_ARENA_TOKEN)");
    }
    Address.parse(addr); // one line naming a bad address, before anything is tried
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("a bot name is required (--name or UNO_ARENA_BOT_NAME)");
    }
    return new Options(addr, token, name, version, tls, verbose, maxBatch);
  }

  private static int parseMaxBatch(String value) {
    try {
      int n = Integer.parseInt(value.trim());
      if (n >= 0 && n <= UnoBotClient.MAX_HELLO_BATCH) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException("--max-batch must be 0-" + UnoBotClient.MAX_HELLO_BATCH + ", not \"" + value + "\"");
  }

  public static String usage() {
    return "usage: java -jar my-bot.jar [--addr ADDR] --token TOKEN [--name NAME] [--version V] [--tls] [--verbose]"
        + " [--max-batch N]\n"
        + "  ADDR: HOST:PORT, http://HOST:PORT or https://HOST:PORT (default 127.0.0.1:50051)\n"
        + "  (or env UNO_ARENA_ADDR, UNO_ARENA_TOKEN, UNO_ARENA_BOT_NAME, UNO_ARENA_BOT_VERSION, UNO_ARENA_TLS, UNO_ARENA_VERBOSE)\n"
        + "  --version V: the bot's version (default " + sdkVersion() + ", the SDK's)\n"
        + "  --max-batch N: Hello.max_batch, the most waiting messages the server may send in one batch"
        + " (0 = never batch, at most 1024; default 64)\n"
        + "  Plays until Ctrl-C / SIGTERM; reconnects by itself when the stream drops.";
  }

  /** One line per record on stderr: time, level, message. {@code verbose} shows every decision. */
  public static void configureLogging(boolean verbose) {
    if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
      System.setProperty(
          "java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$-7s %5$s%6$s%n");
    }
    Logger root = Logger.getLogger("");
    for (var h : root.getHandlers()) {
      root.removeHandler(h);
    }
    ConsoleHandler h = new ConsoleHandler();
    h.setFormatter(new SimpleFormatter());
    h.setLevel(Level.ALL);
    root.addHandler(h);
    root.setLevel(Level.INFO);
    Logger.getLogger("uno.arena").setLevel(verbose ? Level.FINE : Level.INFO);
  }

  /**
   * The JDK resets (closes) every log handler in its own shutdown hook, racing ours: this manager
   * ignores that reset so that the bot's "stopping ... stopped" lines are still printed.
   */
  public static final class ShutdownFriendlyLogManager extends LogManager {
    @Override
    public void reset() {
      if (!stopping()) {
        super.reset();
      }
    }

    void resetNow() {
      super.reset();
    }

    private static boolean stopping() {
      try {
        Thread t = new Thread(() -> {});
        Runtime.getRuntime().addShutdownHook(t);
        Runtime.getRuntime().removeShutdownHook(t);
        return false;
      } catch (IllegalStateException e) {
        return true; // shutdown in progress
      }
    }
  }

  private static boolean truthy(String v) {
    return v != null && (v.equals("1") || v.equalsIgnoreCase("true") || v.equalsIgnoreCase("yes"));
  }
}
