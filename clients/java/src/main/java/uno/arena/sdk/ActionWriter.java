package uno.arena.sdk;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import uno.v1.Action;
import uno.v1.ActionBatch;
import uno.v1.PlayRequest;

/**
 * How the answers of one stream leave. The thread that gives an answer while no write is in flight
 * writes it at once, alone; answers given while a write is in flight are queued, and that same
 * writing thread sends them all as soon as its write is done: one {@code PlayRequest.action}, or
 * one {@code PlayRequest.actions} of up to {@link #MAX_ACTION_BATCH}, in the order they were
 * given. No answer is ever held back to wait for company, and no thread waits for another's write.
 */
final class ActionWriter {
  /** The most answers one {@code PlayRequest.actions} may hold (the protocol's limit). */
  static final int MAX_ACTION_BATCH = 256;

  private final Predicate<PlayRequest> write;
  private final Object lock = new Object();
  private List<Action> queued = new ArrayList<>(); // guarded by lock
  private boolean writing; // guarded by lock

  /** {@code write} sends one message and returns false if the stream is gone. */
  ActionWriter(Predicate<PlayRequest> write) {
    this.write = write;
  }

  /**
   * Sends {@code action} now, or leaves it to the thread writing (which sends it right after its
   * own write). Returns false only if this thread wrote and the stream turned out to be gone.
   */
  boolean send(Action action) {
    return send(action, () -> true);
  }

  /**
   * As {@link #send(Action)}, but the answer is queued only if {@code stillOpen} holds, checked
   * under the same lock {@link #drop} takes: a request closed before is never answered, and one
   * closed after has its answer taken back by {@link #drop} unless it is already being written.
   * Returns false if the request was closed or this thread wrote and the stream turned out to be
   * gone.
   */
  boolean send(Action action, BooleanSupplier stillOpen) {
    synchronized (lock) {
      if (!stillOpen.getAsBoolean()) {
        return false;
      }
      queued.add(action);
      if (writing) {
        return true;
      }
      writing = true;
    }
    boolean ok = true;
    while (true) {
      List<Action> ready;
      synchronized (lock) {
        if (queued.isEmpty()) {
          writing = false;
          return ok;
        }
        if (queued.size() <= MAX_ACTION_BATCH) {
          ready = queued;
          queued = new ArrayList<>();
        } else {
          ready = new ArrayList<>(queued.subList(0, MAX_ACTION_BATCH));
          queued.subList(0, MAX_ACTION_BATCH).clear();
        }
      }
      ok &= write.test(message(ready));
    }
  }

  /**
   * Takes back the answers to {@code requestId} still waiting for the write in flight (the server
   * closed that request: an answer to it is never sent). Returns how many it removed.
   */
  int drop(String requestId) {
    synchronized (lock) {
      int before = queued.size();
      queued.removeIf(a -> a.getRequestId().equals(requestId));
      return before - queued.size();
    }
  }

  /** Answers waiting for the write in flight (tests). */
  int waiting() {
    synchronized (lock) {
      return queued.size();
    }
  }

  static PlayRequest message(List<Action> actions) {
    if (actions.size() == 1) {
      return PlayRequest.newBuilder().setAction(actions.get(0)).build();
    }
    return PlayRequest.newBuilder().setActions(ActionBatch.newBuilder().addAllActions(actions)).build();
  }
}
