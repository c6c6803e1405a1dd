package unobot

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	unov1 "github.com/uno-arena/uno-arena/clients/go/gen/uno/v1"
)

// ProtocolVersion is the protocol version this SDK speaks (Hello.protocol_version).
const ProtocolVersion = 1

// Version is this SDK's version. Hello.bot_version carries it after the bot's own version (see
// [HelloBotVersion]).
const Version = "0.2.0"

// SDKTag is what the SDK adds to Hello.bot_version: its name and version, and the protocol.
const SDKTag = "uno-bot-go/" + Version + " uno.v1"

// maxBotVersion is the server's limit on Hello.bot_version, in characters (bot.proto).
const maxBotVersion = 64

// HelloBotVersion is Hello.bot_version for a bot whose own version is own: own, then [SDKTag],
// as in "1.4.2 uno-bot-go/0.2.0 uno.v1" (only the tag if own is empty). own is cut, by
// characters, so that the whole stays within the server's 64 characters.
func HelloBotVersion(own string) string {
	if own == "" {
		return SDKTag
	}
	room := maxBotVersion - utf8.RuneCountInString(SDKTag) - 1
	if r := []rune(own); len(r) > room {
		own = string(r[:room])
	}
	return own + " " + SDKTag
}

const (
	// DefaultMaxBatch is Hello.max_batch when Config.MaxBatch is 0.
	DefaultMaxBatch = 64
	// NoBatching, as Config.MaxBatch, turns batching off: Hello.max_batch = 0, and the server
	// sends every message on its own.
	NoBatching = -1
	// MaxHelloBatch is the largest Hello.max_batch the server accepts.
	MaxHelloBatch = 1024
	// MaxActionBatch is the most answers the SDK packs into one PlayRequest.actions (the
	// protocol's limit).
	MaxActionBatch = 256

	// LocalSocketEnv is an environment variable naming a Unix socket that reaches the same game
	// server as Config.Addr. The tournament's sandbox sets it (a bot in the sandbox reaches the
	// server through a relay behind its 127.0.0.1 address; the socket skips that hop). A
	// plaintext connection goes there instead of to the address while the path is a socket (see
	// [LocalSocket]); TLS connections (Config.TLS or https://) and bots without it use the
	// address. The "connected" log line shows which was used. Every UNO Arena SDK does the same.
	LocalSocketEnv = "UNO_ARENA_LOCAL_SOCKET"
)

