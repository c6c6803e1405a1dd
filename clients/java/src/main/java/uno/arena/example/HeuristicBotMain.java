package uno.arena.example;

import uno.arena.sdk.BotRunner;

/**
 * The example bot's entry point: {@code java -jar target/uno-bot-0.1.0-jar-with-dependencies.jar
 * --addr 127.0.0.1:50051 --token T --name java-heuristic}.
 */
public final class HeuristicBotMain {
  private HeuristicBotMain() {}

  public static void main(String[] args) {
    BotRunner.main(args, new HeuristicBot(), "java-heuristic");
  }
}
