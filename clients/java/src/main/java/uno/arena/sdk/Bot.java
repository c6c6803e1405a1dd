package uno.arena.sdk;

import uno.v1.ActionResult;
import uno.v1.MatchEnded;
import uno.v1.MatchStarted;

/**
 * Your bot: given a decision (view, legal actions, events, per-match context) return the id of one
 * of the legal actions.
 *
 * <p>Only {@link #decide} is required, so a lambda is a bot: {@code d -> d.legalActions().get(0).getId()}.
 * {@code decide} runs on a worker thread, one call per decision request; calls for different
 * matches (and seats) run concurrently, and nothing it does can hold up the stream. It should
 * return within {@link Decision#remainingMillis()}; the SDK otherwise answers for it with {@link
 * Decision#fallbackActionId()} (silence for an optional request), interrupts the worker and drops
 * the late result.
 *
 * <p>The hooks run on one hook thread, in the order the messages came, never on the stream's own
 * thread.
 */
@FunctionalInterface
public interface Bot {
  /** Returned by {@link #decide} to leave an optional request (UNO window, late UNO, jump-in) unanswered. */
  int NO_ACTION = -1;

  /**
   * Chooses an action.
   *
   * @return one of {@code decision.legalActions()} ids, or {@link #NO_ACTION} to stay silent on an
   *     optional request. An id that is not legal, {@code NO_ACTION} on a required request, or an
   *     exception makes the SDK log it and answer the fallback instead.
   */
  int decide(Decision decision) throws Exception;

  /** Called when a match starts for one of the bot's seats (on the hook thread). */
  default void onMatchStarted(MatchContext match, MatchStarted started) {}

  /** Called when a match ends for one of the bot's seats, after its context was dropped (on the hook thread). */
  default void onMatchEnded(MatchContext match, MatchEnded ended) {}

  /**
   * Called for every ActionResult the server sends (on the hook thread): each is a rejection of
   * one of this bot's answers. Accepted answers get no reply.
   */
  default void onActionResult(MatchContext match, ActionResult result) {}
}
