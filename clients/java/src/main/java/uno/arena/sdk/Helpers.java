package uno.arena.sdk;

import java.util.List;
import java.util.ListIterator;
import java.util.Optional;
import java.util.OptionalInt;
import uno.v1.ActionKind;
import uno.v1.Card;
import uno.v1.Color;
import uno.v1.Event;
import uno.v1.LegalAction;
import uno.v1.Rank;

/**
 * Small helpers every bot author otherwise writes by hand. The five UNO Arena SDKs have the same
 * helpers with the same meaning (names in each language's case).
 */
public final class Helpers {
  private Helpers() {}

  /**
   * The card's points when it is left in a hand at the end: a number card its face value, Skip,
   * Reverse and Draw Two 20, Wild and Wild Draw Four 50 (0 for an unset rank).
   */
  public static int cardPoints(Card card) {
    switch (card.getRank()) {
      case RANK_SKIP:
      case RANK_REVERSE:
      case RANK_DRAW_TWO:
        return 20;
      case RANK_WILD:
      case RANK_WILD_DRAW_FOUR:
        return 50;
      case RANK_UNSPECIFIED:
      case UNRECOGNIZED:
        return 0;
      default:
        return card.getRank().getNumber() - Rank.RANK_ZERO.getNumber();
    }
  }

  /**
   * True if the legal action plays the card with this {@code Card.code} (engine card code: red 7 =
   * 7, Wild = 77). Any variant counts: with or without the UNO call, whatever colour it names.
   */
  public static boolean isPlayOf(LegalAction action, int cardCode) {
    return action.getKind() == ActionKind.ACTION_KIND_PLAY
        && action.hasCard()
        && action.getCard().getCode() == cardCode;
  }

  /**
   * The colour a Wild or Wild Draw Four play names; empty for every other action (a coloured card,
   * a draw, a colour chosen for a Wild flipped first).
   */
  public static Optional<Color> wildColor(LegalAction action) {
    Rank rank = action.getCard().getRank();
    boolean wild = rank == Rank.RANK_WILD || rank == Rank.RANK_WILD_DRAW_FOUR;
    if (action.getKind() != ActionKind.ACTION_KIND_PLAY || !action.hasCard() || !wild
        || action.getColor() == Color.COLOR_UNSPECIFIED) {
      return Optional.empty();
    }
    return Optional.of(action.getColor());
  }

  /**
   * The seat of the latest {@code PlayedEvent} in a list of events (oldest first, as a request
   * carries them); empty if no card was played in them.
   */
  public static OptionalInt lastPlayedSeat(List<Event> events) {
    for (ListIterator<Event> it = events.listIterator(events.size()); it.hasPrevious(); ) {
      Event e = it.previous();
      if (e.hasPlayed()) {
        return OptionalInt.of(e.getPlayed().getSeat());
      }
    }
    return OptionalInt.empty();
  }
}
