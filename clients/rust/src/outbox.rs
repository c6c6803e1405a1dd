//! The request stream of one Play call. tonic polls it whenever it can write: an answer that
//! arrives while tonic waits is handed over at once, alone; the answers that pile up while tonic
//! is busy writing leave together, in order, in one `ActionBatch` (at most [`MAX_ACTION_BATCH`]).

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::mpsc;
use tokio_stream::Stream;

use crate::pb;
use crate::pb::play_request::Kind;

/// The most answers one `PlayRequest.actions` may hold (the protocol's limit).
pub const MAX_ACTION_BATCH: usize = 256;

/// The messages queued on `rx`, with consecutive `Action`s packed into one message.
pub(crate) struct Outbox {
    rx: mpsc::Receiver<pb::PlayRequest>,
    /// A message taken from the queue while packing that was not an Action: it goes next.
    held: Option<pb::PlayRequest>,
}

impl Outbox {
    pub(crate) fn new(rx: mpsc::Receiver<pb::PlayRequest>) -> Self {
        Self { rx, held: None }
    }
}

impl Stream for Outbox {
    type Item = pb::PlayRequest;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<pb::PlayRequest>> {
        let first = match self.held.take() {
            Some(msg) => msg,
            None => match self.rx.poll_recv(cx) {
                Poll::Ready(Some(msg)) => msg,
                other => return other,
            },
        };
        let Some(Kind::Action(action)) = first.kind else { return Poll::Ready(Some(first)) };
        let mut actions = vec![action];
        // Only what is already waiting: never wait for more.
        while actions.len() < MAX_ACTION_BATCH {
            match self.rx.try_recv() {
                Ok(pb::PlayRequest { kind: Some(Kind::Action(a)) }) => actions.push(a),
                Ok(other) => {
                    self.held = Some(other);
                    break;
                }
                Err(_) => break,
            }
        }
        let kind = if actions.len() == 1 {
            Kind::Action(actions.pop().expect("one action"))
        } else {
            Kind::Actions(pb::ActionBatch { actions })
        };
        Poll::Ready(Some(pb::PlayRequest { kind: Some(kind) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_stream::StreamExt;

    fn action(i: i32) -> pb::PlayRequest {
        pb::PlayRequest {
            kind: Some(Kind::Action(pb::Action { request_id: format!("r{i}"), action_id: Some(i) })),
        }
    }

    fn ids(msg: &pb::PlayRequest) -> Vec<String> {
        match &msg.kind {
            Some(Kind::Action(a)) => vec![a.request_id.clone()],
            Some(Kind::Actions(b)) => b.actions.iter().map(|a| a.request_id.clone()).collect(),
            other => panic!("not an answer: {other:?}"),
        }
    }

    /// One poll, as tonic's writer does when woken.
    fn poll_once(out: &mut Outbox) -> Poll<Option<pb::PlayRequest>> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        Pin::new(out).poll_next(&mut cx)
    }

    #[tokio::test]
    async fn a_lone_answer_is_handed_over_at_once_and_alone() {
        let (tx, rx) = mpsc::channel(1024);
        let mut out = Outbox::new(rx);
        assert!(poll_once(&mut out).is_pending(), "nothing to send yet");
        tx.send(action(0)).await.unwrap();
        // The very next poll hands it over: nothing waits for company.
        match poll_once(&mut out) {
            Poll::Ready(Some(pb::PlayRequest { kind: Some(Kind::Action(a)) })) => {
                assert_eq!(a.request_id, "r0")
            }
            other => panic!("want the lone Action at once, got {other:?}"),
        }
        assert!(poll_once(&mut out).is_pending());
        tx.send(action(1)).await.unwrap();
        assert!(matches!(
            poll_once(&mut out),
            Poll::Ready(Some(pb::PlayRequest { kind: Some(Kind::Action(_)) }))
        ));
    }

    #[tokio::test]
    async fn answers_that_piled_up_leave_together_in_order_at_most_256_per_message() {
        let (tx, rx) = mpsc::channel(1024);
        let mut out = Outbox::new(rx);
        for i in 0..300 {
            tx.send(action(i)).await.unwrap();
        }
        let ping = pb::PlayRequest { kind: Some(Kind::Ping(pb::Ping { nonce: 7, ..Default::default() })) };
        tx.send(ping).await.unwrap();
        tx.send(action(300)).await.unwrap();
        let first = out.next().await.unwrap();
        let second = out.next().await.unwrap();
        let ping = out.next().await.unwrap();
        let last = out.next().await.unwrap();
        assert!(matches!(first.kind, Some(Kind::Actions(ref b)) if b.actions.len() == MAX_ACTION_BATCH));
        assert!(
            matches!(second.kind, Some(Kind::Actions(ref b)) if b.actions.len() == 300 - MAX_ACTION_BATCH)
        );
        assert!(matches!(ping.kind, Some(Kind::Ping(_))), "another message keeps its place: {ping:?}");
        assert!(matches!(last.kind, Some(Kind::Action(_))));
        let order: Vec<String> = [&first, &second, &last].iter().flat_map(|m| ids(m)).collect();
        let want: Vec<String> = (0..=300).map(|i| format!("r{i}")).collect();
        assert_eq!(order, want);
        drop(tx);
        assert!(out.next().await.is_none(), "ends when the sender is dropped (half-close)");
    }
}
