package uno.arena.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import uno.arena.sdk.Bot;
import uno.arena.sdk.Decision;
import uno.v1.DecisionRequest;
import uno.v1.Prompt;
import uno.v1.Card;
import uno.v1.Color;
import uno.v1.Rank;
import uno.v1.ActionKind;
import uno.v1.LegalAction;
import uno.v1.SeatState;
import uno.v1.SeatView;

class HeuristicBotTest {
  private final HeuristicBot bot = new HeuristicBot();

  // engine colour index 0-3 of a proto Color (RED=1 -> 0)
  private static int engine(Color c) {
    return c == Color.COLOR_WILD ? 4 : c.getNumber() - 1;
  }

  private static Card card(Color c, Rank r) {
    int code = engine(c) * 16 + (r.getNumber() - 1);
    return Card.newBuilder().setColor(c).setRank(r).setCode(code).setName(c + "_" + r).build();
  }

  private static LegalAction play(Card c, Color named, boolean uno) {
    int colour = named == Color.COLOR_UNSPECIFIED ? 0 : engine(named);
    return LegalAction.newBuilder()
        .setId(1000 + 10 * c.getCode() + 2 * colour + (uno ? 1 : 0))
        .setKind(ActionKind.ACTION_KIND_PLAY)
        .setCard(c)
        .setColor(named)
        .setUno(uno)
        .build();
  }

  private static LegalAction simple(int id, ActionKind kind) {
    return LegalAction.newBuilder().setId(id).setKind(kind).build();
  }

  private static List<LegalAction> wildPlays(Card wild, boolean uno) {
    return List.of(
        play(wild, Color.COLOR_RED, uno),
        play(wild, Color.COLOR_YELLOW, uno),
        play(wild, Color.COLOR_GREEN, uno),
        play(wild, Color.COLOR_BLUE, uno));
  }

  private static DecisionRequest.Builder request(Prompt prompt, Color active, List<Card> hand, List<LegalAction> legal) {
    return DecisionRequest.newBuilder()
        .setRequestId("r")
        .setMatchId("m")
        .setPrompt(prompt)
        .setRequired(prompt != Prompt.PROMPT_UNO_WINDOW && prompt != Prompt.PROMPT_LATE_UNO && prompt != Prompt.PROMPT_JUMP_IN)
        .setView(SeatView.newBuilder().setActiveColor(active).addAllHand(hand))
        .addAllLegalActions(legal);
  }

  private int decide(DecisionRequest.Builder r) throws Exception {
    return bot.decide(Decision.of(r.build()));
  }

  @Test
  void namesTheColourHeldMostWithAWild() throws Exception {
    Card wild = card(Color.COLOR_WILD, Rank.RANK_WILD);
    List<Card> hand =
        List.of(card(Color.COLOR_GREEN, Rank.RANK_ONE), card(Color.COLOR_GREEN, Rank.RANK_TWO), card(Color.COLOR_BLUE, Rank.RANK_ONE), wild);
    var legal = new java.util.ArrayList<LegalAction>();
    legal.add(simple(0, ActionKind.ACTION_KIND_DRAW));
    legal.addAll(wildPlays(wild, false));
    int id = decide(request(Prompt.PROMPT_TURN, Color.COLOR_RED, hand, legal));
    assertEquals(play(wild, Color.COLOR_GREEN, false).getId(), id);
  }

  @Test
  void prefersPlayingOverDrawingAndDumpsPoints() throws Exception {
    Card red2 = card(Color.COLOR_RED, Rank.RANK_TWO);
    Card redSkip = card(Color.COLOR_RED, Rank.RANK_SKIP);
    Card wild = card(Color.COLOR_WILD, Rank.RANK_WILD);
    var legal = new java.util.ArrayList<LegalAction>();
    legal.add(simple(0, ActionKind.ACTION_KIND_DRAW));
    legal.add(play(red2, Color.COLOR_UNSPECIFIED, false));
    legal.add(play(redSkip, Color.COLOR_UNSPECIFIED, false));
    legal.addAll(wildPlays(wild, false));
    int id = decide(request(Prompt.PROMPT_TURN, Color.COLOR_RED, List.of(red2, redSkip, wild), legal));
    assertEquals(play(redSkip, Color.COLOR_UNSPECIFIED, false).getId(), id);
  }

