package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import uno.arena.sdk.FakeArena.FakeStream;
import uno.v1.Bot.Action;
import uno.v1.Bot.ActionResult;
import uno.v1.Bot.DecisionRequest;
import uno.v1.Bot.EventCursor;
import uno.v1.Bot.Hello;
import uno.v1.Bot.MatchEnded;
import uno.v1.Bot.MatchStarted;
import uno.v1.Bot.PlayRequest;
import uno.v1.Bot.PlayResponse;
import uno.v1.Bot.Prompt;
import uno.v1.Bot.Welcome;
import uno.v1.Errors.ErrorReason;
import uno.v1.Game.ActionKind;
import uno.v1.Game.LegalAction;

@Timeout(30)
class UnoBotClientTest {
  private FakeArena arena;
  private UnoBotClient client;
  private CompletableFuture<Void> running;

  @BeforeEach
  void setUp() throws Exception {
    arena = new FakeArena();
  }

  @AfterEach
  void tearDown() throws Exception {
    if (client != null) {
      client.stop();
      client.awaitTermination(Duration.ofSeconds(5));
    }
    arena.close();
  }

  private void start(Bot bot) {
    client =
        UnoBotClient.builder()
            .channel(arena.channel())
            .token("secret-token")
            .botName("java-test")
            .botVersion("9.9")
            .backoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .safetyMargin(Duration.ofMillis(50))
            .stopGrace(Duration.ofMillis(500))
            .bot(bot)
            .build();
    running =
        CompletableFuture.runAsync(
            () -> {
              try {
                client.run();
              } catch (Exception e) {
                throw new RuntimeException(e);
              }
            });
  }

  private static PlayResponse welcome(String session, boolean resumed) {
    return PlayResponse.newBuilder()
        .setWelcome(Welcome.newBuilder().setSessionId(session).setBotName("java-test").setProtocolVersion(1).setResumed(resumed))
        .build();
  }

  private static PlayResponse accepted(Action a, String matchId, int seat) {
    return PlayResponse.newBuilder()
        .setActionResult(
            ActionResult.newBuilder()
                .setRequestId(a.getRequestId())
                .setMatchId(matchId)
                .setSeat(seat)
                .setActionId(a.getActionId())
                .setAccepted(true))
        .build();
  }

  private static boolean isLegal(DecisionRequest.Builder r, int id) {
    return r.getLegalActionsList().stream().anyMatch(a -> a.getId() == id);
  }

  @Test
  void sendsHelloWithTokenAndAnswersWithALegalId() throws Exception {
    start(d -> d.legalActions().get(d.legalActions().size() - 1).getId());
    FakeStream s = arena.nextStream();
    assertEquals("Bearer secret-token", s.authorization);
    PlayRequest first = s.next();
    assertTrue(first.hasHello(), "first message must be Hello");
    Hello h = first.getHello();
    assertEquals("java-test", h.getBotName());
    assertEquals("9.9", h.getBotVersion());
    assertEquals(1, h.getProtocolVersion());
    assertFalse(h.hasResume());

    s.send(welcome("s-1", false));
    s.send(PlayResponse.newBuilder().setMatchStarted(MatchStarted.newBuilder().setMatchId("m1").setSeat(0)).build());
    DecisionRequest.Builder req = FakeArena.turn("r1", "m1", 0, 1000);
    s.send(FakeArena.wrap(req));
    Action a = s.nextAction();
    assertEquals("r1", a.getRequestId());
    assertTrue(a.hasActionId());
    assertTrue(isLegal(req, a.getActionId()));
    assertEquals(1510, a.getActionId());
    s.send(accepted(a, "m1", 0));

    // stop(): the client half-closes (leaving) and run() returns
    client.stop();
    assertEquals(Status.Code.OK, s.clientEnded.get(5, TimeUnit.SECONDS).getCode());
    running.get(5, TimeUnit.SECONDS);
    assertEquals("s-1", client.sessionId());
  }

