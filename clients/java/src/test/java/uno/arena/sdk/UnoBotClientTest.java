package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.time.Duration;
import java.util.HashMap;
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
import uno.v1.Action;
import uno.v1.ActionResult;
import uno.v1.DecisionRequest;
import uno.v1.EventCursor;
import uno.v1.Hello;
import uno.v1.MatchEnded;
import uno.v1.MatchStarted;
import uno.v1.PlayRequest;
import uno.v1.PlayResponse;
import uno.v1.Prompt;
import uno.v1.Welcome;
import uno.v1.ErrorReason;
import uno.v1.ActionKind;
import uno.v1.LegalAction;

@Timeout(30)
class UnoBotClientTest {
  private FakeArena arena;
  private UnoBotClient client;
  private CompletableFuture<Void> running;
  /** A gate a test's slow decide or hook waits at until the test opens it (at the latest here, in tearDown). */
  private final CountDownLatch gate = new CountDownLatch(1);
  /** How many decides or hooks are waiting at the gate now. */
  private final AtomicInteger atGate = new AtomicInteger();

  /** Waits at the gate (bounded only so that a broken test cannot hang). */
  private void waitAtGate() throws InterruptedException {
    atGate.incrementAndGet();
    try {
      gate.await(60, TimeUnit.SECONDS);
    } finally {
      atGate.decrementAndGet();
    }
  }

