package uno.arena.sdk;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import uno.v1.DecisionRequest;
import uno.v1.Prompt;
import uno.v1.ActionKind;
import uno.v1.Event;
import uno.v1.LegalAction;
import uno.v1.SeatView;

/**
 * One decision to make: the server's {@link DecisionRequest} plus the seat's {@link MatchContext},
 * the events that are new to this client, and the local deadline.
 */
public final class Decision {
  /** The deadline of an optional request that has none (it lasts until the server closes it). */
  static final long NO_DEADLINE = Long.MAX_VALUE;

  private final DecisionRequest request;
  private final MatchContext match;
  private final List<Event> newEvents;
  private final long deadlineNanos;

  Decision(DecisionRequest request, MatchContext match, List<Event> newEvents, long deadlineNanos) {
    this.request = request;
    this.match = match;
    this.newEvents = List.copyOf(newEvents);
    this.deadlineNanos = deadlineNanos;
  }

  /** Builds a decision outside a live client, e.g. to unit-test a bot. */
  public static Decision of(DecisionRequest request) {
    return new Decision(
        request,
        new MatchContext(request.getMatchId(), request.getSeat()),
        request.getEventsList(),
        System.nanoTime() + TimeUnit.SECONDS.toNanos(3600));
  }

  /** The raw request as the server sent it. */
  public DecisionRequest request() {
    return request;
  }

  /** Per-seat state of this match (stash your data here). */
  public MatchContext match() {
    return match;
  }

  public String matchId() {
    return request.getMatchId();
  }

  public int seat() {
    return request.getSeat();
  }

  public Prompt prompt() {
    return request.getPrompt();
  }

  /** False for optional chances (UNO window, late UNO, jump-in), which may be left unanswered. */
  public boolean required() {
    return request.getRequired();
  }

  /** The seat's view of the table (own hand, top card, active colour, counts...). */
  public SeatView view() {
    return request.getView();
  }

  /** Every legal action, ascending id order, never empty. */
  public List<LegalAction> legalActions() {
    return request.getLegalActionsList();
  }

  /** The legal actions of one kind (e.g. every {@code ACTION_KIND_PLAY}). */
  public List<LegalAction> actions(ActionKind kind) {
    return legalActions().stream().filter(a -> a.getKind() == kind).collect(Collectors.toList());
  }

  /** The first legal action of one kind, if any. */
  public Optional<LegalAction> first(ActionKind kind) {
    return legalActions().stream().filter(a -> a.getKind() == kind).findFirst();
  }

  public boolean isLegal(int actionId) {
    for (LegalAction a : legalActions()) {
      if (a.getId() == actionId) {
        return true;
      }
    }
    return false;
  }

  /**
   * What the server measured for this seat's previous accepted answer in this match, in
   * milliseconds ({@code DecisionRequest.previous_response_ms}): from sending that request to
   * receiving the answer, i.e. thinking time plus network lag both ways; 0 before the first.
   * Compare it with your own thinking time to see the lag.
   */
  public int previousResponseMs() {
    return request.getPreviousResponseMs();
  }

  /**
   * Events of this seat not seen before by this client (duplicates re-sent after a reconnect are
   * dropped), oldest first.
   */
  public List<Event> events() {
    return newEvents;
  }

  /**
   * Milliseconds left before the SDK answers the fallback for you (already minus a safety margin,
   * counted from the request's arrival); {@code Long.MAX_VALUE} for an optional request without a
   * deadline (it lasts until the server closes it).
   */
  public long remainingMillis() {
    if (deadlineNanos == NO_DEADLINE) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
  }

  /**
   * What the SDK answers for a required request when {@code decide} is too slow, throws, returns
   * an illegal id or {@link Bot#NO_ACTION}, and when an answer is rejected with the request still
   * open: the request's {@code default_action_id} if set and legal (what the server would play on
   * timeout, without the strike), else the first legal id (draw / pass / accept come first). An
   * optional request is left unanswered instead.
   */
  public int fallbackActionId() {
    return fallbackActionId(request);
  }

  static int fallbackActionId(DecisionRequest request) {
    if (request.hasDefaultActionId()) {
      int id = request.getDefaultActionId();
      for (LegalAction a : request.getLegalActionsList()) {
        if (a.getId() == id) {
          return id;
        }
      }
    }
    return request.getLegalActionsCount() > 0 ? request.getLegalActions(0).getId() : 0;
  }

  long deadlineNanos() {
    return deadlineNanos;
  }

  @Override
  public String toString() {
    return "[match " + matchId() + " seat " + seat() + "] " + prompt() + " request " + request.getRequestId();
  }
}
