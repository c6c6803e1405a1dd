package uno.arena.sdk;

import uno.v1.Bot.ActionResult;
import uno.v1.Bot.MatchEnded;
import uno.v1.Bot.MatchStarted;

/**
 * Your bot: given a decision (view, legal actions, events, per-match context) return the id of one
 * of the legal actions.
 *
 * <p>Only {@link #decide} is required, so a lambda is a bot: {@code d -> d.legalActions().get(0).getId()}.
 * {@code decide} runs on a worker thread, one call per decision request; calls for different
 * matches (and seats) run concurrently. It must return within the request's time left (see {@link
 * Decision#remainingMillis()}); the SDK otherwise answers for it with {@link
 * Decision#fallbackActionId()} and interrupts the worker.
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

  /** Called when a match starts for one of the bot's seats. Runs on the stream's thread: keep it short. */
  default void onMatchStarted(MatchContext match, MatchStarted started) {}

  /** Called when a match ends for one of the bot's seats, just before its context is dropped. */
  default void onMatchEnded(MatchContext match, MatchEnded ended) {}

  /** Called for every ActionResult (accepted or rejected). Runs on the stream's thread. */
  default void onActionResult(MatchContext match, ActionResult result) {}
}
