//! The example bot's rule-of-thumb player (used by the `heuristic-bot` binary).
//!
//! * catch a seat that missed its UNO call whenever offered; call UNO late if we missed ours;
//! * prefer playing over drawing, and take the play variant that calls UNO;
//! * keep Wilds for later: play a coloured card if possible, then a Wild, then a Wild Draw Four;
//!   among coloured cards dump the highest-scoring one;
//! * never bluff: a Wild Draw Four only when holding no card of the active colour;
//! * a Wild names the colour held most (same for a first-card colour choice);
//! * accept a Wild Draw Four played on us (no challenges), say NO_CATCH to speed play up;
//! * under seven-o, swap hands with the seat holding the fewest cards.

use log::info;

use crate::bot::{Bot, fallback_action};
use crate::helpers::{card_points, wild_color};
use crate::pb::{self, ActionKind, Card, Color, DecisionRequest, LegalAction, Rank};

/// The example heuristic bot. Its per-seat state only counts decisions, to show the mechanism.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeuristicBot;

/// Per-seat state of [`HeuristicBot`].
#[derive(Debug, Default)]
pub struct HeuristicState {
    /// Decisions made for this seat in this match.
    pub decisions: u64,
}

impl Bot for HeuristicBot {
    type State = HeuristicState;

    fn decide(&self, state: &mut HeuristicState, req: &DecisionRequest) -> Option<i32> {
        state.decisions += 1;
        choose(req)
    }

    fn match_ended(&self, state: &mut HeuristicState, msg: &pb::MatchEnded) {
        info!(
            "match={} seat={}: {} decisions, {}",
            msg.match_id,
            msg.seat,
            state.decisions,
            if msg.won { "won" } else { "lost" }
        );
    }
}

/// The colour held most among the hand's coloured cards (ties: red, yellow, green, blue order);
/// red for a hand of only Wilds.
pub fn most_held_color(hand: &[Card]) -> Color {
    const COLORS: [Color; 4] = [Color::Red, Color::Yellow, Color::Green, Color::Blue];
    let count = |c: Color| hand.iter().filter(|card| card.color() == c).count();
    let mut best = Color::Red;
    for c in COLORS {
        if count(c) > count(best) {
            best = c;
        }
    }
    best
}

