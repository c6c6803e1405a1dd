// Package unobot is a thin SDK for writing UNO Arena bots in Go.
//
// A bot is a [DecideFunc]: given a [Decision] (the server's DecisionRequest with the seat's view,
// its legal actions and the events since the seat's last request) it returns one of the legal
// action ids. [Run] (or [Main], for a whole program) does everything else, the same way every
// UNO Arena SDK does:
//
//   - opens the one BotService.Play stream with "authorization: Bearer <token>" metadata and sends
//     Hello (protocol version 1), in plaintext or over TLS (see [ParseAddress] for the address
//     forms; a malformed one is refused at once);
//   - multiplexes any number of matches and seats on that stream: every (match, seat) gets its own
//     [Match] object, on which decisions and the match callbacks run one at a time and in order,
//     while different seats and matches run concurrently;
//   - honours deadlines: for a required request the decide function gets a context that expires
//     at time_left_ms - min(100 ms, time_left_ms/2); the SDK then answers the fallback
//     (default_action_id, else the first legal id) whether or not decide has returned, and a
//     late decide holds nothing up. Optional requests are not timed: their answer is sent if
//     decide returns before the server closes the request, and silence is their fallback;
//   - replaces an error, a panic or an id that is not legal by the fallback, and answers a
//     rejected action once more with the fallback while the server says the request is open;
//   - asks the server for batches (Hello.max_batch, [Config.MaxBatch], 64 by default) and handles
//     every message of a batch exactly as if it had come alone, in order; sends an answer at once
//     when no write is in flight, and the answers that piled up during a write together, in one
//     ActionBatch. An accepted answer gets no reply; only a rejection does;
//   - drops events it has already seen (by Event.sequence) so Decision.Events holds each event once;
//   - reconnects on a new connection, with backoff from 100 ms doubling to 2 s (+-20%, reset on
//     Welcome), resuming the session (Hello.resume with the session id and per-seat cursors),
//     except on the statuses listed at [FatalError];
//   - stops cleanly when its context is cancelled (half-closes the stream, as the protocol asks a
//     leaving bot to do).
//
// Minimal bot:
//
//	func main() {
//		unobot.Main(unobot.Config{
//			Addr:  "127.0.0.1:50051",
//			Token: os.Getenv("UNO_ARENA_TOKEN"),
//			Name:  "my-bot",
//			Decide: func(ctx context.Context, d *unobot.Decision) (int32, error) {
//				return d.Legal()[0].GetId(), nil
//			},
//		})
//	}
package unobot
