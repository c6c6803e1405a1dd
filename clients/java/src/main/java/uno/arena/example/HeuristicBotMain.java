package uno.arena.example;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import uno.arena.sdk.Bot;
import uno.arena.sdk.BotRunner;
import uno.arena.sdk.Decision;
import uno.v1.MatchEnded;
import uno.v1.MatchStarted;

/**
 * The example bot's entry point: {@code java -jar target/uno-bot-0.2.0-jar-with-dependencies.jar
 * --addr 127.0.0.1:50051 --token T --name java-heuristic}.
 *
 * <p>Besides the {@link BotRunner} flags it takes two for chaos tests: {@code --overrun-every N
 * --overrun-ms MS} makes every Nth decision sleep MS milliseconds before it returns (a decide that
 * overruns its deadline); both default to 0 = off.
 */
public final class HeuristicBotMain {
  /** The bot's default name, which its one-line errors start with (BotRunner's too). */
  static final String NAME = "java-heuristic";

  private HeuristicBotMain() {}

  public static void main(String[] args) {
    List<String> rest = new ArrayList<>();
    long every = 0;
    long ms = 0;
    try {
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        String value = null;
        int eq = a.indexOf('=');
        if (eq > 0) {
          value = a.substring(eq + 1);
          a = a.substring(0, eq);
        }
        if (!a.equals("--overrun-every") && !a.equals("--overrun-ms")) {
          rest.add(args[i]);
          continue;
        }
        if (value == null) {
          if (i + 1 >= args.length) {
            throw new IllegalArgumentException(a + " needs a value");
          }
          value = args[++i];
        }
        long n = parseCount(a, value);
        if (a.equals("--overrun-every")) {
          every = n;
        } else {
          ms = n;
        }
      }
    } catch (IllegalArgumentException e) {
      System.err.println(NAME + ": " + e.getMessage());
      System.exit(2);
      return;
    }
    if (rest.contains("--help") || rest.contains("-h")) {
      System.out.println(BotRunner.usage());
      System.out.println("  Chaos testing: --overrun-every N --overrun-ms MS (every Nth decision sleeps MS ms; 0 = off)");
      return;
    }
    BotRunner.main(rest.toArray(new String[0]), overrun(new HeuristicBot(), every, ms), NAME);
  }

  private static long parseCount(String flag, String value) {
    try {
      long n = Long.parseLong(value);
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException(flag + " needs a whole number >= 0, not \"" + value + "\"");
  }

  /** Wraps a bot so that every {@code every}th decision first sleeps {@code ms} (0 = never). */
  static Bot overrun(Bot inner, long every, long ms) {
    if (every <= 0) {
      return inner;
    }
    AtomicLong count = new AtomicLong();
    Logger log = Logger.getLogger(HeuristicBotMain.class.getName());
    return new Bot() {
      @Override
      public int decide(Decision d) throws Exception {
        if (count.incrementAndGet() % every == 0) {
          log.info("[match " + d.matchId() + " seat " + d.seat() + "] overrunning on purpose (" + ms + " ms)");
          Thread.sleep(ms);
        }
        return inner.decide(d);
      }

      @Override
      public void onMatchStarted(uno.arena.sdk.MatchContext match, MatchStarted started) {
        inner.onMatchStarted(match, started);
      }

      @Override
      public void onMatchEnded(uno.arena.sdk.MatchContext match, MatchEnded ended) {
        inner.onMatchEnded(match, ended);
      }
    };
  }
}
