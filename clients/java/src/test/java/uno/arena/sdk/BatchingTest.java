package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import uno.arena.sdk.FakeArena.FakeStream;
import uno.v1.MatchEnded;
import uno.v1.MatchStarted;
import uno.v1.PlayRequest;
import uno.v1.PlayResponse;
import uno.v1.RequestClosed;
import uno.v1.Welcome;

/** Batching (issue 11): Hello.max_batch, ResponseBatch in, ActionBatch out. */
@Timeout(30)
class BatchingTest {
  private FakeArena arena;
  private UnoBotClient client;

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

  private void start(Bot bot, int maxBatch, ClientInterceptor... interceptors) {
    client =
        UnoBotClient.builder()
            .channelFactory(arena.channelFactory(interceptors))
            .token("secret-token")
            .botName("java-test")
            .backoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .stopGrace(Duration.ofMillis(500))
            .maxBatch(maxBatch)
            .bot(bot)
            .build();
    CompletableFuture.runAsync(
        () -> {
          try {
            client.run();
          } catch (Exception e) {
            throw new RuntimeException(e);
          }
        });
  }

  private FakeStream welcomed() throws InterruptedException {
    FakeStream s = arena.nextStream();
    assertTrue(s.next().hasHello());
    s.send(PlayResponse.newBuilder().setWelcome(Welcome.newBuilder().setSessionId("s-1").setProtocolVersion(1)).build());
    return s;
  }

  private static PlayResponse started(int seat) {
    return PlayResponse.newBuilder().setMatchStarted(MatchStarted.newBuilder().setMatchId("m1").setSeat(seat)).build();
  }

  private static PlayResponse ended(int seat) {
    return PlayResponse.newBuilder().setMatchEnded(MatchEnded.newBuilder().setMatchId("m1").setSeat(seat)).build();
  }

  @Test
  void helloCarriesMaxBatchAndZeroTurnsBatchingOff() throws Exception {
    for (int n : new int[] {0, 7, 1024}) {
      start(d -> 0, n);
      assertEquals(n, arena.nextStream().next().getHello().getMaxBatch());
      client.stop();
      client.awaitTermination(Duration.ofSeconds(5));
    }
    client = null;
    assertThrows(IllegalArgumentException.class, () -> UnoBotClient.builder().maxBatch(1025));
    assertThrows(IllegalArgumentException.class, () -> UnoBotClient.builder().maxBatch(-1));
  }