  @Test
  void twoMatchesInterleaveOnOneStream() throws Exception {
    CountDownLatch m2Decided = new CountDownLatch(1);
    Map<String, Integer> endedWithCount = new ConcurrentHashMap<>();
    List<String> order = new CopyOnWriteArrayList<>();
    Bot bot =
        new Bot() {
          @Override
          public int decide(Decision d) throws Exception {
            AtomicInteger n = d.match().state(AtomicInteger::new);
            n.incrementAndGet();
            if (d.matchId().equals("m1")) {
              // m1's decision waits for m2's: only possible if they run concurrently
              assertTrue(m2Decided.await(5, TimeUnit.SECONDS));
            } else {
              m2Decided.countDown();
            }
            order.add(d.matchId());
            return d.legalActions().get(1).getId();
          }

          @Override
          public void onMatchEnded(MatchContext match, MatchEnded ended) {
            endedWithCount.put(match.matchId(), match.state(AtomicInteger::new).get());
          }
        };
    start(bot);
    FakeStream s = arena.nextStream();
    s.next(); // hello
    s.send(welcome("s-1", false));
    s.send(FakeArena.wrap(FakeArena.turn("m1-r1", "m1", 0, 3000)));
    s.send(FakeArena.wrap(FakeArena.turn("m2-r1", "m2", 3, 3000)));
    Action first = s.nextAction();
    Action second = s.nextAction();
    assertEquals("m2-r1", first.getRequestId());
    assertEquals("m1-r1", second.getRequestId());
    assertEquals(List.of("m2", "m1"), order);
    s.send(accepted(first, "m2", 3));
    s.send(accepted(second, "m1", 0));

    // a second decision of m1: same per-match context
    s.send(FakeArena.wrap(FakeArena.turn("m1-r2", "m1", 0, 3000)));
    assertEquals("m1-r2", s.nextAction().getRequestId());
    assertEquals(2, client.activeMatches().size());

    s.send(PlayResponse.newBuilder().setMatchEnded(MatchEnded.newBuilder().setMatchId("m1").setSeat(0).setWon(true)).build());
    waitFor(() -> client.activeMatches().size() == 1);
    assertEquals(Map.of("m1", 2), endedWithCount);
    assertEquals("m2", client.activeMatches().iterator().next().matchId());
  }

  @Test
  void droppedStreamReconnectsAndResumes() throws Exception {
    List<Long> seenEvents = new CopyOnWriteArrayList<>();
    start(
        d -> {
          d.events().forEach(e -> seenEvents.add(e.getSequence()));
          return d.legalActions().get(0).getId();
        });
    FakeStream s1 = arena.nextStream();
    assertTrue(s1.next().hasHello());
    s1.send(welcome("s-1", false));
    s1.send(FakeArena.wrap(FakeArena.turn("r1", "m1", 2, 3000).addEvents(FakeArena.event(6)).addEvents(FakeArena.event(7))));
    assertEquals("r1", s1.nextAction().getRequestId());
    s1.fail(Status.UNAVAILABLE.withDescription("server restarting"));

    FakeStream s2 = arena.nextStream();
    assertEquals("Bearer secret-token", s2.authorization);
    Hello h = s2.next().getHello();
    assertEquals("s-1", h.getResume().getSessionId());
    assertEquals(
        List.of(EventCursor.newBuilder().setMatchId("m1").setSeat(2).setLastSequence(7).build()),
        h.getResume().getCursorsList());
    s2.send(welcome("s-1", true));
    // a re-sent request replays event 7 (already seen) and brings 8
    s2.send(
        FakeArena.wrap(
            FakeArena.turn("r2", "m1", 2, 3000).setResent(true).addEvents(FakeArena.event(7)).addEvents(FakeArena.event(8))));
    assertEquals("r2", s2.nextAction().getRequestId());
    assertEquals(List.of(6L, 7L, 8L), seenEvents);
    assertEquals(2, client.streamsOpened());
  }

  @Test
  void slowDecideFallsBackToTheDefaultBeforeTheDeadline() throws Exception {
    start(
        d -> {
          Thread.sleep(5000);
          return 1070;
        });
    FakeStream s = arena.nextStream();
    s.next();
    s.send(welcome("s-1", false));
    long t0 = System.nanoTime();
    s.send(FakeArena.wrap(FakeArena.turn("r1", "m1", 0, 1000)));
    Action a = s.nextAction();
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertEquals(0, a.getActionId(), "default_action_id");
    assertTrue(ms >= 800 && ms < 1000, "answered after " + ms + " ms, deadline 1000 ms");
  }

