package unobot

import (
	"context"
	"errors"
	"log/slog"
	"time"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
)

// DecideFunc chooses an action for one decision request: it returns one of
// d.Legal()[i].GetId().
//
// For a required request ctx expires when the budget runs out: time_left_ms minus
// min(Config.SafetyMargin, time_left_ms/2), counted from the moment the request arrived; the
// SDK then answers the fallback at once, whether or not the function has returned. An optional
// request (UNO window, late UNO, jump-in) has no SDK timer: the answer is sent whenever the
// function returns, unless the server has closed the request by then. ctx is also cancelled when
// the server closes the request (superseded, hand or match ended), when the seat gets its next
// request, or when the stream drops; nothing is sent then.
//
// Return [ErrSkip] to leave the request unanswered (meant for optional requests; for a required
// request the SDK then answers the fallback). Any other error, a panic, or an id that is not
// legal makes the SDK log it (match, seat, request) and answer the fallback for a required
// request (see [Fallback]) or nothing for an optional one.
type DecideFunc func(ctx context.Context, d *Decision) (actionID int32, err error)

// ErrSkip, returned by a DecideFunc, means "do not answer this request".
var ErrSkip = errors.New("unobot: skip this request")

// Decision is what a DecideFunc gets: the server's request plus SDK context.
type Decision struct {
	// Request is the server's DecisionRequest, untouched.
	Request *unov1.DecisionRequest
	// Match is the per-seat state of the request's match and seat.
	Match *Match
	// Events are the request's events minus those already delivered before (after a reconnect
	// the server may replay some), oldest first.
	Events []*unov1.Event
	// Deadline is the local time by which the SDK sends the fallback if the decide function
	// has not answered; zero for a request the SDK does not time (every optional request).
	Deadline time.Time
	// Log is a logger carrying the match, seat and request id.
	Log *slog.Logger
}

// View is the seat's view of the table.
func (d *Decision) View() *unov1.SeatView { return d.Request.GetView() }

// Legal lists every action the seat may take now, in ascending id order; never empty.
func (d *Decision) Legal() []*unov1.LegalAction { return d.Request.GetLegalActions() }

// Prompt tells why the seat is asked.
func (d *Decision) Prompt() unov1.Prompt { return d.Request.GetPrompt() }

// Required is false for optional chances (UNO window, late UNO, jump-in).
func (d *Decision) Required() bool { return d.Request.GetRequired() }

// PreviousResponse is what the server measured for this seat's previous accepted answer in the
// match (DecisionRequest.previous_response_ms): from that request's sending to the answer's
// arrival, i.e. thinking time plus network lag both ways; 0 before the seat's first answer.
// Compare it with your own thinking time to see the lag.
func (d *Decision) PreviousResponse() time.Duration {
	return time.Duration(d.Request.GetPreviousResponseMs()) * time.Millisecond
}

// Fallback is what the SDK answers when the decide function does not; see [Fallback].
func (d *Decision) Fallback() int32 { return Fallback(d.Request) }

// Fallback returns the action the SDK plays for a request when the bot's own choice is missing
// or unusable: the request's default_action_id if it is one of the legal ids (it is what the
// server would apply on timeout, without the strike), else the first legal id. Returns -1 if
// the request has no legal actions (never the case for a well-formed request).
func Fallback(req *unov1.DecisionRequest) int32 {
	legal := req.GetLegalActions()
	if req.DefaultActionId != nil && IsLegal(req, req.GetDefaultActionId()) {
		return req.GetDefaultActionId()
	}
	if len(legal) == 0 {
		return -1
	}
	return legal[0].GetId()
}

// IsLegal reports whether id is one of the request's legal action ids.
func IsLegal(req *unov1.DecisionRequest, id int32) bool {
	for _, a := range req.GetLegalActions() {
		if a.GetId() == id {
			return true
		}
	}
	return false
}

// FindAction returns the first legal action satisfying pred, or nil.
func FindAction(legal []*unov1.LegalAction, pred func(*unov1.LegalAction) bool) *unov1.LegalAction {
	for _, a := range legal {
		if pred(a) {
			return a
		}
	}
	return nil
}

// OfKind returns the first legal action of the given kind, or nil.
func OfKind(legal []*unov1.LegalAction, kind unov1.ActionKind) *unov1.LegalAction {
	return FindAction(legal, func(a *unov1.LegalAction) bool { return a.GetKind() == kind })
}
