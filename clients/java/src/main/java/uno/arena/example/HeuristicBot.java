package uno.arena.example;

import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import uno.arena.sdk.Bot;
import uno.arena.sdk.Decision;
import uno.arena.sdk.Helpers;
import uno.v1.Prompt;
import uno.v1.Card;
import uno.v1.Color;
import uno.v1.Rank;
import uno.v1.ActionKind;
import uno.v1.LegalAction;
import uno.v1.SeatView;

/**
 * A simple rule-of-thumb player:
 *
 * <ul>
 *   <li>prefers playing over drawing; among plays, keeps Wilds for last and dumps high-value cards
 *       first;
 *   <li>always takes the play variant that calls UNO when there is one;
 *   <li>names the colour it holds most when playing a Wild (or choosing a colour);
 *   <li>never bluffs a Wild Draw Four: plays one only when it holds no card of the active colour;
 *   <li>catches a missed UNO when offered, calls its own UNO late when it forgot;
 *   <li>accepts Wild Draw Fours (never challenges) and Draw Two stacks it cannot add to;
 *   <li>under seven-o swaps hands with the seat holding the fewest cards.
 * </ul>
 */
public final class HeuristicBot implements Bot {

  @Override
  public int decide(Decision d) {
    Map<ActionKind, List<LegalAction>> byKind =
        d.legalActions().stream().collect(Collectors.groupingBy(LegalAction::getKind));
    SeatView view = d.view();

    // Out-of-turn chances first.
    if (d.prompt() == Prompt.PROMPT_UNO_WINDOW) {
      return first(byKind, ActionKind.ACTION_KIND_CATCH)
          .or(() -> first(byKind, ActionKind.ACTION_KIND_NO_CATCH))
          .map(LegalAction::getId)
          .orElse(NO_ACTION);
    }
    if (byKind.containsKey(ActionKind.ACTION_KIND_CALL_UNO)) {
      return byKind.get(ActionKind.ACTION_KIND_CALL_UNO).get(0).getId();
    }
    if (byKind.containsKey(ActionKind.ACTION_KIND_CATCH)) {
      return byKind.get(ActionKind.ACTION_KIND_CATCH).get(0).getId();
    }
    if (d.prompt() == Prompt.PROMPT_WILD_DRAW_FOUR) {
      return first(byKind, ActionKind.ACTION_KIND_ACCEPT).map(LegalAction::getId).orElse(d.fallbackActionId());
    }

    Color best = colourHeldMost(view.getHandList());
    if (byKind.containsKey(ActionKind.ACTION_KIND_CHOOSE_COLOR)) {
      return byKind.get(ActionKind.ACTION_KIND_CHOOSE_COLOR).stream()
          .filter(a -> a.getColor() == best)
          .findFirst()
          .orElse(byKind.get(ActionKind.ACTION_KIND_CHOOSE_COLOR).get(0))
          .getId();
    }

    Optional<LegalAction> play = bestPlay(byKind.getOrDefault(ActionKind.ACTION_KIND_PLAY, List.of()), view, best);
    if (play.isPresent()) {
      return play.get().getId();
    }
    if (!d.required()) {
      return NO_ACTION; // e.g. a jump-in chance we do not like
    }
    // Nothing to play: draw on a turn, keep the drawn card, take the penalty.
    for (ActionKind k : List.of(ActionKind.ACTION_KIND_DRAW, ActionKind.ACTION_KIND_PASS, ActionKind.ACTION_KIND_ACCEPT)) {
      if (byKind.containsKey(k)) {
        return byKind.get(k).get(0).getId();
      }
    }
    return d.fallbackActionId();
  }

  static Optional<LegalAction> bestPlay(List<LegalAction> plays, SeatView view, Color best) {
    boolean holdsActiveColour =
        view.getHandList().stream()
            .anyMatch(c -> c.getColor() != Color.COLOR_WILD && c.getColor() == view.getActiveColor());
    // never bluff a Wild Draw Four
    List<LegalAction> honest =
        plays.stream()
            .filter(a -> a.getCard().getRank() != Rank.RANK_WILD_DRAW_FOUR || !holdsActiveColour)
            .collect(Collectors.toList());
    // always call UNO when the play allows it (such plays come with and without the call)
    boolean canCallUno = honest.stream().anyMatch(LegalAction::getUno);
    return honest.stream()
        .filter(a -> !canCallUno || a.getUno())
        // a Wild names the colour held most
        .filter(a -> Helpers.wildColor(a).map(named -> named == best).orElse(true) || !namesAny(honest, a.getCard(), best))
        .max(Comparator.comparingInt((LegalAction a) -> score(a, view)));
  }

  /** Higher is better: keep Wilds (Wild Draw Four last), then dump points; seven-o: fewest-card target. */
  private static int score(LegalAction a, SeatView view) {
    Card c = a.getCard();
    int s;
    if (c.getRank() == Rank.RANK_WILD_DRAW_FOUR) {
      s = -200;
    } else if (c.getRank() == Rank.RANK_WILD) {
      s = -100;
    } else {
      s = Helpers.cardPoints(c) * 10;
    }
    if (a.hasTargetSeat()) {
      int target = a.getTargetSeat();
      int cards = target < view.getSeatsCount() ? view.getSeats(target).getCardCount() : 99;
      s -= cards; // swap with the seat holding the fewest cards
    }
    return s;
  }

  private static boolean namesAny(List<LegalAction> plays, Card card, Color colour) {
    return plays.stream().anyMatch(a -> a.getCard().getCode() == card.getCode() && a.getColor() == colour);
  }

  /** The colour of which the hand holds the most cards (Wilds do not count); red on a tie or none. */
  static Color colourHeldMost(List<Card> hand) {
    Map<Color, Integer> counts = new EnumMap<>(Color.class);
    for (Color c : List.of(Color.COLOR_RED, Color.COLOR_YELLOW, Color.COLOR_GREEN, Color.COLOR_BLUE)) {
      counts.put(c, 0);
    }
    for (Card card : hand) {
      counts.computeIfPresent(card.getColor(), (k, v) -> v + 1);
    }
    Color best = Color.COLOR_RED;
    for (Map.Entry<Color, Integer> e : counts.entrySet()) {
      if (e.getValue() > counts.get(best)) {
        best = e.getKey();
      }
    }
    return best;
  }

  private static Optional<LegalAction> first(Map<ActionKind, List<LegalAction>> byKind, ActionKind kind) {
    List<LegalAction> l = byKind.get(kind);
    return l == null || l.isEmpty() ? Optional.empty() : Optional.of(l.get(0));
  }
}
