package uno.arena.sdk;

import java.time.Duration;
import java.util.Map;
import java.util.logging.ConsoleHandler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * A ready-made {@code main} for a bot: parses flags and environment variables, sets up logging,
 * stops cleanly on SIGINT / SIGTERM, and exits non-zero on a fatal error.
 *
 * <pre>
 *   --addr HOST:PORT   server address        (env UNO_ARENA_ADDR, default 127.0.0.1:50051)
 *   --token TOKEN      bot token             (env UNO_ARENA_TOKEN, required)
 *   --name NAME        bot name              (env UNO_ARENA_BOT_NAME, default given by the bot)
 *   --version V        bot version string    (env UNO_ARENA_BOT_VERSION)
 *   --tls              connect with TLS      (env UNO_ARENA_TLS=1)
 *   --verbose          log every decision    (env UNO_ARENA_VERBOSE=1)
 * </pre>
 *
 * Usage: {@code public static void main(String[] a) { BotRunner.main(a, new MyBot(), "my-bot"); }}
 */
public final class BotRunner {
  private BotRunner() {}

  /** Parsed command line. */
  public record Options(String addr, String token, String name, String version, boolean tls, boolean verbose) {}

  public static void main(String[] args, Bot bot, String defaultName) {
    // keep log handlers alive while the shutdown hook logs the clean stop (must precede any logging)
    if (System.getProperty("java.util.logging.manager") == null) {
      System.setProperty("java.util.logging.manager", ShutdownFriendlyLogManager.class.getName());
    }
    Options o;
    try {
      o = parse(args, System.getenv(), defaultName, "0.1.0");
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      System.err.println(usage());
      System.exit(2);
      return;
    }
    if (o == null) {
      System.out.println(usage());
      return;
    }
    configureLogging(o.verbose());
    UnoBotClient client =
        UnoBotClient.builder()
            .target(o.addr())
            .tls(o.tls())
            .token(o.token())
            .botName(o.name())
            .botVersion(o.version())
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
    Logger.getLogger(BotRunner.class.getName())
        .info("bot " + o.name() + " " + o.version() + " connecting to " + o.addr() + (o.tls() ? " (TLS)" : ""));
    int code = 0;
    try {
      client.run();
    } catch (UnoBotException e) {
      code = 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (code != 0) {
      Runtime.getRuntime().removeShutdownHook(hook);
      System.exit(code);
    }
  }

  /** Parses flags over environment variables; returns null for --help. */
  public static Options parse(String[] args, Map<String, String> env, String defaultName, String defaultVersion) {
    String addr = env.getOrDefault("UNO_ARENA_ADDR", "127.0.0.1:50051");
    String token = env.getOrDefault("UNO_ARENA_TOKEN", "");
    String name = env.getOrDefault("UNO_ARENA_BOT_NAME", defaultName);
    String version = env.getOrDefault("UNO_ARENA_BOT_VERSION", defaultVersion);
    boolean tls = truthy(env.get("UNO_ARENA_TLS"));
    boolean verbose = truthy(env.get("UNO_ARENA_VERBOSE"));
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
          throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (token.isEmpty()) {
      throw new IllegalArgumentException("a bot token is required (--token or UNO_ARENA_TOKEN)");
    }
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("a bot name is required (--name or UNO_ARENA_BOT_NAME)");
    }
    return new Options(addr, token, name, version, tls, verbose);
  }

  public static String usage() {
    return "usage: java -jar uno-bot.jar --addr HOST:PORT --token TOKEN [--name NAME] [--version V] [--tls] [--verbose]\n"
        + "       (or env UNO_ARENA_ADDR, UNO_ARENA_TOKEN, UNO_ARENA_BOT_NAME, UNO_ARENA_BOT_VERSION, UNO_ARENA_TLS, UNO_ARENA_VERBOSE)";
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