  @Test
  void callsUno() throws Exception {
    Card red2 = card(Color.COLOR_RED, Rank.RANK_TWO);
    Card blue9 = card(Color.COLOR_BLUE, Rank.RANK_NINE);
    List<LegalAction> legal =
        List.of(
            simple(0, ActionKind.ACTION_KIND_DRAW),
            play(red2, Color.COLOR_UNSPECIFIED, false),
            play(red2, Color.COLOR_UNSPECIFIED, true));
    int id = decide(request(Prompt.PROMPT_TURN, Color.COLOR_RED, List.of(red2, blue9), legal));
    assertEquals(1000 + 10 * red2.getCode() + 1, id);
  }

  @Test
  void neverBluffsAWildDrawFour() throws Exception {
    Card wd4 = card(Color.COLOR_WILD, Rank.RANK_WILD_DRAW_FOUR);
    Card red5 = card(Color.COLOR_RED, Rank.RANK_FIVE);
    var legal = new java.util.ArrayList<LegalAction>();
    legal.add(simple(0, ActionKind.ACTION_KIND_DRAW));
    legal.addAll(wildPlays(wd4, false));
    // holds red 5 but it does not match top (say blue 7 with active colour red? no: active red) ->
    // active colour red is held, so the Wild Draw Four would be a bluff: draw instead
    assertEquals(0, decide(request(Prompt.PROMPT_TURN, Color.COLOR_RED, List.of(red5, wd4), legal)));
    // no card of the active colour (blue): play it, naming red (held most)
    assertEquals(
        play(wd4, Color.COLOR_RED, false).getId(),
        decide(request(Prompt.PROMPT_TURN, Color.COLOR_BLUE, List.of(red5, wd4), legal)));
  }

  @Test
  void catchesAMissedUnoAndCallsItsOwnLate() throws Exception {
    List<LegalAction> window =
        List.of(simple(5, ActionKind.ACTION_KIND_NO_CATCH), LegalAction.newBuilder().setId(12).setKind(ActionKind.ACTION_KIND_CATCH).setTargetSeat(2).build());
    assertEquals(12, decide(request(Prompt.PROMPT_UNO_WINDOW, Color.COLOR_RED, List.of(), window)));
    assertEquals(4, decide(request(Prompt.PROMPT_LATE_UNO, Color.COLOR_RED, List.of(), List.of(simple(4, ActionKind.ACTION_KIND_CALL_UNO)))));
  }

  @Test
  void acceptsAWildDrawFour() throws Exception {
    List<LegalAction> legal = List.of(simple(2, ActionKind.ACTION_KIND_ACCEPT), simple(3, ActionKind.ACTION_KIND_CHALLENGE));
    assertEquals(2, decide(request(Prompt.PROMPT_WILD_DRAW_FOUR, Color.COLOR_RED, List.of(), legal)));
  }

