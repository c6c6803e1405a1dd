//! Small helpers every bot author otherwise writes by hand. The five UNO Arena SDKs have the same
//! helpers with the same meaning (names in each language's case).

use crate::pb::{self, ActionKind, Color, Rank, event};

/// The card's points when it is left in a hand at the end: a number card its face value, Skip,
/// Reverse and Draw Two 20, Wild and Wild Draw Four 50 (0 for an unset rank).
pub fn card_points(card: &pb::Card) -> i32 {
    match card.rank() {
        Rank::Skip | Rank::Reverse | Rank::DrawTwo => 20,
        Rank::Wild | Rank::WildDrawFour => 50,
        Rank::Unspecified => 0,
        number => number as i32 - Rank::Zero as i32,
    }
}

/// True if the legal action plays the card with this `Card.code` (engine card code: red 7 = 7,
/// Wild = 77). Any variant counts: with or without the UNO call, whatever colour it names.
pub fn is_play_of(action: &pb::LegalAction, card_code: i32) -> bool {
    action.kind() == ActionKind::Play && action.card.as_ref().is_some_and(|c| c.code == card_code)
}

/// The colour a Wild or Wild Draw Four play names; `None` for every other action (a coloured
/// card, a draw, a colour chosen for a Wild flipped first).
pub fn wild_color(action: &pb::LegalAction) -> Option<Color> {
    let card = action.card.as_ref()?;
    let wild = matches!(card.rank(), Rank::Wild | Rank::WildDrawFour);
    (action.kind() == ActionKind::Play && wild && action.color() != Color::Unspecified)
        .then(|| action.color())
}

/// The seat of the latest `PlayedEvent` in a list of events (oldest first, as a request carries
/// them); `None` if no card was played in them.
pub fn last_played_seat(events: &[pb::Event]) -> Option<i32> {
    events.iter().rev().find_map(|e| match &e.kind {
        Some(event::Kind::Played(p)) => Some(p.seat),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    //! The same table of cases as every other SDK's helper tests.
    use super::*;

    fn card(color: Color, rank: Rank, code: i32) -> pb::Card {
        pb::Card { color: color as i32, rank: rank as i32, code, name: String::new() }
    }

    fn play(c: pb::Card, named: Color) -> pb::LegalAction {
        pb::LegalAction {
            id: 1000 + 10 * c.code,
            kind: ActionKind::Play as i32,
            card: Some(c),
            color: named as i32,
            ..Default::default()
        }
    }

    fn other(kind: ActionKind, id: i32, color: Color) -> pb::LegalAction {
        pb::LegalAction { id, kind: kind as i32, color: color as i32, ..Default::default() }
    }

    fn played(seq: i64, seat: i32) -> pb::Event {
        let p = pb::PlayedEvent { seat, card: Some(card(Color::Red, Rank::Five, 5)), ..Default::default() };
        pb::Event { sequence: seq, kind: Some(event::Kind::Played(p)), ..Default::default() }
    }

    fn drew(seq: i64, seat: i32) -> pb::Event {
        let d = pb::DrewEvent { seat, ..Default::default() };
        pb::Event { sequence: seq, kind: Some(event::Kind::Drew(d)), ..Default::default() }
    }

    #[test]
    fn card_points_table() {
        let cases = [
            (card(Color::Red, Rank::Zero, 0), 0),
            (card(Color::Red, Rank::Seven, 7), 7),
            (card(Color::Blue, Rank::Nine, 57), 9),
            (card(Color::Green, Rank::Skip, 42), 20),
            (card(Color::Yellow, Rank::Reverse, 27), 20),
            (card(Color::Red, Rank::DrawTwo, 12), 20),
            (card(Color::Wild, Rank::Wild, 77), 50),
            (card(Color::Wild, Rank::WildDrawFour, 78), 50),
        ];
        for (c, points) in cases {
            assert_eq!(card_points(&c), points, "{c:?}");
        }
    }

    #[test]
    fn is_play_of_table() {
        let red7 = play(card(Color::Red, Rank::Seven, 7), Color::Unspecified);
        let red0 = play(card(Color::Red, Rank::Zero, 0), Color::Unspecified);
        let draw = other(ActionKind::Draw, 0, Color::Unspecified);
        let wild_blue = play(card(Color::Wild, Rank::Wild, 77), Color::Blue);
        assert!(is_play_of(&red7, 7));
        assert!(!is_play_of(&red7, 23));
        assert!(is_play_of(&red0, 0));
        assert!(!is_play_of(&draw, 0), "a draw plays no card, although red 0 has code 0");
        assert!(is_play_of(&wild_blue, 77));
        assert!(!is_play_of(&wild_blue, 78));
    }

    #[test]
    fn wild_color_table() {
        let wild_blue = play(card(Color::Wild, Rank::Wild, 77), Color::Blue);
        let wd4_green = play(card(Color::Wild, Rank::WildDrawFour, 78), Color::Green);
        let red7 = play(card(Color::Red, Rank::Seven, 7), Color::Unspecified);
        let choose_red = other(ActionKind::ChooseColor, 2, Color::Red);
        let draw = other(ActionKind::Draw, 0, Color::Unspecified);
        assert_eq!(wild_color(&wild_blue), Some(Color::Blue));
        assert_eq!(wild_color(&wd4_green), Some(Color::Green));
        assert_eq!(wild_color(&red7), None);
        assert_eq!(wild_color(&choose_red), None);
        assert_eq!(wild_color(&draw), None);
    }

    #[test]
    fn last_played_seat_table() {
        assert_eq!(last_played_seat(&[]), None);
        assert_eq!(last_played_seat(&[drew(1, 0)]), None);
        assert_eq!(last_played_seat(&[played(1, 2), drew(2, 3)]), Some(2));
        assert_eq!(last_played_seat(&[played(1, 1), played(2, 3), drew(3, 0)]), Some(3));
    }
}