/// The heuristic's choice for a request (always a legal id, or the fallback).
pub fn choose(req: &DecisionRequest) -> Option<i32> {
    let legal = &req.legal_actions;
    let first_of = |k: ActionKind| legal.iter().find(|a| a.kind() == k).map(|a| a.id);

    if let Some(id) = first_of(ActionKind::Catch).or_else(|| first_of(ActionKind::CallUno)) {
        return Some(id);
    }

    let view = req.view.as_ref();
    let hand: &[Card] = view.map(|v| v.hand.as_slice()).unwrap_or(&[]);
    let best_color = most_held_color(hand);

    let colors: Vec<&LegalAction> = legal.iter().filter(|a| a.kind() == ActionKind::ChooseColor).collect();
    if let Some(first) = colors.first() {
        return Some(colors.iter().find(|a| a.color() == best_color).unwrap_or(first).id);
    }

    let active = view.map(|v| v.active_color()).unwrap_or(Color::Unspecified);
    let holds_active = active != Color::Unspecified && hand.iter().any(|c| c.color() == active);
    let card_count = |seat: i32| {
        view.and_then(|v| v.seats.iter().find(|s| s.seat == seat)).map_or(i32::MAX, |s| s.card_count)
    };
    let best_play = legal
        .iter()
        .filter(|a| a.kind() == ActionKind::Play)
        .filter_map(|a| a.card.as_ref().map(|card| (a, card)))
        .filter(|(_, card)| !(card.rank() == Rank::WildDrawFour && holds_active)) // never bluff
        .max_by_key(|(a, card)| {
            let keep_for_later = match card.rank() {
                Rank::WildDrawFour => 0,
                Rank::Wild => 1,
                _ => 2,
            };
            (
                a.uno,
                keep_for_later,
                wild_color(a).is_none_or(|named| named == best_color),
                card_points(card),
                a.target_seat.map_or(0, |s| -card_count(s)),
                -a.id, // deterministic tie-break
            )
        });
    if let Some((a, _)) = best_play {
        return Some(a.id);
    }

    [ActionKind::NoCatch, ActionKind::Accept, ActionKind::Draw, ActionKind::Pass]
        .into_iter()
        .find_map(first_of)
        .or_else(|| fallback_action(req))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::{Prompt, SeatState, SeatView};

    fn card(color: Color, rank: Rank) -> Card {
        let engine_color = if color == Color::Wild { 4 } else { color as i32 - 1 };
        Card {
            color: color as i32,
            rank: rank as i32,
            code: engine_color * 16 + rank as i32 - 1,
            name: String::new(),
        }
    }

    fn simple(id: i32, kind: ActionKind) -> LegalAction {
        LegalAction { id, kind: kind as i32, ..Default::default() }
    }

    fn play(c: &Card, named: Color, uno: bool) -> LegalAction {
        let named_engine = if c.color() == Color::Wild { named as i32 - 1 } else { 0 };
        LegalAction {
            id: 1000 + 10 * c.code + 2 * named_engine + uno as i32,
            kind: ActionKind::Play as i32,
            card: Some(c.clone()),
            color: if c.color() == Color::Wild { named as i32 } else { 0 },
            uno,
            ..Default::default()
        }
    }

    fn wild_plays(c: &Card) -> Vec<LegalAction> {
        [Color::Red, Color::Yellow, Color::Green, Color::Blue].iter().map(|&n| play(c, n, false)).collect()
    }

    fn request(prompt: Prompt, hand: Vec<Card>, active: Color, legal: Vec<LegalAction>) -> DecisionRequest {
        DecisionRequest {
            request_id: "r1".into(),
            match_id: "m1".into(),
            prompt: prompt as i32,
            required: !matches!(prompt, Prompt::UnoWindow | Prompt::LateUno | Prompt::JumpIn),
            view: Some(SeatView {
                hand,
                active_color: active as i32,
                seats: (0..4)
                    .map(|s| SeatState { seat: s, card_count: 7 - s, ..Default::default() })
                    .collect(),
                ..Default::default()
            }),
            legal_actions: legal,
            ..Default::default()
        }
    }

    #[test]
    fn wild_names_the_colour_held_most() {
        let w = card(Color::Wild, Rank::Wild);
        let hand = vec![
            card(Color::Blue, Rank::One),
            card(Color::Blue, Rank::Two),
            card(Color::Red, Rank::Three),
            w.clone(),
        ];
        let mut legal = vec![simple(0, ActionKind::Draw)];
        legal.extend(wild_plays(&w));
        let req = request(Prompt::Turn, hand, Color::Green, legal);
        assert_eq!(choose(&req), Some(1000 + 770 + 2 * 3)); // wild naming blue
    }

    #[test]
    fn prefers_the_uno_call_and_playing_over_drawing() {
        let r5 = card(Color::Red, Rank::Five);
        let hand = vec![r5.clone(), card(Color::Blue, Rank::Nine)];
        let legal = vec![
            simple(0, ActionKind::Draw),
            play(&r5, Color::Unspecified, false),
            play(&r5, Color::Unspecified, true),
        ];
        let req = request(Prompt::Turn, hand, Color::Red, legal);
        assert_eq!(choose(&req), Some(1051));
    }

    #[test]
    fn never_bluffs_a_wild_draw_four() {
        let wd4 = card(Color::Wild, Rank::WildDrawFour);
        let hand = vec![card(Color::Green, Rank::Two), wd4.clone()];
        let mut legal = vec![simple(0, ActionKind::Draw)];
        legal.extend(wild_plays(&wd4));
        // Holding a green card while green is active: WD4 would be a bluff, so draw.
        assert_eq!(choose(&request(Prompt::Turn, hand.clone(), Color::Green, legal.clone())), Some(0));
        // No red card while red is active: WD4 is honest, naming green (held most).
        assert_eq!(choose(&request(Prompt::Turn, hand, Color::Red, legal)), Some(1000 + 780 + 2 * 2));
    }

    #[test]
    fn keeps_wilds_and_dumps_high_cards() {
        let w = card(Color::Wild, Rank::Wild);
        let r2 = card(Color::Red, Rank::Two);
        let rs = card(Color::Red, Rank::Skip);
        let hand = vec![r2.clone(), rs.clone(), w.clone()];
        let mut legal = vec![
            simple(0, ActionKind::Draw),
            play(&r2, Color::Unspecified, false),
            play(&rs, Color::Unspecified, false),
        ];
        legal.extend(wild_plays(&w));
        assert_eq!(choose(&request(Prompt::Turn, hand, Color::Red, legal)), Some(1000 + 10 * 10));
    }

    #[test]
    fn catches_calls_late_uno_and_accepts_penalties() {
        let window = vec![
            simple(5, ActionKind::NoCatch),
            LegalAction { target_seat: Some(2), ..simple(12, ActionKind::Catch) },
        ];
        assert_eq!(choose(&request(Prompt::UnoWindow, vec![], Color::Red, window)), Some(12));
        let late = vec![simple(4, ActionKind::CallUno)];
        assert_eq!(choose(&request(Prompt::LateUno, vec![], Color::Red, late)), Some(4));
        let wd4 = vec![simple(2, ActionKind::Accept), simple(3, ActionKind::Challenge)];
        assert_eq!(choose(&request(Prompt::WildDrawFour, vec![], Color::Red, wd4)), Some(2));
        let no_catch = vec![simple(5, ActionKind::NoCatch)];
        assert_eq!(choose(&request(Prompt::UnoWindow, vec![], Color::Red, no_catch)), Some(5));
    }

    #[test]
    fn chooses_first_colour_and_passes_on_a_bluff_draw() {
        let hand = vec![card(Color::Yellow, Rank::One), card(Color::Yellow, Rank::Four)];
        let legal: Vec<_> =
            (0..4).map(|c| LegalAction { color: c + 1, ..simple(20 + c, ActionKind::ChooseColor) }).collect();
        assert_eq!(choose(&request(Prompt::ChooseColor, hand, Color::Unspecified, legal)), Some(21));

        let wd4 = card(Color::Wild, Rank::WildDrawFour);
        let hand = vec![card(Color::Blue, Rank::One), wd4.clone()];
        let mut legal = vec![simple(1, ActionKind::Pass)];
        legal.extend(wild_plays(&wd4));
        assert_eq!(choose(&request(Prompt::Drawn, hand, Color::Blue, legal)), Some(1));
    }

    #[test]
    fn seven_o_swaps_with_the_fewest_cards() {
        let r7 = card(Color::Red, Rank::Seven);
        let legal: Vec<_> = [1, 2, 3]
            .iter()
            .map(|&s| LegalAction {
                id: 3000 + 10 * r7.code + s,
                kind: ActionKind::Play as i32,
                card: Some(r7.clone()),
                target_seat: Some(s),
                ..Default::default()
            })
            .collect();
        // Seat s holds 7 - s cards: seat 3 holds the fewest.
        assert_eq!(choose(&request(Prompt::Turn, vec![r7.clone()], Color::Red, legal)), Some(3073));
    }
}
