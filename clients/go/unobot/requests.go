package unobot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc/codes"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
)

// pending is a decision request of the current stream the bot has not finished with: decide is
// running, or an answer was sent and a rejection could still ask for the one retry. An accepted
// answer gets no reply, so an answered request goes away on its rejection (without a retry) or
// its RequestClosed, on the seat's next DecisionRequest (at most one request is open per seat, so
// a new one means the old one is over), on MatchEnded, or with the stream.
type pending struct {
	req     *unov1.DecisionRequest
	key     seatKey
	log     *slog.Logger
	cancel  context.CancelCauseFunc
	retried bool // guarded by bot.mu
}

type result struct {
	id  int32
	err error
}

// dropPending cancels every pending request when the stream ends.
func (b *bot) dropPending() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, p := range b.pending {
		p.cancel(errConnLost)
		delete(b.pending, id)
	}
}

// forget removes p if it is still the pending entry for its request id (a request re-sent on a
// later stream has the same id but another entry).
func (b *bot) forget(p *pending) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending[p.req.GetRequestId()] == p {
		delete(b.pending, p.req.GetRequestId())
	}
}

// budget returns the local time by which a required request is answered, or zero for a request
// the SDK does not time (optional requests, or a request without time_left_ms).
func (b *bot) budget(req *unov1.DecisionRequest, received time.Time) time.Time {
	left := time.Duration(req.GetTimeLeftMs()) * time.Millisecond
	if !req.GetRequired() || left <= 0 {
		return time.Time{}
	}
	margin := min(b.cfg.SafetyMargin, left/2)
	return received.Add(left - margin)
}

func (b *bot) onDecisionRequest(sessCtx context.Context, c *conn, req *unov1.DecisionRequest) {
	received := time.Now()
	k := seatKey{req.GetMatchId(), req.GetSeat()}
	m := b.match(k.match, k.seat)
	events := b.newEvents(k, req.GetEvents())
	log := m.Log.With("request", req.GetRequestId())
	deadline := b.budget(req, received)

	ctx, cancel := context.WithCancelCause(sessCtx)
	cancelDeadline := context.CancelFunc(func() {})
	if !deadline.IsZero() {
		ctx, cancelDeadline = context.WithDeadline(ctx, deadline)
	}
	p := &pending{req: req, key: k, log: log, cancel: cancel}

	b.mu.Lock()
	for id, old := range b.pending {
		if old.key == k || id == req.GetRequestId() {
			old.cancel(errRequestClosed) // one open request per seat: the old one is over
			delete(b.pending, id)
			if id != req.GetRequestId() {
				c.dropQueued(id) // an answer to the old one still queued is late: not sent
			}
		}
	}
	b.pending[req.GetRequestId()] = p
	b.mu.Unlock()

	log.Debug("decision request", "prompt", req.GetPrompt().String(), "required", req.GetRequired(),
		"time_left_ms", req.GetTimeLeftMs(), "legal", len(req.GetLegalActions()), "resent", req.GetResent(),
		"previous_response_ms", req.GetPreviousResponseMs())

	d := &Decision{Request: req, Match: m, Events: events, Deadline: deadline, Log: log}
	res := make(chan result, 1)
	m.q.submit(func() {
		if ctx.Err() != nil {
			return // closed or out of time while waiting for the seat's previous decision
		}
		done := make(chan result, 1)
		go func() {
			var r result
			defer func() {
				if v := recover(); v != nil {
					r = result{err: fmt.Errorf("decide panicked: %v", v)}
				}
				done <- r
			}()
			r.id, r.err = b.cfg.Decide(ctx, d)
		}()
		select {
		case r := <-done:
			res <- r
		case <-ctx.Done():
			// Out of time or closed: the seat's queue moves on, so this decide cannot hold up
			// the seat's next request or its match callbacks. Its late result is dropped.
			go func() {
				r := <-done
				log.Info("dropped the late result of decide", "action", r.id, "err", r.err,
					"after", time.Since(received).Round(time.Millisecond))
			}()
		}
	})

	go func() {
		defer cancelDeadline()
		var got *result
		select {
		case r := <-res:
			got = &r
		case <-ctx.Done():
			select { // a result that arrived together with the deadline is still in time
			case r := <-res:
				got = &r
			default:
			}
		}
		cause := context.Cause(ctx)
		if errors.Is(cause, errConnLost) || errors.Is(cause, errRequestClosed) || errors.Is(cause, errMatchEnded) {
			// Closed by the server, superseded, or lost with the stream (the server re-sends open
			// requests after the reconnect): nothing to answer.
			log.Debug("request gone before an answer", "why", cause)
			b.forget(p)
			return
		}
		switch {
		case got != nil && got.err == nil && IsLegal(req, got.id):
			b.answer(c, p, got.id)
			return
		case got != nil && got.err == nil:
			log.Error("decide returned an id that is not legal", "action", got.id)
		case got != nil && errors.Is(got.err, ErrSkip):
			if req.GetRequired() {
				log.Warn("decide skipped a required request")
			}
		case got != nil:
			log.Error("decide failed", "err", got.err)
		case errors.Is(cause, context.DeadlineExceeded):
			log.Warn("decide did not answer in time", "prompt", req.GetPrompt().String(),
				"budget", deadline.Sub(received).Round(time.Millisecond), "time_left_ms", req.GetTimeLeftMs())
		default:
			log.Info("stopping: answering without waiting for decide")
		}
		if !req.GetRequired() {
			b.forget(p) // silence is the answer to an optional chance
			return
		}
		id := Fallback(req)
		log.Info("answering the fallback", "action", id, "description", describeAction(req, id))
		b.answer(c, p, id)
	}()
}

