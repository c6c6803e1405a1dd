package uno.arena.sdk;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;
import uno.v1.MatchStarted;

/**
 * Per-seat state of one match the bot plays: created when the match starts (or on the seat's first
 * decision request after a reconnect) and dropped on {@code MatchEnded}.
 *
 * <p>Stash anything you like in {@link #data()} or in a typed {@link #state(Supplier)} object. A
 * bot normally holds one seat per match; if it holds several seats of the same match, each seat
 * gets its own context (the server keeps their hidden information apart, so do you).
 *
 * <p>Decisions of one seat do not overlap in normal play (at most one request per seat is open),
 * but a decide call that overran its deadline may still be running when the next one starts, so
 * the maps here are thread-safe.
 */
public final class MatchContext {
  private final String matchId;
  private final int seat;
  private final ConcurrentMap<String, Object> data = new ConcurrentHashMap<>();
  private volatile MatchStarted started;
  private volatile Object state;
  private long lastSequence;

  MatchContext(String matchId, int seat) {
    this.matchId = matchId;
    this.seat = seat;
  }

  /** The match id (opaque). */
  public String matchId() {
    return matchId;
  }

  /** This bot's seat in the match, 0-based. */
  public int seat() {
    return seat;
  }

  /**
   * The {@code MatchStarted} message (players, rules, clock, labels), or null if this client never
   * saw it (e.g. it connected after the match started and the server did not repeat it).
   */
  public MatchStarted started() {
    return started;
  }

  /** A free-form, thread-safe map for the bot's own per-match data. */
  public ConcurrentMap<String, Object> data() {
    return data;
  }

  /**
   * A typed per-match state object, created by {@code factory} on first use. Example: {@code
   * Tracker t = ctx.state(Tracker::new);}
   */
  @SuppressWarnings("unchecked")
  public synchronized <T> T state(Supplier<T> factory) {
    if (state == null) {
      state = factory.get();
    }
    return (T) state;
  }

  /** Highest event sequence seen for this seat (sent back as the resume cursor on reconnect). */
  public synchronized long lastSequence() {
    return lastSequence;
  }

  void setStarted(MatchStarted started) {
    this.started = started;
  }

  /** Records a sequence; returns true if it is new (greater than any seen before). */
  synchronized boolean advance(long sequence) {
    if (sequence <= lastSequence) {
      return false;
    }
    lastSequence = sequence;
    return true;
  }

  @Override
  public String toString() {
    return "match " + matchId + " seat " + seat;
  }
}
