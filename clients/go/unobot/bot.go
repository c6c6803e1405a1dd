package unobot

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
)

// ProtocolVersion is the protocol version this SDK speaks (Hello.protocol_version).
const ProtocolVersion = 1

// Config configures [Run]. Addr, Token and Decide are required; every other field has a default.
type Config struct {
	// Addr is the server's host:port, e.g. "127.0.0.1:50051".
	Addr string
	// Token is the bot token, sent as "authorization: Bearer <Token>" metadata.
	Token string
	// Name is Hello.bot_name, 1-64 characters of [A-Za-z0-9_.-]. Empty lets a server that binds
	// tokens to names pick the name.
	Name string
	// Version is Hello.bot_version, free text [the SDK version].
	Version string
	// MaxConcurrentMatches is advisory (Hello.max_concurrent_matches); 0 = no limit.
	MaxConcurrentMatches int32

	// TLS, if set, connects with TLS using this configuration (an empty &tls.Config{} uses the
	// system roots); nil connects in plaintext.
	TLS *tls.Config
	// DialOptions are appended to the SDK's own options for grpc.NewClient (tests use it to
	// dial in-memory listeners).
	DialOptions []grpc.DialOption

	// Decide chooses the actions. Required.
	Decide DecideFunc
	// OnMatchStarted, if set, is called when a seat's match starts (and again after a reconnect,
	// when the server re-sends MatchStarted), on the seat's queue (see [Match]).
	OnMatchStarted func(m *Match)
	// OnMatchEnded, if set, is called when a seat's match ends, on the seat's queue; the Match
	// is forgotten afterwards.
	OnMatchEnded func(m *Match, ended *unov1.MatchEnded)

	// SafetyMargin is how long before the server's deadline the SDK stops waiting for Decide and
	// sends the fallback, to leave room for network lag [100ms; never more than a quarter of the
	// request's time_left_ms].
	SafetyMargin time.Duration
	// MaxThink bounds Decide for requests without a deadline (jump-in chances) [5s].
	MaxThink time.Duration
	// MinBackoff and MaxBackoff bound the reconnect delay, which doubles after every failed
	// attempt, with jitter (a random delay between half and all of the current step) [250ms, 15s].
	MinBackoff, MaxBackoff time.Duration
	// CloseGrace is how long Run waits, after its context is cancelled and the stream
	// half-closed, for the server to end the stream [1s].
	CloseGrace time.Duration
	// Logger receives the SDK's logs [slog.Default()].
	Logger *slog.Logger
}

// Version is this SDK's version, sent as Hello.bot_version when Config.Version is empty.
const Version = "0.1.0"

func (c *Config) setDefaults() {
	if c.Version == "" {
		c.Version = Version
	}
	if c.SafetyMargin <= 0 {
		c.SafetyMargin = 100 * time.Millisecond
	}
	if c.MaxThink <= 0 {
		c.MaxThink = 5 * time.Second
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 250 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 15 * time.Second
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = c.MinBackoff
	}
	if c.CloseGrace <= 0 {
		c.CloseGrace = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// FatalError is returned by [Run] when the server ended the stream for a reason that
// reconnecting cannot fix: a bad token (UNAUTHENTICATED), a name the token may not use
// (PERMISSION_DENIED), an unsupported protocol version (FAILED_PRECONDITION) or another process
// of the same bot taking over the session (ABORTED / SESSION_REPLACED).
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return "unobot: fatal: " + e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

func isFatal(err error) bool {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.FailedPrecondition, codes.Aborted:
		return true
	}
	return false
}

// Run connects to the server and plays until ctx is cancelled (it then returns nil) or a fatal
// error occurs (a *FatalError). Dropped streams are reconnected with backoff, forever.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Addr == "" {
		return errors.New("unobot: Config.Addr is required")
	}
	if cfg.Decide == nil {
		return errors.New("unobot: Config.Decide is required")
	}
	cfg.setDefaults()
	creds := insecure.NewCredentials()
	if cfg.TLS != nil {
		creds = credentials.NewTLS(cfg.TLS)
	}
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// grpc-go's own re-dial backoff (default up to 2 minutes) must not outlast ours.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{
			BaseDelay: cfg.MinBackoff, Multiplier: 1.6, Jitter: 0.2, MaxDelay: cfg.MaxBackoff,
		}, MinConnectTimeout: 5 * time.Second}),
	}, cfg.DialOptions...)
	cc, err := grpc.NewClient(cfg.Addr, opts...)
	if err != nil {
		return fmt.Errorf("unobot: %w", err)
	}
	defer cc.Close()

	b := &bot{
		cfg:     cfg,
		log:     cfg.Logger,
		client:  unov1.NewBotServiceClient(cc),
		matches: map[seatKey]*Match{},
		lastSeq: map[seatKey]int64{},
	}
	return b.run(ctx)
}