  @Test
  void passesWhenTheDrawnCardIsAWildDrawFourBluffAndChoosesColours() throws Exception {
    Card wd4 = card(Color.COLOR_WILD, Rank.RANK_WILD_DRAW_FOUR);
    Card green3 = card(Color.COLOR_GREEN, Rank.RANK_THREE);
    var legal = new java.util.ArrayList<LegalAction>();
    legal.add(simple(1, ActionKind.ACTION_KIND_PASS));
    legal.addAll(wildPlays(wd4, false));
    assertEquals(1, decide(request(Prompt.PROMPT_DRAWN, Color.COLOR_GREEN, List.of(green3, wd4), legal)));

    List<LegalAction> colours =
        List.of(
            LegalAction.newBuilder().setId(20).setKind(ActionKind.ACTION_KIND_CHOOSE_COLOR).setColor(Color.COLOR_RED).build(),
            LegalAction.newBuilder().setId(21).setKind(ActionKind.ACTION_KIND_CHOOSE_COLOR).setColor(Color.COLOR_YELLOW).build(),
            LegalAction.newBuilder().setId(22).setKind(ActionKind.ACTION_KIND_CHOOSE_COLOR).setColor(Color.COLOR_GREEN).build(),
            LegalAction.newBuilder().setId(23).setKind(ActionKind.ACTION_KIND_CHOOSE_COLOR).setColor(Color.COLOR_BLUE).build());
    assertEquals(22, decide(request(Prompt.PROMPT_CHOOSE_COLOR, Color.COLOR_UNSPECIFIED, List.of(green3), colours)));
  }

  @Test
  void sevenOSwapsWithTheSeatHoldingFewestCards() throws Exception {
    Card red7 = card(Color.COLOR_RED, Rank.RANK_SEVEN);
    List<LegalAction> legal =
        List.of(
            simple(0, ActionKind.ACTION_KIND_DRAW),
            LegalAction.newBuilder().setId(3000 + 70 + 1).setKind(ActionKind.ACTION_KIND_PLAY).setCard(red7).setTargetSeat(1).build(),
            LegalAction.newBuilder().setId(3000 + 70 + 2).setKind(ActionKind.ACTION_KIND_PLAY).setCard(red7).setTargetSeat(2).build());
    DecisionRequest.Builder r = request(Prompt.PROMPT_TURN, Color.COLOR_RED, List.of(red7, red7, red7), legal);
    r.getViewBuilder()
        .addSeats(SeatState.newBuilder().setSeat(0).setCardCount(3))
        .addSeats(SeatState.newBuilder().setSeat(1).setCardCount(6))
        .addSeats(SeatState.newBuilder().setSeat(2).setCardCount(2));
    assertEquals(3072, decide(r));
  }

  @Test
  void ignoresAJumpInItCannotUse() throws Exception {
    assertEquals(Bot.NO_ACTION, decide(request(Prompt.PROMPT_JUMP_IN, Color.COLOR_RED, List.of(), List.of(simple(5, ActionKind.ACTION_KIND_NO_CATCH)))));
  }

  @Test
  void theOverrunWrapperSleepsOnEveryNthDecision() throws Exception {
    Bot bot = HeuristicBotMain.overrun(d -> 0, 2, 150);
    Decision d =
        Decision.of(
            DecisionRequest.newBuilder()
                .setRequired(true)
                .addLegalActions(LegalAction.newBuilder().setId(0).setKind(ActionKind.ACTION_KIND_DRAW))
                .build());
    // Which calls overran is read from the line each logs, not from a time a busy machine could
    // reach anyway; each of them did wait its 150 ms.
    List<String> said = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.logging.Handler h =
        new java.util.logging.Handler() {
          @Override
          public void publish(java.util.logging.LogRecord r) {
            said.add(r.getMessage());
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    java.util.logging.Logger log = java.util.logging.Logger.getLogger(HeuristicBotMain.class.getName());
    log.addHandler(h);
    List<Boolean> slow = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 4; i++) {
        int before = said.size();
        long t0 = System.nanoTime();
        assertEquals(0, bot.decide(d));
        boolean overran = said.size() > before;
        slow.add(overran);
        if (overran) {
          assertTrue(System.nanoTime() - t0 >= 150_000_000L, "call " + i + " overran by less than 150 ms");
        }
      }
    } finally {
      log.removeHandler(h);
    }
    assertEquals(List.of(false, true, false, true), slow);
    assertEquals(d.getClass(), Decision.class);
  }
}
