// Package unobot is a thin SDK for writing UNO Arena bots in Go.
//
// A bot is a [DecideFunc]: given a [Decision] (the server's DecisionRequest with the seat's view,
// its legal actions and the events since the seat's last request) it returns one of the legal
// action ids. [Run] does everything else:
//
//   - opens the one BotService.Play stream with "authorization: Bearer <token>" metadata and sends
//     Hello (protocol version 1), optionally over TLS;
//   - multiplexes any number of matches and seats on that stream: every (match, seat) gets its own
//     [Match] object, on which decisions and the match callbacks run one at a time and in order,
//     while different seats and matches run concurrently;
//   - honours deadlines: the decide function gets a context that expires a safety margin before
//     the request's time_left_ms runs out; if it has not answered by then the SDK logs it and
//     answers a required request with its default_action_id (or, if the server sent none, the
//     first legal id), and leaves an optional request unanswered (silence is "no catch");
//   - validates answers (an id that is not legal is replaced by the fallback), re-answers a
//     rejected action with the fallback while the server says the request is still open;
//   - drops events it has already seen (by Event.sequence) so Decision.Events holds each event once;
//   - reconnects with capped exponential backoff and jitter when the stream drops, resuming the
//     session (Hello.resume with the session id and per-seat event cursors);
//   - stops cleanly when its context is cancelled (half-closes the stream, as the protocol asks a
//     leaving bot to do).
//
// Minimal bot:
//
//	err := unobot.Run(ctx, unobot.Config{
//		Addr:  "127.0.0.1:50051",
//		Token: os.Getenv("UNO_ARENA_TOKEN"),
//		Name:  "my-bot",
//		Decide: func(ctx context.Context, d *unobot.Decision) (int32, error) {
//			return d.Legal()[0].GetId(), nil
//		},
//	})
package unobot