type bot struct {
	cfg    Config
	log    *slog.Logger
	client unov1.BotServiceClient

	mu        sync.Mutex
	sessionID string
	matches   map[seatKey]*Match
	lastSeq   map[seatKey]int64 // last event sequence processed per seat (resume cursors)
	pending   map[string]*pending
}

func (b *bot) run(ctx context.Context) error {
	attempt := 0
	for {
		welcomed, err := b.session(ctx)
		if ctx.Err() != nil {
			b.log.Info("stopped")
			b.endAllMatches()
			return nil
		}
		if isFatal(err) {
			b.log.Error("server ended the stream; not reconnecting", "err", err)
			b.endAllMatches()
			return &FatalError{Err: err}
		}
		if welcomed {
			attempt = 0
		}
		delay := b.backoff(attempt)
		attempt++
		b.log.Warn("stream dropped; reconnecting", "err", err, "attempt", attempt, "delay", delay.Round(time.Millisecond))
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			b.log.Info("stopped")
			b.endAllMatches()
			return nil
		}
	}
}

// backoff returns the delay before reconnect attempt n (0-based): min*2^n capped at max, then a
// random value between half of it and all of it.
func (b *bot) backoff(n int) time.Duration {
	d := b.cfg.MinBackoff
	for i := 0; i < n && d < b.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, b.cfg.MaxBackoff)
	half := d / 2
	return half + rand.N(d-half+1)
}

// conn is one Play stream.
type conn struct {
	stream unov1.BotService_PlayClient
	sendMu sync.Mutex
}

func (c *conn) send(msg *unov1.PlayRequest) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.stream.Send(msg)
}

func (c *conn) closeSend() {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	_ = c.stream.CloseSend()
}

var (
	errConnLost      = errors.New("stream dropped")
	errRequestClosed = errors.New("request closed by the server")
	errMatchEnded    = errors.New("match ended")
)

// session runs one Play stream until it ends. welcomed reports whether the server sent Welcome.
func (b *bot) session(ctx context.Context) (welcomed bool, err error) {
	// Decisions are cancelled when ctx is (shutdown: the fallback is sent) or when the stream
	// ends (nothing is sent: the server re-sends open requests after the reconnect).
	sessCtx, endSession := context.WithCancelCause(ctx)
	defer endSession(errConnLost)

	// The stream outlives ctx by CloseGrace so that a shutdown half-closes it instead of
	// resetting it.
	streamCtx, cancelStream := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelStream()
	streamCtx = metadata.AppendToOutgoingContext(streamCtx, "authorization", "Bearer "+b.cfg.Token)

	stream, err := b.client.Play(streamCtx)
	if err != nil {
		return false, err
	}
	c := &conn{stream: stream}

	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			c.closeSend()
			t := time.NewTimer(b.cfg.CloseGrace)
			defer t.Stop()
			select {
			case <-t.C:
				cancelStream()
			case <-done:
			}
		case <-done:
		}
	}()

	if err := c.send(&unov1.PlayRequest{Kind: &unov1.PlayRequest_Hello{Hello: b.hello()}}); err != nil {
		// The real reason arrives from Recv.
		if _, rerr := stream.Recv(); rerr != nil {
			return false, rerr
		}
		return false, err
	}

	b.mu.Lock()
	b.pending = map[string]*pending{}
	b.mu.Unlock()
	defer b.dropPending()

	for {
		msg, err := stream.Recv()
		if err != nil {
			if err == io.EOF {
				err = errors.New("server closed the stream")
			}
			return welcomed, err
		}
		switch k := msg.GetKind().(type) {
		case *unov1.PlayResponse_Welcome:
			welcomed = true
			b.onWelcome(k.Welcome)
		case *unov1.PlayResponse_DecisionRequest:
			b.onDecisionRequest(sessCtx, c, k.DecisionRequest)
		case *unov1.PlayResponse_ActionResult:
			b.onActionResult(c, k.ActionResult)
		case *unov1.PlayResponse_RequestClosed:
			b.onRequestClosed(k.RequestClosed)
		case *unov1.PlayResponse_MatchStarted:
			b.onMatchStarted(k.MatchStarted)
		case *unov1.PlayResponse_MatchEnded:
			b.onMatchEnded(k.MatchEnded)
		case *unov1.PlayResponse_SeatEvents:
			e := k.SeatEvents
			b.newEvents(seatKey{e.GetMatchId(), e.GetSeat()}, e.GetEvents())
		case *unov1.PlayResponse_Pong:
			b.log.Debug("pong", "nonce", k.Pong.GetNonce())
		case *unov1.PlayResponse_Error:
			e := k.Error
			lvl := slog.LevelWarn
			if e.GetFatal() {
				lvl = slog.LevelError
			}
			b.log.Log(ctx, lvl, "stream error from server", "code", codes.Code(e.GetCode()).String(),
				"reason", e.GetReason().String(), "message", e.GetMessage(), "fatal", e.GetFatal())
		default:
			// Newer servers may add kinds; ignore them.
			b.log.Debug("ignoring unknown message kind")
		}
	}
}

