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
/// `decide` runs on a blocking thread (tokio `spawn_blocking`), one call per decision request;
/// calls for different seats/matches run concurrently, calls for one seat run one after the
/// other (they share that seat's `State` behind a mutex). It must return within the request's
/// `time_left_ms` (minus [`crate::Config::deadline_margin`]); otherwise the SDK answers with the
/// fallback (see [`fallback_action`]) and logs a warning, and the late result is discarded.
pub trait Bot: Send + Sync + 'static {
    /// Per-seat, per-match state: created with `Default` when the seat is first seen
    /// (`MatchStarted` or its first request), passed to every call for that seat, dropped after
    /// [`Bot::match_ended`]. Use `()` if you need none.
    type State: Default + Send + 'static;

    /// Picks the answer to `req`: one of `req.legal_actions[i].id`.
    ///
    /// Return `None` to let the SDK decide: for a required request it answers with the
    /// fallback (`default_action_id`, else the first legal id); an optional request (UNO window,
    /// late UNO, jump-in: `req.required == false`) is then left unanswered, which the server
    /// treats as declining. An id that is not legal is logged and replaced the same way.
    fn decide(&self, state: &mut Self::State, req: &pb::DecisionRequest) -> Option<i32>;

    /// Called when a seat's match starts (also again after a reconnect). Runs on the stream's
    /// reader task: keep it quick.
    fn match_started(&self, _state: &mut Self::State, _msg: &pb::MatchStarted) {}

    /// Called when a seat's match ends, just before its state is dropped. Runs on the stream's
    /// reader task: keep it quick.
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
