//! The request stream of one Play call. tonic polls it whenever it can write: an answer that
//! arrives while tonic waits is handed over at once, alone; the answers that pile up while tonic
//! is busy writing leave together, in order, in one `ActionBatch` (at most [`MAX_ACTION_BATCH`]).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio::sync::mpsc;
use tokio_stream::Stream;

use crate::pb;
use crate::pb::play_request::Kind;

/// The most answers one `PlayRequest.actions` may hold (the protocol's limit).
pub const MAX_ACTION_BATCH: usize = 256;

/// The answers of one stream handed to the [`Outbox`] and not yet taken by tonic, by request
/// id, so that a `RequestClosed` can take back an answer still waiting: no answer to a request
/// the server has closed is ever sent (issue 20).
#[derive(Clone, Default)]
pub(crate) struct Unsent(Arc<Mutex<HashMap<String, Waiting>>>);

#[derive(Default)]
struct Waiting {
    /// Answers to the request in the queue (two only after a rejection's retry).
    queued: u32,
    /// The request closed while they waited: they are dropped, not sent.
    closed: bool,
}

impl Unsent {
    /// Records an answer to `request_id` about to be queued.
    pub(crate) fn queue(&self, request_id: &str) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.entry(request_id.to_string()).or_default().queued += 1;
    }

    /// The request closed: its waiting answers, if any, are dropped. Returns whether any waited.
    pub(crate) fn close(&self, request_id: &str) -> bool {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match map.get_mut(request_id) {
            Some(w) => {
                w.closed = true;
                true
            }
            None => false,
        }
    }

    /// An answer to `request_id` leaves the queue: whether to send it (its request still open).
    fn take(&self, request_id: &str) -> bool {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(w) = map.get_mut(request_id) else { return true };
        let send = !w.closed;
        w.queued = w.queued.saturating_sub(1);
        if w.queued == 0 {
            map.remove(request_id);
        }
        send
    }
}

/// The messages queued on `rx`, with consecutive `Action`s packed into one message, and the
/// answers to requests closed while they waited left out.
pub(crate) struct Outbox {
    rx: mpsc::Receiver<pb::PlayRequest>,
    /// A message taken from the queue while packing that was not an Action: it goes next.
    held: Option<pb::PlayRequest>,
    unsent: Unsent,
}

impl Outbox {
    pub(crate) fn new(rx: mpsc::Receiver<pb::PlayRequest>, unsent: Unsent) -> Self {
        Self { rx, held: None, unsent }
    }
}

impl Stream for Outbox {
    type Item = pb::PlayRequest;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<pb::PlayRequest>> {
        let mut actions = Vec::new();
        while actions.is_empty() {
            let first = match self.held.take() {
                Some(msg) => msg,
                None => match self.rx.poll_recv(cx) {
                    Poll::Ready(Some(msg)) => msg,
                    other => return other,
                },
            };
            let Some(Kind::Action(action)) = first.kind else { return Poll::Ready(Some(first)) };
            if self.unsent.take(&action.request_id) {
                actions.push(action);
            }
            // Only what is already waiting: never wait for more.
            while actions.len() < MAX_ACTION_BATCH {
                match self.rx.try_recv() {
                    Ok(pb::PlayRequest { kind: Some(Kind::Action(a)) }) => {
                        if self.unsent.take(&a.request_id) {
                            actions.push(a);
                        }
                    }
                    Ok(other) => {
                        self.held = Some(other);
                        break;
                    }
                    Err(_) => break,
                }
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
        let mut out = Outbox::new(rx, Unsent::default());
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
        let mut out = Outbox::new(rx, Unsent::default());
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

    #[tokio::test]
    async fn an_answer_whose_request_closed_while_it_waited_is_never_handed_over() {
        let (tx, rx) = mpsc::channel(1024);
        let unsent = Unsent::default();
        let mut out = Outbox::new(rx, unsent.clone());
        for i in [0, 1, 2, 1] {
            unsent.queue(&format!("r{i}"));
            tx.send(action(i)).await.unwrap();
        }
        assert!(unsent.close("r1"), "r1's answers were waiting");
        assert!(!unsent.close("r9"), "nothing waited for r9");
        let msg = out.next().await.unwrap();
        assert_eq!(ids(&msg), ["r0", "r2"]);
        // Only closed answers waiting, then another message: that message comes next.
        unsent.queue("r3");
        tx.send(action(3)).await.unwrap();
        unsent.close("r3");
        let ping = pb::PlayRequest { kind: Some(Kind::Ping(pb::Ping { nonce: 1, ..Default::default() })) };
        tx.send(ping).await.unwrap();
        assert!(matches!(out.next().await.unwrap().kind, Some(Kind::Ping(_))));
        // Only closed answers waiting and nothing else: nothing is handed over.
        unsent.queue("r4");
        tx.send(action(4)).await.unwrap();
        unsent.close("r4");
        assert!(poll_once(&mut out).is_pending());
        assert!(unsent.0.lock().unwrap().is_empty(), "nothing is kept once taken");
    }
}
