//! One thread per seat: it owns the seat's [`Bot::State`] and runs that seat's calls in order, so
//! the stream reader only ever queues work and never waits for the bot.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Instant;

use log::{debug, error, info};
use tokio::sync::oneshot;

use crate::bot::{Bot, SeatKey};
use crate::pb;

/// What `decide` gave: its answer, or the panic message.
pub(crate) type Outcome = Result<Option<i32>, String>;

/// A decision for the seat's thread. `reply` is dropped by the client when the request is
/// answered without it (budget over) or closed: the thread then skips it if it has not started.
pub(crate) struct DecideJob {
    pub req: Arc<pb::DecisionRequest>,
    pub reply: oneshot::Sender<Outcome>,
}

enum Job {
    Started(pb::MatchStarted),
    Decide(DecideJob),
    Ended(pb::MatchEnded),
}

/// The client's handle on a seat's thread. Sending never blocks.
pub(crate) struct Seat {
    jobs: mpsc::Sender<Job>,
}

impl Seat {
    /// Starts the seat's thread with a fresh `State`.
    pub fn spawn<B: Bot>(bot: Arc<B>, key: SeatKey) -> Seat {
        let (jobs, queue) = mpsc::channel::<Job>();
        let name = format!("uno-seat-{}-{}", key.match_id, key.seat);
        let spawned = std::thread::Builder::new().name(name).spawn(move || work(bot.as_ref(), &key, queue));
        if let Err(e) = spawned {
            // The jobs sent to this seat then fail at once and the client answers the fallback.
            error!("cannot start a thread for a seat: {e}");
        }
        Seat { jobs }
    }

    pub fn started(&self, msg: pb::MatchStarted) {
        let _ = self.jobs.send(Job::Started(msg));
    }

    pub fn decide(&self, job: DecideJob) {
        // If the thread is gone, the job (and its reply sender) is dropped: the client falls back.
        let _ = self.jobs.send(Job::Decide(job));
    }

    /// Queues `match_ended`; the thread drops the state and exits after it.
    pub fn ended(self, msg: pb::MatchEnded) {
        let _ = self.jobs.send(Job::Ended(msg));
    }
}

fn work<B: Bot>(bot: &B, key: &SeatKey, queue: mpsc::Receiver<Job>) {
    let mut state = B::State::default();
    // Ends when the client drops the seat (shutdown) or after match_ended.
    for job in queue {
        match job {
            Job::Started(msg) => {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| bot.match_started(&mut state, &msg))) {
                    error!("{key}: match_started panicked: {}", panic_text(p.as_ref()));
                }
            }
            Job::Decide(job) => {
                if job.reply.is_closed() {
                    debug!(
                        "{key}: request {} was answered or closed before decide could start",
                        job.req.request_id
                    );
                    continue;
                }
                let t0 = Instant::now();
                let outcome = catch_unwind(AssertUnwindSafe(|| bot.decide(&mut state, &job.req)))
                    .map_err(|p| panic_text(p.as_ref()));
                if job.reply.send(outcome).is_err() {
                    info!(
                        "{key}: request {}: decide returned after {} ms, too late; its result is dropped",
                        job.req.request_id,
                        t0.elapsed().as_millis()
                    );
                }
            }
            Job::Ended(msg) => {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| bot.match_ended(&mut state, &msg))) {
                    error!("{key}: match_ended panicked: {}", panic_text(p.as_ref()));
                }
                return;
            }
        }
    }
}

fn panic_text(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-text payload".into())
}