  /**
   * Waits at the gate ignoring interrupts, like a busy computation that does not look at them:
   * it returns only when the test opens the gate.
   */
  private void holdAtGate() {
    atGate.incrementAndGet();
    boolean interrupted = false;
    try {
      while (true) {
        try {
          gate.await(60, TimeUnit.SECONDS);
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      atGate.decrementAndGet();
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    arena = new FakeArena();
  }

  @AfterEach
  void tearDown() throws Exception {
    gate.countDown();
    if (client != null) {
      client.stop();
      client.awaitTermination(Duration.ofSeconds(5));
    }
    arena.close();
  }

  private void start(Bot bot) {
    start(bot, Duration.ofMillis(10), Duration.ofMillis(50));
  }

  private void start(Bot bot, Duration initialBackoff, Duration maxBackoff) {
    client =
        UnoBotClient.builder()
            .channelFactory(arena.channelFactory())
            .token("secret-token")
            .botName("java-test")
            .botVersion("9.9")
            .backoff(initialBackoff, maxBackoff)
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
    assertEquals("9.9 " + UnoBotClient.SDK_TAG, h.getBotVersion());
    assertEquals(1, h.getProtocolVersion());
    assertFalse(h.hasResume());
    assertEquals(64, h.getMaxBatch(), "batching is on by default");

    s.send(welcome("s-1", false));
    s.send(PlayResponse.newBuilder().setMatchStarted(MatchStarted.newBuilder().setMatchId("m1").setSeat(0)).build());
    DecisionRequest.Builder req = FakeArena.turn("r1", "m1", 0, 1000);
    s.send(FakeArena.wrap(req));
    Action a = s.nextAction();
    assertEquals("r1", a.getRequestId());
    assertTrue(a.hasActionId());
    assertTrue(isLegal(req, a.getActionId()));
    assertEquals(1510, a.getActionId());

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
    // m1's decide returned only after m2's began and counted down: both ran at once. Which answer
    // is written first is a race (m1 wakes at the count-down, before m2's decide returns).
    assertEquals(
        Set.of("m1-r1", "m2-r1"),
        Set.of(first.getRequestId(), second.getRequestId()));
    assertEquals(Set.of("m1", "m2"), Set.copyOf(order));
    assertEquals(2, order.size());

    // a second decision of m1: same per-match context
    s.send(FakeArena.wrap(FakeArena.turn("m1-r2", "m1", 0, 3000)));
    assertEquals("m1-r2", s.nextAction().getRequestId());
    assertEquals(2, client.activeMatches().size());

    s.send(PlayResponse.newBuilder().setMatchEnded(MatchEnded.newBuilder().setMatchId("m1").setSeat(0).setWon(true)).build());
    waitFor(() -> client.activeMatches().size() == 1 && !endedWithCount.isEmpty());
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
    // a new channel for the new attempt; the old one is shut down
    assertEquals(2, arena.channels.size());
    assertTrue(arena.channels.get(0).isShutdown());
    assertFalse(arena.channels.get(1).isShutdown());
  }

  /** Issue 21: Hello.bot_version names the bot, the SDK and the protocol, within 64 characters. */
  @Test
  void helloBotVersionNamesTheSdkAndTheProtocol() {
    assertEquals("uno-bot-java/" + UnoBotClient.SDK_VERSION + " uno.v" + UnoBotClient.PROTOCOL_VERSION, UnoBotClient.SDK_TAG);
    assertEquals(UnoBotClient.SDK_TAG, UnoBotClient.helloBotVersion(""));
    assertEquals("1.4.2 " + UnoBotClient.SDK_TAG, UnoBotClient.helloBotVersion("1.4.2"));
    String long_ = UnoBotClient.helloBotVersion("\uD83D\uDE00".repeat(100)); // counted in characters
    assertEquals(64, long_.codePointCount(0, long_.length()));
    assertTrue(long_.endsWith(" " + UnoBotClient.SDK_TAG));
    assertFalse(Character.isHighSurrogate(long_.charAt(long_.indexOf(' ') - 1)), "no half character");
  }

  @Test
  void slowDecideFallsBackToTheDefaultBeforeTheDeadline() throws Exception {
    start(
        d -> {
          holdAtGate(); // until the test ends: every answer here is a fallback
          return 1070;
        });
    FakeStream s = arena.nextStream();
    s.next();
    s.send(welcome("s-1", false));
    // budget: 1000 ms - min(100 ms, 500 ms) = 900 ms; 300 ms: 300 - 100 = 200 ms
    long[][] cases = {{1000, 900}, {300, 200}};
    int n = 0;
    for (long[] c : cases) {
      long t0 = System.nanoTime();
      s.send(FakeArena.wrap(FakeArena.turn("r" + ++n, "m1", 0, (int) c[0])));
      Action a = s.nextAction();
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertEquals(0, a.getActionId(), "default_action_id");
      // A bound by causality: never before the budget (counted from arrival, after t0; 1 ms for
      // the timer's rounding). No upper bound: r1's decide still waits at the gate, so the
      // fallback did not wait for it.
      assertTrue(ms >= c[1] - 1, "answered after " + ms + " ms, budget " + c[1] + " ms");
      assertEquals(n, atGate.get(), "every decide so far is still running");
    }
    s.send(FakeArena.wrap(FakeArena.turn("r3", "m1", 0, 300).setDefaultActionId(1510)));
    assertEquals(1510, s.nextAction().getActionId(), "default_action_id");
    s.send(FakeArena.wrap(FakeArena.turn("r4", "m1", 0, 300).clearDefaultActionId()));
    assertEquals(0, s.nextAction().getActionId(), "first legal id");
  }

  /** Issue 14, item 1 for Java: nothing a slow decide does holds up the stream or other seats. */
  @Test
  void anOverrunningDecideBlocksNeitherTheStreamNorOtherSeats() throws Exception {
    List<String> hooks = new CopyOnWriteArrayList<>();
    Bot bot =
        new Bot() {
          @Override
          public int decide(Decision d) throws Exception {
            if (d.seat() == 0) {
              // Runs until the test has seen everything below; ignores interrupts, like a busy
              // computation.
              atGate.incrementAndGet();
              while (gate.getCount() > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
              }
              atGate.decrementAndGet();
            }
            return 1070;
          }

          @Override
          public void onMatchEnded(MatchContext match, MatchEnded ended) {
            hooks.add("ended " + match.matchId() + "/" + match.seat());
          }
        };
    start(bot);
    FakeStream s = arena.nextStream();
    s.next();
    s.send(welcome("s-1", false));
    s.send(FakeArena.wrap(FakeArena.turn("slow", "m1", 0, 1000)));
    s.send(FakeArena.wrap(FakeArena.turn("other-seat", "m1", 2, 60_000)));
    // By causality, not by a quiet machine: seat 0's decide runs until the test opens the gate,
    // so nothing below waited for it. Either answer may come first (on a busy machine the slow
    // seat's 900 ms budget can run out before the other seat's answer is written).
    Map<String, Integer> got = new HashMap<>();
    for (int i = 0; i < 2; i++) {
      Action next = s.nextAction();
      got.put(next.getRequestId(), next.getActionId());
    }
    assertEquals(Map.of("other-seat", 1070, "slow", 0), got, "the other seat's own answer and the fallback");
    assertEquals(1, atGate.get(), "seat 0's decide is still running");
    Action a;
    // The slow seat's match ends and another starts while its decide still runs.
    s.send(PlayResponse.newBuilder().setMatchEnded(MatchEnded.newBuilder().setMatchId("m1").setSeat(0)).build());
    s.send(PlayResponse.newBuilder().setMatchStarted(MatchStarted.newBuilder().setMatchId("m2").setSeat(1)).build());
    s.send(FakeArena.wrap(FakeArena.turn("next", "m2", 1, 60_000)));
    a = s.nextAction();
    assertEquals("next", a.getRequestId());
    assertEquals(1070, a.getActionId(), "the bot's own choice");
    waitFor(() -> hooks.contains("ended m1/0"));
    assertEquals(1, atGate.get(), "the next match and onMatchEnded came while seat 0's decide still ran");
  }

  @Test
  void aSlowHookDoesNotHoldUpTheStream() throws Exception {
    Bot bot =
        new Bot() {
          @Override
          public int decide(Decision d) {
            return 1070;
          }

          @Override
          public void onMatchStarted(MatchContext match, MatchStarted started) {
            try {
              waitAtGate(); // until the test has seen the answer
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        };
    start(bot);
    FakeStream s = arena.nextStream();
    s.next();
    s.send(welcome("s-1", false));
    s.send(PlayResponse.newBuilder().setMatchStarted(MatchStarted.newBuilder().setMatchId("m1").setSeat(0)).build());
    s.send(FakeArena.wrap(FakeArena.turn("r1", "m1", 0, 60_000)));
    // the hook waits at the gate until the test opens it: an answer now did not wait for it
    assertEquals(1070, s.nextAction().getActionId());
    waitFor(() -> atGate.get() == 1); // the hook did run (and still does)
  }

  /** Optional requests after the hardening issue: no deadline and no default_action_id. */
  private static DecisionRequest.Builder window(String requestId, int seat) {
    return DecisionRequest.newBuilder()
        .setRequestId(requestId)
        .setMatchId("m1")
        .setSeat(seat)
        .setPrompt(Prompt.PROMPT_UNO_WINDOW)
        .setRequired(false)
        .addLegalActions(LegalAction.newBuilder().setId(5).setKind(ActionKind.ACTION_KIND_NO_CATCH))
        .addLegalActions(LegalAction.newBuilder().setId(11).setKind(ActionKind.ACTION_KIND_CATCH).setTargetSeat(1));
  }

  @Test
  void optionalRequestsWithoutADeadlineAreAnsweredOnlyWhileOpen() throws Exception {
    CountDownLatch closedReturned = new CountDownLatch(1);
    start(
        d -> {
          switch (d.request().getRequestId()) {
            case "open" -> Thread.sleep(1300); // longer than any default budget
            case "closed" -> {
              holdAtGate();
              closedReturned.countDown();
            }
            default -> {}
          }
          return d.required() ? 1070 : 11;
        });
    FakeStream s = arena.nextStream();
    s.next();
    s.send(welcome("s-1", false));
    long t0 = System.nanoTime();
    s.send(FakeArena.wrap(window("open", 0)));
    Action a = s.nextAction();
    assertEquals("open", a.getRequestId());
    assertEquals(11, a.getActionId());
    // by causality: not before the 1300 ms decide returned
    assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) >= 1299);
    // the window closes while decide runs (it waits at the gate): nothing is sent, ever
    s.send(FakeArena.wrap(window("closed", 1)));
    waitFor(() -> atGate.get() == 1); // closed only once its decide runs
    s.send(
        PlayResponse.newBuilder()
            .setRequestClosed(
                uno.v1.RequestClosed.newBuilder()
                    .setRequestId("closed")
                    .setMatchId("m1")
                    .setSeat(1)
                    .setReason(uno.v1.CloseReason.CLOSE_REASON_EXPIRED))
            .build());
    // the stream reads in order: a later request answered means the close was read
    s.send(FakeArena.wrap(FakeArena.turn("later", "m2", 2, 60_000)));
    assertEquals("later", s.nextAction().getRequestId());
    gate.countDown();
    assertTrue(closedReturned.await(FakeArena.PATIENCE_MS, TimeUnit.MILLISECONDS));
    assertNull(s.poll(300), "a closed optional request stays unanswered");
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

  private static PlayResponse rejected(String requestId, int actionId, boolean open) {
    return PlayResponse.newBuilder()
        .setActionResult(
            ActionResult.newBuilder()
                .setRequestId(requestId)
                .setMatchId("m1")
                .setActionId(actionId)
                .setCode(9)
                .setReason(ErrorReason.ERROR_REASON_ILLEGAL_ACTION)
                .setRequestOpen(open))
        .build();
  }

  @Test
  void rejectedAnswerIsRetriedExactlyOnceWithTheFallback() throws Exception {
    start(d -> 1070);
    FakeStream s = arena.nextStream();
    s.next();
    s.send(welcome("s-1", false));
    s.send(FakeArena.wrap(FakeArena.turn("r1", "m1", 0, 2000)));
    Action a = s.nextAction();
    assertEquals(1070, a.getActionId());
    s.send(rejected("r1", 1070, true));
    Action retry = s.nextAction();
    assertEquals("r1", retry.getRequestId());
    assertEquals(0, retry.getActionId(), "default_action_id");
    s.send(rejected("r1", 0, true));
    assertNull(s.poll(300), "exactly one retry");
    // a rejection that closes the request gets no retry either
    s.send(FakeArena.wrap(FakeArena.turn("r2", "m1", 0, 2000)));
    assertEquals(1070, s.nextAction().getActionId());
    s.send(rejected("r2", 1070, false));
    assertNull(s.poll(300), "no retry for a closed request");
  }

  /** A log handler that passes on the SDK's records whose message contains {@code marker}. */
  private static java.util.logging.Handler recordsContaining(
      String marker, java.util.function.Consumer<java.util.logging.LogRecord> into) {
    return new java.util.logging.Handler() {
      @Override
      public void publish(java.util.logging.LogRecord r) {
        if (r.getMessage() != null && r.getMessage().contains(marker)) {
          into.accept(r);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
  }

  /**
   * A late answer (ABORTED: its request closed first) is logged at INFO, a fault at WARNING. An
   * examination found every late answer of a correct bot logged as a warning "rejected".
   */
  @Test
  void aLateAnswerIsInformationAndAFaultAWarning() throws Exception {
    java.util.logging.Logger sdkLog = java.util.logging.Logger.getLogger(UnoBotClient.class.getName());
    List<java.util.logging.LogRecord> said = new CopyOnWriteArrayList<>();
    java.util.logging.Handler capture = recordsContaining("-mark-", said::add);
    sdkLog.addHandler(capture);
    try {
      start(d -> 1070);
      FakeStream s = arena.nextStream();
      s.next();
      s.send(welcome("s-1", false));
      s.send(FakeArena.wrap(FakeArena.turn("late-mark-1", "m1", 0, 2000)));
      s.nextAction();
      s.send(
          PlayResponse.newBuilder()
              .setActionResult(
                  ActionResult.newBuilder()
                      .setRequestId("late-mark-1")
                      .setMatchId("m1")
                      .setActionId(1070)
                      .setCode(10)
                      .setReason(ErrorReason.ERROR_REASON_DEADLINE_PASSED))
              .build());
      s.send(FakeArena.wrap(FakeArena.turn("fault-mark-2", "m1", 0, 2000)));
      s.nextAction();
      s.send(rejected("fault-mark-2", 1070, false));
      // one more answered request: both results above were read (the stream is handled in order)
      s.send(FakeArena.wrap(FakeArena.turn("after", "m1", 0, 2000)));
      s.nextAction();
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (said.size() < 2 && System.nanoTime() < end) {
        Thread.sleep(5);
      }
      assertEquals(2, said.size(), said.toString());
      java.util.logging.LogRecord late = said.get(0);
      java.util.logging.LogRecord fault = said.get(1);
      assertTrue(late.getMessage().contains("late-mark-1") && late.getMessage().contains("arrived late"));
      assertEquals(java.util.logging.Level.INFO, late.getLevel(), late.getMessage());
      assertTrue(fault.getMessage().contains("fault-mark-2") && fault.getMessage().contains("rejected"));
      assertEquals(java.util.logging.Level.WARNING, fault.getLevel(), fault.getMessage());
    } finally {
      sdkLog.removeHandler(capture);
    }
  }

  /**
   * The backoff starts over after a Welcome, and every attempt has a new channel. What the SDK
   * waits is read from its "reconnecting in N ms" warnings, in order, and every real gap is at
   * least the delay logged before it (causality): no bound here depends on how busy the machine
   * is.
   */
  @Test
  void backoffStartsAgainAfterAWelcomeAndEveryAttemptHasANewChannel() throws Exception {
    java.util.logging.Logger sdkLog = java.util.logging.Logger.getLogger(UnoBotClient.class.getName());
    List<String> said = new CopyOnWriteArrayList<>();
    java.util.logging.Handler capture = recordsContaining("reset-test", r -> said.add(r.getMessage()));
    sdkLog.addHandler(capture);
    try {
      start(d -> 0, Duration.ofMillis(50), Duration.ofSeconds(10));
      List<Long> gaps = new CopyOnWriteArrayList<>();
      long ended = 0;
      for (int i = 0; i < 6; i++) { // refused before any Welcome: about 50, 100, ... 1600 ms after
        FakeStream s = arena.nextStream();
        if (i > 0) {
          gaps.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ended));
        }
        s.next();
        s.fail(Status.UNAVAILABLE.withDescription("reset-test: try later"));
        ended = System.nanoTime();
      }
      FakeStream s = arena.nextStream();
      gaps.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ended));
      s.next();
      s.send(welcome("s-1", false));
      s.fail(Status.INTERNAL.withDescription("reset-test: oops")); // a welcomed stream that fails
      ended = System.nanoTime();
      arena.nextStream();
      gaps.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ended));
      // The delays the SDK chose, in order: doubling from 50 ms, then back to 50 ms after the
      // Welcome (without the reset: 3200 ms), each +-20% (1 ms for rounding).
      long[] base = {50, 100, 200, 400, 800, 1600, 50};
      assertEquals(base.length, said.size(), "one warning per failed stream: " + said);
      for (int i = 0; i < base.length; i++) {
        java.util.regex.Matcher m =
            java.util.regex.Pattern.compile("reconnecting in (\\d+) ms").matcher(said.get(i));
        assertTrue(m.find(), said.get(i));
        long chose = Long.parseLong(m.group(1));
        assertTrue(
            chose >= base[i] * 8 / 10 - 1 && chose <= base[i] * 12 / 10 + 1,
            "delay " + i + " = " + chose + " ms, want " + base[i] + " ms +-20%: " + said);
        // causality: the delay starts after the stream failed, so the next one never comes sooner
        assertTrue(gaps.get(i) >= chose - 5, "gap " + i + " shorter than its delay: " + gaps + " " + said);
      }
      assertEquals(8, arena.channels.size(), "a new channel per attempt");
      for (int i = 0; i < 7; i++) {
        assertTrue(arena.channels.get(i).isShutdown(), "channel " + i + " shut down");
      }
    } finally {
      sdkLog.removeHandler(capture);
    }
  }


  @Test
  void fatalCodesStopAndOthersReconnect() throws Exception {
    for (Status.Code c :
        List.of(
            Status.Code.UNAUTHENTICATED,
            Status.Code.PERMISSION_DENIED,
            Status.Code.FAILED_PRECONDITION,
            Status.Code.INVALID_ARGUMENT,
            Status.Code.UNIMPLEMENTED,
            Status.Code.ABORTED)) {
      assertTrue(UnoBotClient.isFatal(Status.fromCode(c)), c.toString());
    }
    start(d -> 0);
    for (Status.Code c :
        List.of(
            Status.Code.UNAVAILABLE,
            Status.Code.RESOURCE_EXHAUSTED,
            Status.Code.INTERNAL,
            Status.Code.UNKNOWN,
            Status.Code.CANCELLED,
            Status.Code.DEADLINE_EXCEEDED,
            Status.Code.OK)) {
      assertFalse(UnoBotClient.isFatal(Status.fromCode(c)), c.toString());
      FakeStream s = arena.nextStream();
      s.next();
      s.send(welcome("s-1", false));
      if (c == Status.Code.OK) {
        s.complete(); // a clean end of the stream
      } else {
        s.fail(Status.fromCode(c).withDescription("x"));
      }
    }
    // still reconnecting; a fatal ending stops it, with one plain line
    FakeStream s = arena.nextStream();
    s.next();
    s.fail(Status.ABORTED.withDescription("SESSION_REPLACED"));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> running.get(5, TimeUnit.SECONDS));
    UnoBotException fatal = (UnoBotException) e.getCause().getCause();
    assertEquals("the server refused the bot: ABORTED (SESSION_REPLACED)", fatal.getMessage());
  }