func (b *bot) hello() *unov1.Hello {
	h := &unov1.Hello{
		BotName:              b.cfg.Name,
		BotVersion:           b.cfg.Version,
		ProtocolVersion:      ProtocolVersion,
		MaxConcurrentMatches: b.cfg.MaxConcurrentMatches,
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sessionID != "" {
		r := &unov1.Resume{SessionId: b.sessionID}
		for k, seq := range b.lastSeq {
			r.Cursors = append(r.Cursors, &unov1.EventCursor{MatchId: k.match, Seat: k.seat, LastSequence: seq})
		}
		h.Resume = r
	}
	return h
}

func (b *bot) onWelcome(w *unov1.Welcome) {
	b.mu.Lock()
	reconnect := b.sessionID != ""
	b.sessionID = w.GetSessionId()
	var gone []*Match
	if reconnect {
		// Seats not listed were lost while we were away (the takeover bot finished them).
		held := map[seatKey]bool{}
		for _, s := range w.GetSeats() {
			held[seatKey{s.GetMatchId(), s.GetSeat()}] = true
		}
		for k, m := range b.matches {
			if !held[k] {
				gone = append(gone, m)
				delete(b.matches, k)
				delete(b.lastSeq, k)
			}
		}
	}
	b.mu.Unlock()
	for _, m := range gone {
		m.Log.Warn("seat no longer held after reconnect; forgetting the match")
		m.q.close()
	}
	b.log.Info("connected", "bot", w.GetBotName(), "session", w.GetSessionId(), "resumed", w.GetResumed(),
		"server_version", w.GetServerVersion(), "seats", len(w.GetSeats()))
}

// match returns the Match of a seat, creating it if needed.
func (b *bot) match(id string, seat int32) *Match {
	k := seatKey{id, seat}
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.matches[k]
	if m == nil {
		m = newMatch(id, seat, b.log)
		b.matches[k] = m
	}
	return m
}

// newEvents records events as seen and returns those not seen before.
func (b *bot) newEvents(k seatKey, events []*unov1.Event) []*unov1.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	last := b.lastSeq[k]
	fresh := events[:0:0]
	for _, e := range events {
		if e.GetSequence() > last {
			fresh = append(fresh, e)
			last = e.GetSequence()
		}
	}
	b.lastSeq[k] = last
	return fresh
}

func (b *bot) onMatchStarted(ms *unov1.MatchStarted) {
	m := b.match(ms.GetMatchId(), ms.GetSeat())
	m.q.submit(func() {
		first := m.Started == nil
		m.Started = ms
		if first {
			m.Log.Info("match started", "seats", len(ms.GetSeats()), "labels", ms.GetLabels())
		}
		if b.cfg.OnMatchStarted != nil {
			safeCall(m.Log, "OnMatchStarted", func() { b.cfg.OnMatchStarted(m) })
		}
	})
}