  @Test
  void everyMessageOfABatchIsHandledAsIfItCameAloneInOrder() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    List<Integer> endedSeats = new CopyOnWriteArrayList<>();
    Bot bot =
        new Bot() {
          @Override
          public int decide(Decision d) throws Exception {
            seen.add(d.request().getRequestId() + " started=" + (d.match().started() != null) + " events=" + d.events().size());
            if (d.request().getRequestId().equals("r3")) {
              Thread.sleep(5000); // answered (the fallback, on time) only if its RequestClosed were not handled after it
            }
            return 1070;
          }

          @Override
          public void onMatchEnded(MatchContext match, MatchEnded e) {
            endedSeats.add(e.getSeat());
          }
        };
    start(bot, 64);
    FakeStream s = welcomed();
    s.sendBatch(
        started(0),
        started(1),
        FakeArena.wrap(FakeArena.turn("r1", "m1", 0, 2000).addEvents(FakeArena.event(1)).addEvents(FakeArena.event(2))),
        FakeArena.wrap(FakeArena.turn("r2", "m1", 1, 2000).addEvents(FakeArena.event(1)).addEvents(FakeArena.event(2))));
    Set<String> got = new HashSet<>(List.of(s.nextAction().getRequestId(), s.nextAction().getRequestId()));
    assertEquals(Set.of("r1", "r2"), got);
    // r3 is closed by the next message of its batch: only r4 gets an answer
    s.sendBatch(
        FakeArena.wrap(FakeArena.turn("r3", "m1", 0, 300)),
        PlayResponse.newBuilder().setRequestClosed(RequestClosed.newBuilder().setRequestId("r3").setMatchId("m1").setSeat(0)).build(),
        FakeArena.wrap(FakeArena.turn("r4", "m1", 0, 2000)));
    assertEquals("r4", s.nextAction().getRequestId());
    assertNull(s.poll(600), "r3 was closed by the next message of its batch");
    s.sendBatch(ended(0), ended(1));
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FakeArena.PATIENCE_MS);
    while (endedSeats.size() < 2 && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    assertEquals(Set.of(0, 1), new HashSet<>(endedSeats), "both seats' MatchEnded");
    List<String> sorted = new ArrayList<>(seen);
    sorted.removeIf(x -> x.startsWith("r3 ")); // may or may not have started before it was closed
    sorted.sort(null);
    assertEquals(List.of("r1 started=true events=2", "r2 started=true events=2", "r4 started=true events=0"), sorted);
  }

  /** Holds the first lone Action the client writes until {@code release} opens. */
  private static final class HoldFirstAction implements ClientInterceptor {
    final CountDownLatch held = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicBoolean done = new AtomicBoolean();

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<Q, R>(next.newCall(method, options)) {
        @Override
        public void sendMessage(Q message) {
          if (message instanceof PlayRequest m && m.hasAction() && done.compareAndSet(false, true)) {
            held.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          super.sendMessage(message);
        }
      };
    }
  }

  @Test
  void answersThatPileUpDuringAWriteReachTheServerInOneActionBatch() throws Exception {
    int others = 40;
    HoldFirstAction hold = new HoldFirstAction();
    start(d -> 1070, 64, hold);
    FakeStream s = welcomed();
    PlayResponse[] batch = new PlayResponse[others + 1];
    for (int i = 0; i <= others; i++) {
      batch[i] = FakeArena.wrap(FakeArena.turn("r" + i, "m" + i, 0, 5000));
    }
    s.sendBatch(batch);
    assertTrue(hold.held.await(FakeArena.PATIENCE_MS, TimeUnit.MILLISECONDS), "no answer written");
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FakeArena.PATIENCE_MS);
    while (client.answersWaiting() < others && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertEquals(others, client.answersWaiting(), "the other answers wait for the write in flight");
    hold.release.countDown();
    Set<String> got = new HashSet<>();
    for (int i = 0; i <= others; i++) {
      got.add(s.nextAction().getRequestId());
    }
    assertEquals(others + 1, got.size());
    assertEquals(1, s.singles.get(), "the first answer alone");
    assertEquals(List.of(others), s.batches, "then all the others in one ActionBatch");
  }

  /**
   * Issue 20: r0's answer is held in its write while r1's waits behind it; the server closes r1,
   * and the client takes r1's answer back (answersWaiting drops to 0) before the write is let go.
   * The next answer the server gets after r0's is r2's: r1's is never sent.
   */
  @Test
  void anAnswerStillQueuedWhenItsRequestClosesIsNeverSent() throws Exception {
    HoldFirstAction hold = new HoldFirstAction();
    start(d -> 1070, 64, hold);
    FakeStream s = welcomed();
    s.send(FakeArena.wrap(FakeArena.turn("r0", "m0", 0, 5000)));
    assertTrue(hold.held.await(FakeArena.PATIENCE_MS, TimeUnit.MILLISECONDS), "no answer written");
    try { // a failure must not leave the write held: the client could not stop
      s.send(FakeArena.wrap(FakeArena.turn("r1", "m1", 0, 5000)));
      waitUntil(() -> client.answersWaiting() == 1, "r1's answer to be queued");
      s.send(PlayResponse.newBuilder().setRequestClosed(RequestClosed.newBuilder().setRequestId("r1").setMatchId("m1").setSeat(0)).build());
      waitUntil(() -> client.answersWaiting() == 0, "r1's answer to be taken back");
    } finally {
      hold.release.countDown();
    }
    assertEquals("r0", s.nextAction().getRequestId());
    s.send(FakeArena.wrap(FakeArena.turn("r2", "m2", 0, 5000)));
    assertEquals("r2", s.nextAction().getRequestId(), "r1 was closed while its answer was queued");
  }

  /**
   * A decide that returns after its request closed sends nothing: r1's decide has started before
   * the close is sent and returns only once r2 (read after the close) is decided; r3, on r1's
   * seat, comes after r1's decide returned, so its answer is the next thing the server gets.
   */
  @Test
  void aDecideThatReturnsAfterItsRequestClosedSendsNothing() throws Exception {
    CountDownLatch r1Started = new CountDownLatch(1);
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch r1Returned = new CountDownLatch(1);
    start(
        d -> {
          String id = d.request().getRequestId();
          if (id.equals("r1")) {
            r1Started.countDown();
            try {
              gate.await(10, TimeUnit.SECONDS);
            } finally {
              r1Returned.countDown();
            }
          } else if (id.equals("r2")) {
            gate.countDown();
          }
          return 1070;
        },
        64);
    FakeStream s = welcomed();
    s.send(FakeArena.wrap(FakeArena.turn("r1", "m1", 0, 5000)));
    assertTrue(r1Started.await(FakeArena.PATIENCE_MS, TimeUnit.MILLISECONDS), "r1's decide did not start");
    s.send(PlayResponse.newBuilder().setRequestClosed(RequestClosed.newBuilder().setRequestId("r1").setMatchId("m1").setSeat(0)).build());
    s.send(FakeArena.wrap(FakeArena.turn("r2", "m2", 0, 5000)));
    assertEquals("r2", s.nextAction().getRequestId());
    assertTrue(r1Returned.await(FakeArena.PATIENCE_MS, TimeUnit.MILLISECONDS));
    s.send(FakeArena.wrap(FakeArena.turn("r3", "m1", 0, 5000)));
    assertEquals("r3", s.nextAction().getRequestId(), "r1 was closed before its decide returned");
  }

  private static void waitUntil(java.util.function.BooleanSupplier cond, String what) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FakeArena.PATIENCE_MS);
    while (!cond.getAsBoolean()) {
      assertTrue(System.nanoTime() < until, "timed out waiting for " + what);
      Thread.sleep(5);
    }
  }
}