// LocalSocket returns where a connection attempt goes instead of the address: path, the value of
// [LocalSocketEnv], when it is not empty, the connection is plaintext (useTLS false) and path is a
// Unix socket right now; "" means the address. The SDK asks before every connection attempt.
func LocalSocket(path string, useTLS bool) string {
	if path == "" || useTLS {
		return ""
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Type() != fs.ModeSocket {
		return ""
	}
	return path
}

// Config configures [Run]. Addr, Token and Decide are required; every other field has a default.
type Config struct {
	// Addr is the server's address: HOST:PORT or http://HOST:PORT (plaintext), or
	// https://HOST:PORT (TLS with the system roots). See [ParseAddress].
	Addr string
	// Token is the bot token, sent as "authorization: Bearer <Token>" metadata.
	Token string
	// Name is Hello.bot_name, 1-64 characters of [A-Za-z0-9_.-]. Empty lets a server that binds
	// tokens to names pick the name.
	Name string
	// Version is the bot's own version, free text [empty]. Hello.bot_version carries it with the
	// SDK's name and version and the protocol after it (see [HelloBotVersion]).
	Version string
	// MaxConcurrentMatches is advisory (Hello.max_concurrent_matches); 0 = no limit.
	MaxConcurrentMatches int32
	// MaxBatch is Hello.max_batch: when several messages wait for the bot at the same moment,
	// the server may send up to this many in one PlayResponse.batch, which the SDK unpacks and
	// handles one by one, in order [DefaultMaxBatch, 64; at most 1024]. [NoBatching] turns it
	// off. Batching changes only the framing; it saves CPU on both sides when the bot plays many
	// tables at once.
	MaxBatch int32

	// TLS, if set, connects with TLS using this configuration (for a bare HOST:PORT address; an
	// https:// address uses it too, or the system roots if it is nil). It may not be combined
	// with an http:// address.
	TLS *tls.Config
	// DialOptions are appended to the SDK's own options for grpc.NewClient.
	DialOptions []grpc.DialOption

	// Decide chooses the actions. Required.
	Decide DecideFunc
	// OnMatchStarted, if set, is called when a seat's match starts (and again after a reconnect,
	// when the server re-sends MatchStarted), on the seat's queue (see [Match]).
	OnMatchStarted func(m *Match)
	// OnMatchEnded, if set, is called when a seat's match ends, on the seat's queue; the Match
	// is forgotten afterwards.
	OnMatchEnded func(m *Match, ended *unov1.MatchEnded)

	// SafetyMargin is the most the SDK keeps back from a required request's time_left_ms for
	// network lag: Decide's budget is time_left_ms - min(SafetyMargin, time_left_ms/2),
	// measured from the moment the request arrived [100ms].
	SafetyMargin time.Duration
	// MinBackoff and MaxBackoff bound the reconnect delay: MinBackoff before the first retry,
	// doubling after every failed attempt up to MaxBackoff, each delay +-20% at random. The
	// delay goes back to MinBackoff as soon as a stream is welcomed [100ms, 2s; keep MaxBackoff
	// below the server's reconnect grace, 5 s by default].
	MinBackoff, MaxBackoff time.Duration
	// CloseGrace is how long Run waits, after its context is cancelled and the stream
	// half-closed, for the server to end the stream [1s].
	CloseGrace time.Duration
	// Logger receives the SDK's logs [slog.Default()].
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.SafetyMargin <= 0 {
		c.SafetyMargin = 100 * time.Millisecond
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 2 * time.Second
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
	switch {
	case c.MaxBatch == 0:
		c.MaxBatch = DefaultMaxBatch
	case c.MaxBatch < 0:
		c.MaxBatch = 0 // NoBatching: Hello.max_batch = 0
	}
}

// Run connects to the server and plays until ctx is cancelled (it then half-closes the stream
// and returns nil). It returns an [*AddressError] at once for a malformed Config.Addr, and a
// [*FatalError] when the server refuses the bot for good (see FatalError). Every other ending of
// the stream (server restart, network cut, connection refused...) is reconnected, forever, on a
// new connection each time, with backoff.
func Run(ctx context.Context, cfg Config) error {
	b, err := newBot(cfg)
	if err != nil {
		return err
	}
	return b.run(ctx)
}

func newBot(cfg Config) (*bot, error) {
	addr, err := ParseAddress(cfg.Addr)
	if err != nil {
		return nil, err
	}
	if cfg.Decide == nil {
		return nil, errors.New("unobot: Config.Decide is required")
	}
	if addr.Scheme == "http" && cfg.TLS != nil {
		return nil, &AddressError{Addr: cfg.Addr, Why: "http:// is plaintext but Config.TLS is set"}
	}
	if cfg.MaxBatch > MaxHelloBatch {
		return nil, fmt.Errorf("unobot: Config.MaxBatch is %d, at most %d (or NoBatching)", cfg.MaxBatch, MaxHelloBatch)
	}
	cfg.setDefaults()
	creds := insecure.NewCredentials()
	switch {
	case cfg.TLS != nil:
		creds = credentials.NewTLS(cfg.TLS)
	case addr.TLS:
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	return &bot{
		cfg:     cfg,
		addr:    addr.Target,
		tls:     cfg.TLS != nil || addr.TLS,
		log:     cfg.Logger,
		matches: map[seatKey]*Match{},
		lastSeq: map[seatKey]int64{},
		pending: map[string]*pending{},
		dial: append([]grpc.DialOption{
			grpc.WithTransportCredentials(creds),
			// One connection attempt per channel: the SDK makes a new channel for every
			// reconnect and does its own backoff; a connect that hangs fails after a few seconds.
			grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: 3 * time.Second}),
		}, cfg.DialOptions...),
	}, nil
}

type bot struct {
	cfg  Config
	addr string
	tls  bool
	dial []grpc.DialOption
	log  *slog.Logger
	// target is where the current (or last) connection attempt went: addr, or
	// "unix:PATH" for the local socket (see [LocalSocket]). Only the run loop touches it.
	target string

	mu        sync.Mutex
	sessionID string
	matches   map[seatKey]*Match
	lastSeq   map[seatKey]int64   // last event sequence processed per seat (resume cursors)
	pending   map[string]*pending // requests of this stream not finished with, by request id
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
			fe := &FatalError{Err: err, Addr: b.target}
			b.log.Error(fe.Error())
			b.endAllMatches()
			return fe
		}
		if welcomed {
			attempt = 0 // however a welcomed stream ends, the next try starts from MinBackoff
		}
		delay := b.backoff(attempt)
		attempt++
		b.log.Warn("reconnecting: "+describe(err, b.target), "attempt", attempt, "delay", delay.Round(time.Millisecond))
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

// backoff returns the delay before reconnect attempt n (0-based): MinBackoff*2^n capped at
// MaxBackoff, then +-20% at random.
func (b *bot) backoff(n int) time.Duration {
	d := b.cfg.MinBackoff
	for i := 0; i < n && d < b.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, b.cfg.MaxBackoff)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// conn is one Play stream. Answers go out through sendAction, which never holds one back: the
// goroutine that finds no write in flight sends its answer at once, and keeps sending whatever
// other answers piled up meanwhile, all together (one ActionBatch of up to MaxActionBatch), until
// none is left.
type conn struct {
	stream unov1.BotService_PlayClient
	log    *slog.Logger
	sendMu sync.Mutex // serialises Send and CloseSend (a stream is not safe for concurrent sends)

	qmu     sync.Mutex
	queued  []*unov1.Action // answers waiting for the write in flight to end
	writing bool            // a goroutine is sending (and will send everything queued)
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

// sendAction sends an answer now if no write is in flight; otherwise it leaves it to the
// goroutine writing, which sends every answer that piled up in one message as soon as its
// write is done. It never waits for another goroutine's write.
func (c *conn) sendAction(a *unov1.Action) {
	if c.enqueue(a) {
		c.flush()
	}
}

// enqueue queues an answer and reports whether the caller is to write it (no write in flight):
// then it must call flush.
func (c *conn) enqueue(a *unov1.Action) bool {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	c.queued = append(c.queued, a)
	if c.writing {
		return false
	}
	c.writing = true
	return true
}

// flush writes the queued answers until none is left, one message of up to MaxActionBatch at
// a time, so that an answer dropped from the queue (dropQueued) while a message is written is
// never sent.
func (c *conn) flush() {
	c.qmu.Lock()
	for len(c.queued) > 0 {
		n := min(len(c.queued), MaxActionBatch)
		ready := c.queued[:n:n]
		c.queued = c.queued[n:]
		c.qmu.Unlock()
		if err := c.send(actionsMessage(ready)); err != nil {
			c.log.Debug("could not send answers (stream ending)", "answers", n, "err", err)
		}
		c.qmu.Lock()
	}
	c.queued = nil
	c.writing = false
	c.qmu.Unlock()
}

// dropQueued removes the queued answers to a request (one the server has closed), returning how
// many it removed.
func (c *conn) dropQueued(requestID string) int {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	kept := c.queued[:0]
	for _, a := range c.queued {
		if a.GetRequestId() != requestID {
			kept = append(kept, a)
		}
	}
	n := len(c.queued) - len(kept)
	clear(c.queued[len(kept):])
	c.queued = kept
	return n
}

// actionsMessage is one Action alone, or several in an ActionBatch.
func actionsMessage(actions []*unov1.Action) *unov1.PlayRequest {
	if len(actions) == 1 {
		return &unov1.PlayRequest{Kind: &unov1.PlayRequest_Action{Action: actions[0]}}
	}
	return &unov1.PlayRequest{Kind: &unov1.PlayRequest_Actions{Actions: &unov1.ActionBatch{Actions: actions}}}
}

var (
	errConnLost      = errors.New("stream dropped")
	errRequestClosed = errors.New("request closed by the server")
	errMatchEnded    = errors.New("match ended")
	errAnswered      = errors.New("answered")
)

// session runs one Play stream, on a connection of its own, until it ends. welcomed reports
// whether the server sent Welcome on it.
func (b *bot) session(ctx context.Context) (welcomed bool, err error) {
	b.target = b.addr
	if path := LocalSocket(os.Getenv(LocalSocketEnv), b.tls); path != "" {
		b.target = "unix:" + path
	}
	cc, err := grpc.NewClient(b.target, b.dial...)
	if err != nil {
		return false, err
	}
	defer cc.Close()

	// Decisions are cancelled when ctx is (shutdown: required requests get the fallback) or when
	// the stream ends (nothing is sent: the server re-sends open requests after the reconnect).
	sessCtx, endSession := context.WithCancelCause(ctx)
	defer endSession(errConnLost)

	// The stream outlives ctx by CloseGrace so that a shutdown half-closes it instead of
	// resetting it.
	streamCtx, cancelStream := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelStream()
	streamCtx = metadata.AppendToOutgoingContext(streamCtx, "authorization", "Bearer "+b.cfg.Token)

	stream, err := unov1.NewBotServiceClient(cc).Play(streamCtx)
	if err != nil {
		return false, err
	}
	c := &conn{stream: stream, log: b.log}

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
				err = errStreamEnded
			}
			return welcomed, err
		}
		if msg.GetWelcome() != nil {
			welcomed = true
		}
		b.dispatch(ctx, sessCtx, c, msg)
	}
}

