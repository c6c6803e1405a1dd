//! The [`Bot`] trait you implement, and small helpers.

use crate::pb;

/// Identifies one seat of one match: the unit of per-match state. A bot may hold several seats
/// of the same match; each seat is a separate player with its own state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeatKey {
    /// The match id (opaque).
    pub match_id: String,
    /// The seat, 0-based.
    pub seat: i32,
}

impl SeatKey {
    /// Builds a key.
    pub fn new(match_id: impl Into<String>, seat: i32) -> Self {
        Self { match_id: match_id.into(), seat }
    }
}

impl std::fmt::Display for SeatKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "match={} seat={}", self.match_id, self.seat)
    }
}

/// A bot: decides which legal action to take.
///
/// Every seat the bot holds (one per match, or several seats of one match) gets its own thread
/// and its own `State`. That thread runs, in order, [`Bot::match_started`], each [`Bot::decide`]
/// of the seat and [`Bot::match_ended`]; the stream reader never waits for any of them, so a slow
/// or hung call delays nothing but that seat. Different seats and matches are decided in parallel.
///
/// `decide` has a budget: the request's `time_left_ms` minus a margin (see
/// [`crate::Config::deadline_margin`]), counted from the request's arrival. When the budget runs
/// out, the SDK answers the fallback (see [`fallback_action`]) at once and logs a warning; the
/// late result is dropped when `decide` finally returns. A seat's next call waits until the
/// late one has returned (they share `State`), so a decide that keeps overrunning makes that
/// seat answer every request with the fallback.
pub trait Bot: Send + Sync + 'static {
    /// Per-seat, per-match state: created with `Default` when the seat is first seen
    /// (`MatchStarted` or its first request), passed to every call for that seat, dropped after
    /// [`Bot::match_ended`]. Never shared between seats. Use `()` if you need none.
    type State: Default + Send + 'static;

    /// Picks the answer to `req`: one of `req.legal_actions[i].id`.
    ///
    /// Return `None` to let the SDK decide: for a required request it answers with the
    /// fallback (`default_action_id`, else the first legal id); an optional request (UNO window,
    /// late UNO, jump-in: `req.required == false`) is then left unanswered, which the server
    /// treats as declining. An id that is not legal, or a panic, is logged and handled the same
    /// way.
    fn decide(&self, state: &mut Self::State, req: &pb::DecisionRequest) -> Option<i32>;

    /// Called when a seat's match starts (also again after a reconnect), on the seat's thread,
    /// before its first `decide`.
    fn match_started(&self, _state: &mut Self::State, _msg: &pb::MatchStarted) {}

    /// Called when a seat's match ends, on the seat's thread after its last `decide`; the state
    /// is dropped right after.
    fn match_ended(&self, _state: &mut Self::State, _msg: &pb::MatchEnded) {}
}

/// A stateless [`Bot`] made from a function; see [`from_fn`].
pub struct FnBot<F>(pub F);

/// Wraps `f(&DecisionRequest) -> Option<action id>` as a stateless [`Bot`].
pub fn from_fn<F>(f: F) -> FnBot<F>
where
    F: Fn(&pb::DecisionRequest) -> Option<i32> + Send + Sync + 'static,
{
    FnBot(f)
}

impl<F> Bot for FnBot<F>
where
    F: Fn(&pb::DecisionRequest) -> Option<i32> + Send + Sync + 'static,
{
    type State = ();

    fn decide(&self, _state: &mut (), req: &pb::DecisionRequest) -> Option<i32> {
        (self.0)(req)
    }
}

/// True if `id` is one of the request's legal action ids.
pub fn is_legal(req: &pb::DecisionRequest, id: i32) -> bool {
    req.legal_actions.iter().any(|a| a.id == id)
}

/// What the SDK answers when the bot gives no (legal, timely) answer to a **required** request:
/// the server's own `default_action_id` (draw then pass, accept a penalty, name the colour held
/// most) if set and legal, else the first legal id. `None` for optional requests: they are
/// simply not answered.
pub fn fallback_action(req: &pb::DecisionRequest) -> Option<i32> {
    if !req.required {
        return None;
    }
    req.default_action_id.filter(|id| is_legal(req, *id)).or_else(|| req.legal_actions.first().map(|a| a.id))
}