  @Test
  void aRefusedConnectionIsReportedInPlainWords() throws Exception {
    int port;
    try (java.net.ServerSocket ss = new java.net.ServerSocket(0)) {
      port = ss.getLocalPort(); // closed again: nothing listens there
    }
    List<String> lines = new CopyOnWriteArrayList<>();
    java.util.logging.Handler capture =
        new java.util.logging.Handler() {
          @Override
          public void publish(java.util.logging.LogRecord r) {
            lines.add(r.getMessage());
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    java.util.logging.Logger log = java.util.logging.Logger.getLogger(UnoBotClient.class.getName());
    log.addHandler(capture);
    try {
      client =
          UnoBotClient.builder()
              .target("http://127.0.0.1:" + port)
              .token("t")
              .botName("java-test")
              .backoff(Duration.ofMillis(10), Duration.ofMillis(20))
              .bot(d -> 0)
              .build();
      running = CompletableFuture.runAsync(() -> {
        try {
          client.run();
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      });
      waitFor(() -> lines.stream().anyMatch(l -> l.startsWith("connection refused")));
      String line = lines.stream().filter(l -> l.startsWith("connection refused")).findFirst().orElseThrow();
      assertTrue(line.startsWith("connection refused (127.0.0.1:" + port + "); reconnecting in "), line);
      assertTrue(client.streamsOpened() >= 1);
    } finally {
      log.removeHandler(capture);
    }
  }

  @Test
  void badTokenIsFatal() throws Exception {
    start(d -> 0);
    FakeStream s = arena.nextStream();
    s.next();
    s.fail(Status.UNAUTHENTICATED.withDescription("INVALID_TOKEN"));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> running.get(5, TimeUnit.SECONDS));
    assertInstanceOf(UnoBotException.class, e.getCause().getCause());
    UnoBotException fatal = (UnoBotException) e.getCause().getCause();
    assertEquals(Status.Code.UNAUTHENTICATED, fatal.status().getCode());
    assertEquals("the server refused the bot: UNAUTHENTICATED (INVALID_TOKEN)", fatal.getMessage());
    assertEquals(1, client.streamsOpened());
    assertTrue(arena.streams.isEmpty());
  }

  @Test
  void streamEndingsAreDescribedInPlainWords() {
    UnoBotClient c = UnoBotClient.builder().target("127.0.0.1:50051").botName("b").bot(d -> 0).build();
    assertEquals(
        "server closed the stream: UNAVAILABLE (shutting down)",
        c.describe(Status.UNAVAILABLE.withDescription("shutting down")));
    assertEquals("server closed the stream", c.describe(Status.OK));
    assertEquals(
        "connection refused (127.0.0.1:50051)",
        c.describe(
            Status.UNAVAILABLE.withDescription("io exception")
                .withCause(new java.net.ConnectException("Connection refused: /127.0.0.1:50051"))));
    assertEquals(
        "the server refused the bot: UNAUTHENTICATED (INVALID_TOKEN)",
        "the server refused the bot: " + UnoBotClient.statusText(Status.UNAUTHENTICATED.withDescription("INVALID_TOKEN")));
  }

  private static void waitFor(java.util.function.BooleanSupplier cond) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FakeArena.PATIENCE_MS);
    while (!cond.getAsBoolean()) {
      assertTrue(System.nanoTime() < until, "condition not met in " + FakeArena.PATIENCE_MS + " ms");
      Thread.sleep(10);
    }
  }
}
