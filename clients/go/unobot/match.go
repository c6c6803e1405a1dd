package unobot

import (
	"log/slog"
	"sync"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
)

// Match is the SDK's state for one seat the bot holds in one match. A bot that holds two seats
// of the same match gets two Match objects.
//
// The decide function and the OnMatchStarted / OnMatchEnded callbacks of one Match run one at a
// time, in the order the server sent the messages, so they may read and write Data (and State)
// without locking. Different matches and seats run concurrently. One exception: a decide that
// is still running when its request is over (its budget ran out, the server closed the request)
// is left behind, and the seat's next task starts; a decide that returns when its ctx is done
// never overlaps anything. The Match is dropped when the server sends MatchEnded for it (after
// OnMatchEnded returns), so its data goes with it.
type Match struct {
	// ID is the server's opaque match id.
	ID string
	// Seat is the bot's seat in the match, 0-based.
	Seat int32
	// Started is the MatchStarted message (players, rules, clock, labels); nil until it arrives.
	Started *unov1.MatchStarted
	// Data is free for the bot to keep anything it likes between decisions of this seat.
	Data map[string]any
	// State is free for the bot too, for those who prefer one typed value to a map.
	State any
	// Log is a logger carrying the match and seat.
	Log *slog.Logger

	q *serialQueue
}

type seatKey struct {
	match string
	seat  int32
}

func newMatch(id string, seat int32, log *slog.Logger) *Match {
	return &Match{
		ID:   id,
		Seat: seat,
		Data: map[string]any{},
		Log:  log.With("match", id, "seat", seat),
		q:    newSerialQueue(),
	}
}

// serialQueue runs submitted functions one at a time, in order, on its own goroutine. It never
// blocks the submitter.
type serialQueue struct {
	mu      sync.Mutex
	tasks   []func()
	wake    chan struct{}
	closed  bool
	stopped chan struct{}
}

func newSerialQueue() *serialQueue {
	q := &serialQueue{wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go q.loop()
	return q
}

func (q *serialQueue) submit(f func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.tasks = append(q.tasks, f)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close lets the queue finish what was submitted, then stops its goroutine.
func (q *serialQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.closed = true
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *serialQueue) loop() {
	defer close(q.stopped)
	for {
		q.mu.Lock()
		if len(q.tasks) == 0 {
			closed := q.closed
			q.mu.Unlock()
			if closed {
				return
			}
			<-q.wake
			continue
		}
		f := q.tasks[0]
		q.tasks[0] = nil
		q.tasks = q.tasks[1:]
		q.mu.Unlock()
		f()
	}
}