  @Test
  void optionalRequestsMayBeIgnoredAndBadAnswersFallBack() throws Exception {
    start(
        d -> {
          if (!d.required()) {
            return Bot.NO_ACTION;
          }
          if (d.request().getRequestId().equals("r-throw")) {
            throw new IllegalStateException("bug in the bot");
          }
          return 4242; // not legal
        });
    FakeStream s = arena.nextStream();
    s.next();
    s.send(welcome("s-1", false));
    DecisionRequest.Builder window =
        DecisionRequest.newBuilder()
            .setRequestId("r-window")
            .setMatchId("m1")
            .setSeat(0)
            .setPrompt(Prompt.PROMPT_UNO_WINDOW)
            .setRequired(false)
            .setTimeLeftMs(2000)
            .addLegalActions(LegalAction.newBuilder().setId(5).setKind(ActionKind.ACTION_KIND_NO_CATCH))
            .addLegalActions(LegalAction.newBuilder().setId(11).setKind(ActionKind.ACTION_KIND_CATCH).setTargetSeat(1));
    s.send(FakeArena.wrap(window));
    assertNull(s.poll(200), "optional request must stay unanswered");
    s.send(FakeArena.wrap(FakeArena.turn("r-illegal", "m1", 0, 2000).setDefaultActionId(1070)));
    Action a = s.nextAction();
    assertEquals("r-illegal", a.getRequestId());
    assertEquals(1070, a.getActionId());
    s.send(FakeArena.wrap(FakeArena.turn("r-throw", "m1", 0, 2000).clearDefaultActionId()));
    a = s.nextAction();
    assertEquals("r-throw", a.getRequestId());
    assertEquals(0, a.getActionId(), "first legal id");
  }

  @Test
  void rejectedAnswerIsRetriedOnceWithTheFallback() throws Exception {
    start(d -> 1070);
    FakeStream s = arena.nextStream();
    s.next();
    s.send(welcome("s-1", false));
    s.send(FakeArena.wrap(FakeArena.turn("r1", "m1", 0, 2000)));
    Action a = s.nextAction();
    assertEquals(1070, a.getActionId());
    s.send(
        PlayResponse.newBuilder()
            .setActionResult(
                ActionResult.newBuilder()
                    .setRequestId("r1")
                    .setMatchId("m1")
                    .setActionId(1070)
                    .setCode(9)
                    .setReason(ErrorReason.ERROR_REASON_ILLEGAL_ACTION)
                    .setRequestOpen(true))
            .build());
    Action retry = s.nextAction();
    assertEquals("r1", retry.getRequestId());
    assertEquals(0, retry.getActionId());
  }

  @Test
  void badTokenIsFatal() throws Exception {
    start(d -> 0);
    FakeStream s = arena.nextStream();
    s.next();
    s.fail(Status.UNAUTHENTICATED.withDescription("INVALID_TOKEN"));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> running.get(5, TimeUnit.SECONDS));
    assertInstanceOf(UnoBotException.class, e.getCause().getCause());
    assertEquals(Status.Code.UNAUTHENTICATED, ((UnoBotException) e.getCause().getCause()).status().getCode());
    assertEquals(1, client.streamsOpened());
    assertTrue(arena.streams.isEmpty());
  }

  @Test
  void fatalCodesAreTheOnesAReconnectCannotFix() {
    for (Status.Code c : Set.of(Status.Code.UNAUTHENTICATED, Status.Code.PERMISSION_DENIED, Status.Code.FAILED_PRECONDITION)) {
      assertTrue(UnoBotClient.isFatal(Status.fromCode(c), null), c.toString());
    }
    for (Status.Code c : Set.of(Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED, Status.Code.CANCELLED, Status.Code.OK, Status.Code.INTERNAL)) {
      assertFalse(UnoBotClient.isFatal(Status.fromCode(c), null), c.toString());
    }
    assertTrue(UnoBotClient.isFatal(Status.ABORTED.withDescription("SESSION_REPLACED"), null));
    assertFalse(UnoBotClient.isFatal(Status.ABORTED, null));
  }

  private static void waitFor(java.util.function.BooleanSupplier cond) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!cond.getAsBoolean()) {
      assertTrue(System.nanoTime() < until, "condition not met in 5 s");
      Thread.sleep(10);
    }
  }
}
