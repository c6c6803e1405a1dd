package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import uno.v1.ActionKind;
import uno.v1.Card;
import uno.v1.Color;
import uno.v1.DrewEvent;
import uno.v1.Event;
import uno.v1.LegalAction;
import uno.v1.PlayedEvent;
import uno.v1.Rank;

/** The same table of cases as every other SDK's helper tests. */
class HelpersTest {
  private static Card card(Color color, Rank rank, int code) {
    return Card.newBuilder().setColor(color).setRank(rank).setCode(code).build();
  }

  private static LegalAction play(Card c, Color named) {
    return LegalAction.newBuilder()
        .setId(1000 + 10 * c.getCode())
        .setKind(ActionKind.ACTION_KIND_PLAY)
        .setCard(c)
        .setColor(named)
        .build();
  }

  private static LegalAction other(ActionKind kind, int id, Color color) {
    return LegalAction.newBuilder().setId(id).setKind(kind).setColor(color).build();
  }

  private static Event played(long seq, int seat) {
    return Event.newBuilder()
        .setSequence(seq)
        .setPlayed(PlayedEvent.newBuilder().setSeat(seat).setCard(card(Color.COLOR_RED, Rank.RANK_FIVE, 5)))
        .build();
  }

  private static Event drew(long seq, int seat) {
    return Event.newBuilder().setSequence(seq).setDrew(DrewEvent.newBuilder().setSeat(seat)).build();
  }

  @Test
  void cardPointsTable() {
    assertEquals(0, Helpers.cardPoints(card(Color.COLOR_RED, Rank.RANK_ZERO, 0)));
    assertEquals(7, Helpers.cardPoints(card(Color.COLOR_RED, Rank.RANK_SEVEN, 7)));
    assertEquals(9, Helpers.cardPoints(card(Color.COLOR_BLUE, Rank.RANK_NINE, 57)));
    assertEquals(20, Helpers.cardPoints(card(Color.COLOR_GREEN, Rank.RANK_SKIP, 42)));
    assertEquals(20, Helpers.cardPoints(card(Color.COLOR_YELLOW, Rank.RANK_REVERSE, 27)));
    assertEquals(20, Helpers.cardPoints(card(Color.COLOR_RED, Rank.RANK_DRAW_TWO, 12)));
    assertEquals(50, Helpers.cardPoints(card(Color.COLOR_WILD, Rank.RANK_WILD, 77)));
    assertEquals(50, Helpers.cardPoints(card(Color.COLOR_WILD, Rank.RANK_WILD_DRAW_FOUR, 78)));
  }

  @Test
  void isPlayOfTable() {
    LegalAction red7 = play(card(Color.COLOR_RED, Rank.RANK_SEVEN, 7), Color.COLOR_UNSPECIFIED);
    LegalAction red0 = play(card(Color.COLOR_RED, Rank.RANK_ZERO, 0), Color.COLOR_UNSPECIFIED);
    LegalAction draw = other(ActionKind.ACTION_KIND_DRAW, 0, Color.COLOR_UNSPECIFIED);
    LegalAction wildBlue = play(card(Color.COLOR_WILD, Rank.RANK_WILD, 77), Color.COLOR_BLUE);
    assertTrue(Helpers.isPlayOf(red7, 7));
    assertFalse(Helpers.isPlayOf(red7, 23));
    assertTrue(Helpers.isPlayOf(red0, 0));
    assertFalse(Helpers.isPlayOf(draw, 0), "a draw plays no card, although red 0 has code 0");
    assertTrue(Helpers.isPlayOf(wildBlue, 77));
    assertFalse(Helpers.isPlayOf(wildBlue, 78));
  }

  @Test
  void wildColorTable() {
    assertEquals(
        Optional.of(Color.COLOR_BLUE),
        Helpers.wildColor(play(card(Color.COLOR_WILD, Rank.RANK_WILD, 77), Color.COLOR_BLUE)));
    assertEquals(
        Optional.of(Color.COLOR_GREEN),
        Helpers.wildColor(play(card(Color.COLOR_WILD, Rank.RANK_WILD_DRAW_FOUR, 78), Color.COLOR_GREEN)));
    assertEquals(
        Optional.empty(),
        Helpers.wildColor(play(card(Color.COLOR_RED, Rank.RANK_SEVEN, 7), Color.COLOR_UNSPECIFIED)));
    assertEquals(Optional.empty(), Helpers.wildColor(other(ActionKind.ACTION_KIND_CHOOSE_COLOR, 2, Color.COLOR_RED)));
    assertEquals(Optional.empty(), Helpers.wildColor(other(ActionKind.ACTION_KIND_DRAW, 0, Color.COLOR_UNSPECIFIED)));
  }

  @Test
  void lastPlayedSeatTable() {
    assertEquals(OptionalInt.empty(), Helpers.lastPlayedSeat(List.of()));
    assertEquals(OptionalInt.empty(), Helpers.lastPlayedSeat(List.of(drew(1, 0))));
    assertEquals(OptionalInt.of(2), Helpers.lastPlayedSeat(List.of(played(1, 2), drew(2, 3))));
    assertEquals(OptionalInt.of(3), Helpers.lastPlayedSeat(List.of(played(1, 1), played(2, 3), drew(3, 0))));
  }
}