func (b *bot) onMatchEnded(me *unov1.MatchEnded) {
	k := seatKey{me.GetMatchId(), me.GetSeat()}
	m := b.match(k.match, k.seat)
	events := b.newEvents(k, me.GetEvents())
	b.mu.Lock()
	delete(b.matches, k)
	delete(b.lastSeq, k)
	for _, p := range b.pending {
		if p.key == k {
			p.cancel(errMatchEnded)
		}
	}
	b.mu.Unlock()
	m.q.submit(func() {
		me := me
		if len(events) != len(me.GetEvents()) {
			me = cloneWithEvents(me, events)
		}
		m.Log.Info("match ended", "cause", me.GetCause().String(), "won", me.GetWon(), "winners", me.GetWinners(),
			"totals", me.GetTotals(), "strikes", me.GetStrikes(), "rejected", me.GetRejectedActions(),
			"taken_over", me.GetTakenOver())
		if b.cfg.OnMatchEnded != nil {
			safeCall(m.Log, "OnMatchEnded", func() { b.cfg.OnMatchEnded(m, me) })
		}
	})
	m.q.close()
}

func cloneWithEvents(me *unov1.MatchEnded, events []*unov1.Event) *unov1.MatchEnded {
	c := &unov1.MatchEnded{
		MatchId: me.GetMatchId(), Seat: me.GetSeat(), Cause: me.GetCause(), Winners: me.GetWinners(),
		Totals: me.GetTotals(), Won: me.GetWon(), Events: events, Strikes: me.GetStrikes(),
		RejectedActions: me.GetRejectedActions(), TakenOver: me.GetTakenOver(),
	}
	return c
}

// endAllMatches stops the seat queues when Run returns.
func (b *bot) endAllMatches() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, m := range b.matches {
		m.q.close()
		delete(b.matches, k)
	}
}

func safeCall(log *slog.Logger, what string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			log.Error(what+" panicked", "panic", r)
		}
	}()
	f()
}

type result struct {
	id  int32
	err error
}

// pending is a decision request the bot has not finished with.
type pending struct {
	req    *unov1.DecisionRequest
	key    seatKey
	log    *slog.Logger
	cancel context.CancelCauseFunc
	tried  map[int32]bool
}

func (b *bot) dropPending() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, p := range b.pending {
		p.cancel(errConnLost)
		delete(b.pending, id)
	}
}

func (b *bot) takePending(id string) *pending {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.pending[id]
	delete(b.pending, id)
	return p
}

func (b *bot) onDecisionRequest(sessCtx context.Context, c *conn, req *unov1.DecisionRequest) {
	received := time.Now()
	k := seatKey{req.GetMatchId(), req.GetSeat()}
	m := b.match(k.match, k.seat)
	events := b.newEvents(k, req.GetEvents())
	log := m.Log.With("request", req.GetRequestId())

	var deadline time.Time
	if left := time.Duration(req.GetTimeLeftMs()) * time.Millisecond; left > 0 {
		margin := min(b.cfg.SafetyMargin, left/4)
		deadline = received.Add(left - margin)
	}
	limit := deadline
	if limit.IsZero() {
		limit = received.Add(b.cfg.MaxThink)
	}
	ctx, cancel := context.WithCancelCause(sessCtx)
	ctx, cancelDeadline := context.WithDeadline(ctx, limit)

	p := &pending{req: req, key: k, log: log, cancel: cancel, tried: map[int32]bool{}}
	b.mu.Lock()
	b.pending[req.GetRequestId()] = p
	b.mu.Unlock()

	log.Debug("decision request", "prompt", req.GetPrompt().String(), "required", req.GetRequired(),
		"time_left_ms", req.GetTimeLeftMs(), "legal", len(req.GetLegalActions()), "resent", req.GetResent())

	d := &Decision{Request: req, Match: m, Events: events, Deadline: deadline, Log: log}
	res := make(chan result, 1)
	m.q.submit(func() {
		if ctx.Err() != nil {
			res <- result{err: context.Cause(ctx)}
			return
		}
		var r result
		func() {
			defer func() {
				if p := recover(); p != nil {
					r = result{err: fmt.Errorf("decide panicked: %v", p)}
				}
			}()
			r.id, r.err = b.cfg.Decide(ctx, d)
		}()
		res <- r
	})

	go func() {
		defer cancelDeadline()
		var got *result
		select {
		case r := <-res:
			got = &r
		case <-ctx.Done():
		}
		cause := context.Cause(ctx)
		if errors.Is(cause, errConnLost) || errors.Is(cause, errRequestClosed) || errors.Is(cause, errMatchEnded) {
			// Closed by the server, or lost with the stream (open requests are re-sent after the
			// reconnect): nothing to answer.
			log.Debug("request gone before an answer", "why", cause)
			b.takePending(req.GetRequestId())
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
		case errors.Is(cause, context.DeadlineExceeded):
			log.Warn("decide did not answer in time", "prompt", req.GetPrompt().String(),
				"budget", limit.Sub(received).Round(time.Millisecond), "required", req.GetRequired())
		case cause != nil:
			log.Info("stopping: answering without waiting for decide")
		default:
			log.Error("decide failed", "err", got.err)
		}
		if !req.GetRequired() {
			b.takePending(req.GetRequestId())
			return // silence is the answer to an optional chance
		}
		id := Fallback(req)
		log.Info("answering the fallback", "action", id, "description", describe(req, id))
		b.answer(c, p, id)
	}()
}