// dispatch handles one server message. It never blocks on the bot's code: decisions and match
// callbacks run on the seat's queue.
func (b *bot) dispatch(ctx, sessCtx context.Context, c *conn, msg *unov1.PlayResponse) {
	switch k := msg.GetKind().(type) {
	case *unov1.PlayResponse_Batch:
		// Several messages that were waiting at once (Hello.max_batch): each exactly as if it
		// had come alone, in order.
		for _, m := range k.Batch.GetMessages() {
			b.dispatch(ctx, sessCtx, c, m)
		}
	case *unov1.PlayResponse_Welcome:
		b.onWelcome(k.Welcome)
	case *unov1.PlayResponse_DecisionRequest:
		b.onDecisionRequest(sessCtx, c, k.DecisionRequest)
	case *unov1.PlayResponse_ActionResult:
		b.onActionResult(c, k.ActionResult)
	case *unov1.PlayResponse_RequestClosed:
		b.onRequestClosed(c, k.RequestClosed)
	case *unov1.PlayResponse_MatchStarted:
		b.onMatchStarted(k.MatchStarted)
	case *unov1.PlayResponse_MatchEnded:
		b.onMatchEnded(c, k.MatchEnded)
	case *unov1.PlayResponse_SeatEvents:
		e := k.SeatEvents
		b.match(e.GetMatchId(), e.GetSeat())
		b.newEvents(seatKey{e.GetMatchId(), e.GetSeat()}, e.GetEvents())
	case *unov1.PlayResponse_Pong:
		b.log.Debug("pong", "nonce", k.Pong.GetNonce())
	case *unov1.PlayResponse_Error:
		e := k.Error
		lvl := slog.LevelWarn
		if e.GetFatal() {
			lvl = slog.LevelError
		}
		b.log.Log(ctx, lvl, "stream error from the server", "code", codeName(codes.Code(e.GetCode())),
			"reason", e.GetReason().String(), "message", e.GetMessage(), "fatal", e.GetFatal())
	default:
		// Newer servers may add kinds; ignore them.
		b.log.Debug("ignoring unknown message kind")
	}
}