// answer sends an Action (at once, or together with other answers if a write is in flight; see
// conn.sendAction). Nothing comes back for an accepted answer: the request stays pending, for the
// one retry after a rejection, until its RequestClosed, the seat's next request or the match's end.
//
// An answer goes out only while its request is pending: checked under b.mu together with the
// queueing, so a RequestClosed (which takes the request out of pending and its answers out of
// the queue under b.mu) either comes first and the answer is never queued, or comes after and
// removes it from the queue if it is still there. No answer to a request known to be closed is
// ever sent.
func (b *bot) answer(c *conn, p *pending, id int32) {
	p.cancel(errAnswered) // decide is over: release anything it still waits on
	a := &unov1.Action{RequestId: p.req.GetRequestId(), ActionId: &id}
	b.mu.Lock()
	open := b.pending[p.req.GetRequestId()] == p
	write := open && c.enqueue(a)
	b.mu.Unlock()
	if !open {
		p.log.Debug("request closed before its answer went out: not sent", "action", id)
		return
	}
	if write {
		c.flush()
	}
	// Logged once the answer is on its way (or queued behind a write in flight): near a deadline
	// every millisecond counts.
	p.log.Debug("answered", "action", id, "description", describeAction(p.req, id))
}

func describeAction(req *unov1.DecisionRequest, id int32) string {
	for _, a := range req.GetLegalActions() {
		if a.GetId() == id {
			return a.GetDescription()
		}
	}
	return ""
}

// onActionResult handles a rejection: the server sends an ActionResult for a rejected answer
// only.
func (b *bot) onActionResult(c *conn, r *unov1.ActionResult) {
	log := b.log.With("match", r.GetMatchId(), "seat", r.GetSeat(), "request", r.GetRequestId())
	args := []any{"action", r.GetActionId(), "code", codeName(codes.Code(r.GetCode())),
		"reason", r.GetReason().String(), "message", r.GetMessage(), "request_open", r.GetRequestOpen()}
	if codes.Code(r.GetCode()) == codes.Aborted {
		// late: the request closed while the answer was on its way, a race a correct bot
		// meets, not a fault (a WARNING read as a bug in the bot)
		log.Info("answer arrived late (request already closed)", args...)
	} else {
		log.Warn("action rejected", args...)
	}

	b.mu.Lock()
	p := b.pending[r.GetRequestId()]
	retry := p != nil && r.GetRequestOpen() && p.req.GetRequired() && !p.retried
	if retry {
		p.retried = true
	} else if p != nil {
		delete(b.pending, r.GetRequestId())
	}
	b.mu.Unlock()
	if !retry {
		if p != nil && p.retried && r.GetRequestOpen() {
			log.Error("rejected again; not answering a third time (one retry per request)")
		}
		return
	}
	// Exactly one retry: the fallback, or if that is what was rejected, another legal id.
	next := Fallback(p.req)
	if r.ActionId != nil && next == r.GetActionId() {
		for _, a := range p.req.GetLegalActions() {
			if a.GetId() != next {
				next = a.GetId()
				break
			}
		}
	}
	log.Info("retrying once with the fallback", "action", next, "description", describeAction(p.req, next))
	b.answer(c, p, next)
}

func (b *bot) onRequestClosed(c *conn, rc *unov1.RequestClosed) {
	b.mu.Lock()
	p := b.pending[rc.GetRequestId()]
	delete(b.pending, rc.GetRequestId())
	dropped := c.dropQueued(rc.GetRequestId()) // an answer still queued is never sent
	b.mu.Unlock()
	if p != nil {
		p.cancel(errRequestClosed)
	}
	log := b.log.With("match", rc.GetMatchId(), "seat", rc.GetSeat(), "request", rc.GetRequestId())
	switch rc.GetReason() {
	case unov1.CloseReason_CLOSE_REASON_TIMED_OUT:
		log.Warn("request timed out; the server played the default", "applied", rc.GetAppliedActionId(),
			"strikes", rc.GetStrikes())
	case unov1.CloseReason_CLOSE_REASON_TAKEN_OVER:
		log.Warn("the takeover bot plays this seat now", "strikes", rc.GetStrikes())
	default:
		log.Debug("request closed", "reason", rc.GetReason().String())
	}
	if dropped > 0 {
		log.Debug("dropped its queued answer", "answers", dropped)
	}
}