// answer sends an Action, keeping the request pending until its ActionResult.
func (b *bot) answer(c *conn, p *pending, id int32) {
	b.mu.Lock()
	p.tried[id] = true
	b.mu.Unlock()
	p.log.Debug("answering", "action", id, "description", describe(p.req, id))
	err := c.send(&unov1.PlayRequest{Kind: &unov1.PlayRequest_Action{Action: &unov1.Action{
		RequestId: p.req.GetRequestId(), ActionId: &id,
	}}})
	if err != nil {
		p.log.Debug("could not send the action (stream ending)", "err", err)
	}
}

func describe(req *unov1.DecisionRequest, id int32) string {
	for _, a := range req.GetLegalActions() {
		if a.GetId() == id {
			return a.GetDescription()
		}
	}
	return ""
}

func (b *bot) onActionResult(c *conn, r *unov1.ActionResult) {
	p := b.takePending(r.GetRequestId())
	if r.GetAccepted() {
		if p != nil {
			p.cancel(errRequestClosed)
			p.log.Debug("action accepted", "action", r.GetActionId(), "response_ms", r.GetResponseMs())
		}
		return
	}
	log := b.log.With("match", r.GetMatchId(), "seat", r.GetSeat(), "request", r.GetRequestId())
	log.Warn("action rejected", "action", r.GetActionId(), "code", codes.Code(r.GetCode()).String(),
		"reason", r.GetReason().String(), "message", r.GetMessage(), "request_open", r.GetRequestOpen())
	if p == nil || !r.GetRequestOpen() {
		if p != nil {
			p.cancel(errRequestClosed)
		}
		return
	}
	// Try the fallback, then any other legal id not tried yet.
	b.mu.Lock()
	next, ok := Fallback(p.req), true
	if p.tried[next] {
		ok = false
		for _, a := range p.req.GetLegalActions() {
			if !p.tried[a.GetId()] {
				next, ok = a.GetId(), true
				break
			}
		}
	}
	if ok && len(p.tried) < 3 {
		b.pending[r.GetRequestId()] = p
	} else {
		ok = false
	}
	b.mu.Unlock()
	if !ok {
		p.cancel(errRequestClosed)
		log.Error("giving up on the request after rejections")
		return
	}
	log.Info("retrying with another legal action", "action", next)
	b.answer(c, p, next)
}

func (b *bot) onRequestClosed(rc *unov1.RequestClosed) {
	p := b.takePending(rc.GetRequestId())
	log := b.log.With("match", rc.GetMatchId(), "seat", rc.GetSeat(), "request", rc.GetRequestId())
	if p != nil {
		p.cancel(errRequestClosed)
	}
	switch rc.GetReason() {
	case unov1.CloseReason_CLOSE_REASON_TIMED_OUT:
		log.Warn("request timed out; the server played the default", "applied", rc.GetAppliedActionId(),
			"strikes", rc.GetStrikes())
	case unov1.CloseReason_CLOSE_REASON_TAKEN_OVER:
		log.Warn("the takeover bot plays this seat now", "strikes", rc.GetStrikes())
	default:
		log.Debug("request closed", "reason", rc.GetReason().String())
	}
}