func (b *bot) hello() *unov1.Hello {
	h := &unov1.Hello{
		BotName:              b.cfg.Name,
		BotVersion:           HelloBotVersion(b.cfg.Version),
		ProtocolVersion:      ProtocolVersion,
		MaxConcurrentMatches: b.cfg.MaxConcurrentMatches,
		MaxBatch:             uint32(b.cfg.MaxBatch),
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sessionID != "" {
		r := &unov1.Resume{SessionId: b.sessionID}
		for k := range b.matches {
			r.Cursors = append(r.Cursors, &unov1.EventCursor{MatchId: k.match, Seat: k.seat, LastSequence: b.lastSeq[k]})
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
	b.log.Info("connected", "addr", b.target, "bot", w.GetBotName(), "session", w.GetSessionId(),
		"resumed", w.GetResumed(), "server_version", w.GetServerVersion(), "seats", len(w.GetSeats()))
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

func (b *bot) onMatchEnded(c *conn, me *unov1.MatchEnded) {
	k := seatKey{me.GetMatchId(), me.GetSeat()}
	m := b.match(k.match, k.seat)
	events := b.newEvents(k, me.GetEvents())
	b.mu.Lock()
	delete(b.matches, k)
	delete(b.lastSeq, k)
	for id, p := range b.pending {
		if p.key == k {
			p.cancel(errMatchEnded)
			delete(b.pending, id)
			c.dropQueued(id) // an answer still queued is late: not sent
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
	return &unov1.MatchEnded{
		MatchId: me.GetMatchId(), Seat: me.GetSeat(), Cause: me.GetCause(), Winners: me.GetWinners(),
		Totals: me.GetTotals(), Won: me.GetWon(), Events: events, Strikes: me.GetStrikes(),
		RejectedActions: me.GetRejectedActions(), TakenOver: me.GetTakenOver(),
	}
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
