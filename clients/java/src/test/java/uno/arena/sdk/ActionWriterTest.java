package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import uno.v1.Action;
import uno.v1.PlayRequest;

@Timeout(10)
class ActionWriterTest {
  private static Action answer(int i) {
    return Action.newBuilder().setRequestId("r" + i).setActionId(i).build();
  }

  private static List<String> ids(PlayRequest m) {
    List<String> out = new ArrayList<>();
    if (m.hasAction()) {
      out.add(m.getAction().getRequestId());
    }
    m.getActions().getActionsList().forEach(a -> out.add(a.getRequestId()));
    return out;
  }

  @Test
  void dropTakesBackAClosedRequestsQueuedAnswersAndOnlyThem() throws Exception {
    List<PlayRequest> written = new CopyOnWriteArrayList<>();
    CountDownLatch inFlight = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ActionWriter w =
        new ActionWriter(
            m -> {
              if (written.isEmpty()) {
                inFlight.countDown();
                try {
                  release.await();
                } catch (InterruptedException e) {
                  throw new AssertionError(e);
                }
              }
              return written.add(m);
            });
    CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> w.send(answer(0)));
    assertTrue(inFlight.await(20, TimeUnit.SECONDS));
    for (int i : new int[] {1, 2, 1, 3}) {
      assertTrue(w.send(answer(i)));
    }
    assertEquals(2, w.drop("r1"));
    assertEquals(0, w.drop("r0"), "an answer being written cannot be taken back");
    assertEquals(false, w.send(answer(4), () -> false), "not queued for a closed request");
    release.countDown();
    assertTrue(first.get(20, TimeUnit.SECONDS));
    List<String> order = new ArrayList<>();
    written.forEach(m -> order.addAll(ids(m)));
    assertEquals(List.of("r0", "r2", "r3"), order);
  }

  @Test
  void aLoneAnswerIsWrittenAtOnceAndAlone() {
    List<PlayRequest> written = new ArrayList<>();
    ActionWriter w = new ActionWriter(m -> written.add(m));
    for (int i = 0; i < 3; i++) {
      assertTrue(w.send(answer(i)));
      assertEquals(i + 1, written.size(), "written before send returned");
      assertTrue(written.get(i).hasAction(), "alone, not in a batch");
    }
  }

  @Test
  void answersThatPileUpDuringAWriteLeaveTogetherInOrderAtMost256PerMessage() throws Exception {
    List<PlayRequest> written = new CopyOnWriteArrayList<>();
    CountDownLatch inFlight = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ActionWriter w =
        new ActionWriter(
            m -> {
              if (written.isEmpty()) {
                inFlight.countDown();
                try {
                  release.await();
                } catch (InterruptedException e) {
                  throw new AssertionError(e);
                }
              }
              return written.add(m);
            });
    CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> w.send(answer(0)));
    assertTrue(inFlight.await(20, TimeUnit.SECONDS));
    // The first write is held until release below, so a send that waited for it would never
    // return: returning at all is the check, not a time.
    CompletableFuture<Void> piled =
        CompletableFuture.runAsync(
            () -> {
              for (int i = 1; i <= 300; i++) {
                assertTrue(w.send(answer(i)));
              }
            });
    try {
      piled.get(20, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      release.countDown();
      throw new AssertionError("send waited for another thread's write");
    }
    assertEquals(300, w.waiting());
    assertEquals(0, written.size(), "nothing else is written while the first write is in flight");
    release.countDown();
    assertTrue(first.get(20, TimeUnit.SECONDS)); // the first thread sends what piled up, then returns
    assertEquals(3, written.size(), "r0 alone, then 256 and 44 in two ActionBatches");
    assertTrue(written.get(0).hasAction());
    assertEquals(ActionWriter.MAX_ACTION_BATCH, written.get(1).getActions().getActionsCount());
    assertEquals(300 - ActionWriter.MAX_ACTION_BATCH, written.get(2).getActions().getActionsCount());
    List<String> order = new ArrayList<>();
    written.forEach(m -> order.addAll(ids(m)));
    List<String> want = new ArrayList<>();
    for (int i = 0; i <= 300; i++) {
      want.add("r" + i);
    }
    assertEquals(want, order);
    assertEquals(0, w.waiting());
  }
}
