package uno.arena.sdk;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import uno.v1.Action;
import uno.v1.ActionResult;
import uno.v1.BotServiceGrpc;
import uno.v1.DecisionRequest;
import uno.v1.Event;
import uno.v1.EventCursor;
import uno.v1.Hello;
import uno.v1.MatchEnded;
import uno.v1.MatchStarted;
import uno.v1.PlayRequest;
import uno.v1.PlayResponse;
import uno.v1.RequestClosed;
import uno.v1.Resume;
import uno.v1.SeatEvents;
import uno.v1.StreamError;
import uno.v1.Welcome;

/**
 * Connects a {@link Bot} to an UNO Arena server over the one {@code BotService.Play} stream.
 *
 * <pre>{@code
 * UnoBotClient client = UnoBotClient.builder()
 *     .target("127.0.0.1:50051").token("T").botName("alice")
 *     .bot(d -> d.legalActions().get(0).getId())
 *     .build();
 * client.run();   // blocks until stop() (e.g. from a shutdown hook) or a fatal error
 * }</pre>
 *
 * <p>What it does for you (the same in all five UNO Arena SDKs):
 *
 * <ul>
 *   <li>sends the token as {@code authorization: Bearer <token>} metadata and {@code Hello} first;
 *   <li>calls {@link Bot#decide} on a worker thread for every decision request (any number of
 *       matches and seats at once); the stream is read on gRPC's thread, which never waits for the
 *       bot: decisions, and the {@code onMatchStarted}/{@code onMatchEnded}/{@code onActionResult}
 *       hooks (on one hook thread, in order), all run elsewhere;
 *   <li>budget: {@code time_left_ms - min(100 ms, time_left_ms / 2)} from the request's arrival.
 *       When it runs out, a required request is answered with {@link Decision#fallbackActionId()}
 *       at once and the worker is interrupted; a late result is dropped. An optional request (UNO
 *       window, late UNO, jump-in) is answered only if {@code decide} returns an id before the
 *       request closes, else never (silence declines and costs no strike); without a deadline it
 *       has no timer;
 *   <li>a {@code decide} that throws or returns an id that is not legal: logged, and the fallback
 *       answered (silence for an optional request);
 *   <li>a rejected answer with {@code request_open}: answered once more with the fallback, exactly
 *       one retry per request;
 *   <li>one {@link MatchContext} per (match, seat), dropped on {@code MatchEnded};
 *   <li>an accepted answer gets no reply (only a rejection gets an {@code ActionResult}), so
 *       progress never waits for one;
 *   <li>batching: {@code Hello.max_batch} is {@link Builder#maxBatch} (64 by default, 0 turns it
 *       off); every message of a {@code ResponseBatch} is handled exactly as if it had come alone,
 *       in order. An answer is written at once when no write is in flight; the answers that pile
 *       up while one is leave together in one {@code ActionBatch} (at most 256), in order;
 *   <li>reconnect: a NEW channel for every attempt (the old one is shut down), after 100 ms
 *       doubling to at most 2 s (+-20% jitter), back to 100 ms once a stream is welcomed; {@code
 *       Hello.resume} carries the session id and each seat's last event sequence;
 *   <li>fatal (no reconnect, {@link #run()} throws {@link UnoBotException}): UNAUTHENTICATED,
 *       PERMISSION_DENIED, FAILED_PRECONDITION, INVALID_ARGUMENT, UNIMPLEMENTED, ABORTED
 *       (SESSION_REPLACED). Every other ending is retried;
 *   <li>{@link #stop()} half-closes the stream and shuts down.
 * </ul>
 */
public final class UnoBotClient implements AutoCloseable {
  /** The protocol version this SDK speaks (Hello.protocol_version). */
  public static final int PROTOCOL_VERSION = 1;
  /** This SDK's version: the one place it is written (the pom's version follows it). */
  public static final String SDK_VERSION = "0.2.0";
  /** What the SDK adds to Hello.bot_version: its name and version, and the protocol. */
  public static final String SDK_TAG = "uno-bot-java/" + SDK_VERSION + " uno.v" + PROTOCOL_VERSION;
  /** The server's limit on Hello.bot_version, in characters (bot.proto). */
  private static final int MAX_BOT_VERSION = 64;
  /** Hello.max_batch unless {@link Builder#maxBatch} says otherwise. */
  public static final int DEFAULT_MAX_BATCH = 64;
  /** The largest Hello.max_batch the server accepts. */
  public static final int MAX_HELLO_BATCH = 1024;

  /**
   * An environment variable naming a Unix socket that reaches the same game server as the
   * address. The tournament's sandbox sets it (a bot in the sandbox reaches the server through a
   * relay behind its 127.0.0.1 address; the socket skips that hop). A plaintext connection goes
   * there instead of to the address while the path is a socket (see {@link #localSocket}) and
   * Linux epoll is available; TLS connections and bots without it use the address. The
   * "connected" log line shows which was used. Every UNO Arena SDK does the same.
   */
  public static final String LOCAL_SOCKET_ENV = "UNO_ARENA_LOCAL_SOCKET";

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final Logger LOG = Logger.getLogger(UnoBotClient.class.getName());
  private static final long NO_DEADLINE = -1;

  private final Connector channels;
  /** Where the current (or last) connection attempt went: the address, or "unix:PATH". */
  private volatile String serverName;
  private final String token;
  private final String botName;
  private final String botVersion;
  private final int maxConcurrentMatches;
  private final int maxBatch;
  private final Bot bot;
  private final Backoff backoff;
  private final long safetyMarginMs;
  private final Duration stopGrace;

  private final ExecutorService workers;
  private final ExecutorService hooks;
  private final ScheduledExecutorService timer;
  private final ConcurrentMap<SeatKey, MatchContext> contexts = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Pending> pending = new ConcurrentHashMap<>();
  private final AtomicBoolean started = new AtomicBoolean();
  private final CountDownLatch terminated = new CountDownLatch(1);
  private final Object sleepLock = new Object();
  private final AtomicInteger streamsOpened = new AtomicInteger();
  private volatile boolean stopping;
  private volatile Session current;
  private volatile String sessionId = "";

  private UnoBotClient(Builder b, Connector channels, String serverName) {
    this.channels = channels;
    this.serverName = serverName;
    this.token = b.token;
    this.botName = b.botName;
    this.botVersion = b.botVersion;
    this.maxConcurrentMatches = b.maxConcurrentMatches;
    this.maxBatch = b.maxBatch;
    this.bot = b.bot;
    this.backoff = new Backoff(b.initialBackoff, b.maxBackoff);
    this.safetyMarginMs = b.safetyMargin.toMillis();
    this.stopGrace = b.stopGrace;
    this.workers = Executors.newCachedThreadPool(daemonThreads("uno-decide"));
    this.hooks = Executors.newSingleThreadExecutor(daemonThreads("uno-hooks"));
    this.timer = Executors.newSingleThreadScheduledExecutor(daemonThreads("uno-timer"));
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Plays until {@link #stop()} is called (returns normally) or the server ends the stream for a
   * reason a reconnect cannot fix (throws). Reconnects by itself otherwise. Call it once.
   */
  public void run() throws UnoBotException, InterruptedException {
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("run() may be called once");
    }
    Metadata headers = new Metadata();
    headers.put(AUTHORIZATION, "Bearer " + token);
    try {
      while (!stopping) {
        // A new channel for every attempt: a reused channel's own reconnect backoff (without
        // wait-for-ready) makes calls fail fast long after the server is back.
        Connection connection = channels.connect();
        ManagedChannel channel = connection.channel();
        serverName = connection.target();
        Session s = new Session(streamsOpened.incrementAndGet());
        Status status;
        try {
          current = s;
          BotServiceGrpc.newStub(channel)
              .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
              .play(s);
          s.send(PlayRequest.newBuilder().setHello(hello()).build());
          if (stopping) {
            s.halfClose(); // stop() raced with the connect: leave at once
          }
          status = awaitEnd(s);
        } finally {
          current = null;
          abandon(s);
          channel.shutdownNow();
        }
        if (stopping) {
          break;
        }
        if (isFatal(status)) {
          throw new UnoBotException(status, "the server refused the bot: " + statusText(status));
        }
        String why = describe(status);
        if (s.welcomed) {
          backoff.reset(); // whatever way a welcomed stream ends, start again from 100 ms
        }
        Duration delay = backoff.next();
        LOG.warning(why + "; reconnecting in " + delay.toMillis() + " ms");
        synchronized (sleepLock) {
          long until = System.nanoTime() + delay.toNanos();
          while (!stopping && System.nanoTime() < until) {
            TimeUnit.NANOSECONDS.timedWait(sleepLock, until - System.nanoTime());
          }
        }
      }
    } finally {
      stopping = true;
      channels.close();
      workers.shutdownNow();
      hooks.shutdown();
      timer.shutdownNow();
      LOG.info("stopped");
      terminated.countDown();
    }
  }

  /**
   * Stops playing: half-closes the stream (the server starts the seats' reconnect grace), cancels
   * it if the server has not ended it within the stop grace, and makes {@link #run()} return. Safe
   * to call from a signal / shutdown hook and more than once.
   */
  public void stop() {
    if (stopping) {
      return;
    }
    stopping = true;
    LOG.info("stopping");
    Session s = current;
    if (s != null) {
      s.halfClose();
      try {
        timer.schedule(() -> s.cancel("client stopping"), stopGrace.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RuntimeException e) {
        s.cancel("client stopping");
      }
    }
    synchronized (sleepLock) {
      sleepLock.notifyAll();
    }
  }

  /** Waits for {@link #run()} to finish after {@link #stop()}; true if it did within the timeout. */
  public boolean awaitTermination(Duration timeout) throws InterruptedException {
    return terminated.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    stop();
  }

  /** The contexts of the matches (seats) in play now. */
  public Collection<MatchContext> activeMatches() {
    return List.copyOf(contexts.values());
  }

  /** The session id from the last Welcome ("" before the first). */
  public String sessionId() {
    return sessionId;
  }

  /** How many Play streams have been opened (1 + reconnect attempts), each on its own channel. */
  public int streamsOpened() {
    return streamsOpened.get();
  }

  /**
   * Hello.bot_version for a bot whose own version is {@code own}: {@code own}, then {@link
   * #SDK_TAG}, as in {@code "1.4.2 uno-bot-java/0.2.0 uno.v1"} (only the tag if {@code own} is
   * empty). {@code own} is cut, by characters (code points), so that the whole stays within the
   * server's 64 characters.
   */
  public static String helloBotVersion(String own) {
    if (own == null || own.isEmpty()) {
      return SDK_TAG;
    }
    int room = MAX_BOT_VERSION - SDK_TAG.codePointCount(0, SDK_TAG.length()) - 1;
    if (own.codePointCount(0, own.length()) > room) {
      own = own.substring(0, own.offsetByCodePoints(0, room));
    }
    return own + " " + SDK_TAG;
  }

  // ------------------------------------------------------------------ stream handling

  private Hello hello() {
    Hello.Builder h =
        Hello.newBuilder()
            .setBotName(botName)
            .setBotVersion(helloBotVersion(botVersion))
            .setProtocolVersion(PROTOCOL_VERSION)
            .setMaxConcurrentMatches(maxConcurrentMatches)
            .setMaxBatch(maxBatch);
    if (!sessionId.isEmpty()) {
      Resume.Builder r = Resume.newBuilder().setSessionId(sessionId);
      for (MatchContext c : contexts.values()) {
        r.addCursors(
            EventCursor.newBuilder()
                .setMatchId(c.matchId())
                .setSeat(c.seat())
                .setLastSequence(c.lastSequence()));
      }
      h.setResume(r);
    }
    return h.build();
  }

  private Status awaitEnd(Session s) throws InterruptedException {
    try {
      return s.done.get();
    } catch (ExecutionException e) {
      return Status.fromThrowable(e.getCause());
    } catch (InterruptedException e) {
      stop();
      try {
        s.done.get(stopGrace.toMillis() + 500, TimeUnit.MILLISECONDS);
      } catch (Exception ignored) {
        // shutting down anyway
      }
      throw e;
    }
  }

  /**
   * Handles one server message on gRPC's thread: it never waits for the bot. A batch (Hello.
   * max_batch) is handled message by message, in order, each exactly as if it had come alone.
   */
  private void dispatch(Session s, PlayResponse r, long receivedNanos) {
    if (r.hasBatch()) {
      for (PlayResponse m : r.getBatch().getMessagesList()) {
        handleOne(s, m, receivedNanos);
      }
    } else {
      handleOne(s, r, receivedNanos);
    }
  }

  private void handleOne(Session s, PlayResponse r, long receivedNanos) {
    try {
      handle(s, r, receivedNanos);
    } catch (RuntimeException e) {
      LOG.log(Level.SEVERE, "error handling " + r.getKindCase(), e);
    }
  }

  private void handle(Session s, PlayResponse r, long receivedNanos) {
    switch (r.getKindCase()) {
      case WELCOME:
        onWelcome(s, r.getWelcome());
        break;
      case DECISION_REQUEST:
        onDecisionRequest(s, r.getDecisionRequest(), receivedNanos);
        break;
      case ACTION_RESULT:
        onActionResult(r.getActionResult());
        break;
      case REQUEST_CLOSED:
        onRequestClosed(s, r.getRequestClosed());
        break;
      case MATCH_STARTED:
        onMatchStarted(r.getMatchStarted());
        break;
      case MATCH_ENDED:
        onMatchEnded(r.getMatchEnded());
        break;
      case SEAT_EVENTS:
        SeatEvents se = r.getSeatEvents();
        fresh(context(se.getMatchId(), se.getSeat()), se.getEventsList());
        break;
      case PONG:
        LOG.fine("pong " + r.getPong().getNonce());
        break;
      case ERROR:
        StreamError e = r.getError();
        LOG.log(
            e.getFatal() ? Level.SEVERE : Level.WARNING,
            "the server reports " + e.getReason() + ": " + e.getMessage()
                + (e.getFatal() ? "; it ends the stream" : ""));
        break;
      default:
        LOG.fine("ignoring unknown message kind " + r.getKindCase());
    }
  }

  private void onWelcome(Session s, Welcome w) {
    s.welcomed = true;
    sessionId = w.getSessionId();
    for (var seat : w.getSeatsList()) {
      context(seat.getMatchId(), seat.getSeat());
    }
    LOG.info(
        "connected to " + serverName + " as " + w.getBotName() + " (session " + w.getSessionId()
            + ", server " + w.getServerVersion() + (w.getResumed() ? ", resumed" : "") + ", "
            + w.getSeatsCount() + " seats in play), stream #" + s.number);
  }

  private void onMatchStarted(MatchStarted m) {
    MatchContext ctx = context(m.getMatchId(), m.getSeat());
    ctx.setStarted(m);
    String pre = prefix(m.getMatchId(), m.getSeat());
    LOG.info(pre + "match started, " + m.getSeatsCount() + " seats");
    hook(pre + "onMatchStarted", () -> bot.onMatchStarted(ctx, m));
  }

  private void onMatchEnded(MatchEnded m) {
    SeatKey key = new SeatKey(m.getMatchId(), m.getSeat());
    MatchContext ctx = context(m.getMatchId(), m.getSeat());
    fresh(ctx, m.getEventsList());
    pending.values().removeIf(p -> {
      if (!p.key.equals(key)) {
        return false;
      }
      p.close();
      p.session.answers.drop(p.decision.request().getRequestId());
      return true;
    });
    contexts.remove(key);
    String pre = prefix(m.getMatchId(), m.getSeat());
    LOG.info(
        pre + "match ended (" + m.getCause() + "): " + (m.getWon() ? "won" : "lost") + ", winners "
            + m.getWinnersList() + ", totals " + m.getTotalsList() + ", strikes " + m.getStrikes()
            + (m.getTakenOver() ? ", taken over" : ""));
    hook(pre + "onMatchEnded", () -> bot.onMatchEnded(ctx, m));
  }

  /** Runs a bot hook off the stream's thread, in order with the other hooks. */
  private void hook(String what, Runnable r) {
    try {
      hooks.execute(
          () -> {
            try {
              r.run();
            } catch (RuntimeException e) {
              LOG.log(Level.WARNING, what + " threw", e);
            }
          });
    } catch (RuntimeException e) { // stopping
      LOG.fine(what + " not run: stopping");
    }
  }

  private void onRequestClosed(Session s, RequestClosed c) {
    Pending p = pending.remove(c.getRequestId());
    if (p != null) {
      p.close(); // a decide still running will not answer a closed request
    }
    // an answer still waiting behind a write in flight is never sent (issue 20)
    int dropped = (p != null ? p.session : s).answers.drop(c.getRequestId());
    String pre = prefix(c.getMatchId(), c.getSeat());
    if (dropped > 0) {
      LOG.fine(pre + "request " + c.getRequestId() + " closed while its answer waited: not sent");
    }
    switch (c.getReason()) {
      case CLOSE_REASON_TIMED_OUT:
        LOG.warning(
            pre + "request " + c.getRequestId() + " timed out: the server played "
                + c.getAppliedActionId() + ", strikes " + c.getStrikes());
        break;
      case CLOSE_REASON_TAKEN_OVER:
        LOG.warning(pre + "seat taken over by the server's bot");
        break;
      default:
        LOG.fine(pre + "request " + c.getRequestId() + " closed: " + c.getReason());
    }
  }

  /** An ActionResult is always a rejection: accepted answers get no reply. */
  private void onActionResult(ActionResult ar) {
    Pending p = pending.get(ar.getRequestId());
    // an ActionResult for an unknown or closed request may carry no seat: name ours if we know it
    String pre = p != null ? prefix(p.key.matchId(), p.key.seat()) : prefix(ar.getMatchId(), ar.getSeat());
    String why = ar.getReason() + (ar.getMessage().isEmpty() ? "" : " (" + ar.getMessage() + ")");
    if (ar.getCode() == 10) {
      // ABORTED, late: the request closed while the answer was on its way, a race a correct bot
      // meets, not a fault (a warning read as a bug in the bot)
      LOG.info(
          pre + "action " + ar.getActionId() + " of request " + ar.getRequestId()
              + " arrived late (request already closed): " + why);
    } else {
      LOG.warning(
          pre + "action " + ar.getActionId() + " of request " + ar.getRequestId() + " rejected: "
              + why + (ar.getRequestOpen() ? "; the request is still open" : ""));
    }
    if (ar.getRequestOpen() && p != null && p.decision.required() && p.retried.compareAndSet(false, true)) {
      int fallback = p.decision.fallbackActionId();
      LOG.info(pre + "answering request " + ar.getRequestId() + " once more, with the fallback " + fallback);
      send(p, fallback);
    } else {
      pending.remove(ar.getRequestId());
    }
    MatchContext ctx = contexts.get(p != null ? p.key : new SeatKey(ar.getMatchId(), ar.getSeat()));
    if (ctx != null) {
      hook(pre + "onActionResult", () -> bot.onActionResult(ctx, ar));
    }
  }

  private void onDecisionRequest(Session s, DecisionRequest req, long receivedNanos) {
    MatchContext ctx = context(req.getMatchId(), req.getSeat());
    List<Event> events = fresh(ctx, req.getEventsList());
    SeatKey key = new SeatKey(req.getMatchId(), req.getSeat());
    // At most one request is open per seat: an older one of this seat is over (this is how an
    // answered request is forgotten: an accepted answer gets no reply).
    pending.entrySet().removeIf(e -> {
      Pending old = e.getValue();
      if (!old.key.equals(key) || e.getKey().equals(req.getRequestId())) {
        return false;
      }
      old.close();
      old.session.answers.drop(e.getKey()); // an answer to it still waiting is late: not sent
      return true;
    });
    long budget = budgetMs(req);
    long deadline = budget == NO_DEADLINE ? Decision.NO_DEADLINE : receivedNanos + TimeUnit.MILLISECONDS.toNanos(budget);
    Decision d = new Decision(req, ctx, events, deadline);
    Pending p = new Pending(s, d);
    Pending old = pending.put(req.getRequestId(), p);
    if (old != null) {
      old.close(); // the same request re-sent: answer the new copy
    }
    LOG.fine(
        d + (req.getRequired() ? "" : " (optional)") + ", " + req.getLegalActionsCount()
            + " legal actions, budget " + (budget == NO_DEADLINE ? "none" : budget + " ms")
            + (req.getPreviousResponseMs() > 0 ? ", previous answer " + req.getPreviousResponseMs() + " ms at the server" : "")
            + (req.getResent() ? ", resent" : ""));
    try {
      p.task = workers.submit(() -> runDecide(p));
      if (budget != NO_DEADLINE) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        p.timeout = timer.schedule(() -> onTimeout(p, budget), Math.max(0, left), TimeUnit.MILLISECONDS);
      }
    } catch (RuntimeException e) { // executors shut down: we are stopping
      p.finish();
    }
  }

  private void runDecide(Pending p) {
    int id;
    Throwable error = null;
    long t0 = System.nanoTime();
    try {
      id = bot.decide(p.decision);
    } catch (Throwable t) { // the user's code: any failure falls back
      id = Bot.NO_ACTION;
      error = t;
    }
    if (!p.finish()) {
      LOG.info(
          p.decision + ": decide returned after "
              + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)
              + " ms, too late; its result is dropped");
      return;
    }
    ScheduledFuture<?> t = p.timeout;
    if (t != null) {
      t.cancel(false);
    }
    Decision d = p.decision;
    if (error != null) {
      LOG.log(Level.WARNING, d + ": decide threw; " + fallbackText(d), error);
      sendFallback(p);
    } else if (id == Bot.NO_ACTION) {
      if (d.required()) {
        LOG.fine(d + ": decide left it to the SDK; " + fallbackText(d));
      }
      sendFallback(p);
    } else if (!d.isLegal(id)) {
      LOG.warning(d + ": decide returned " + id + ", which is not a legal id; " + fallbackText(d));
      sendFallback(p);
    } else {
      send(p, id);
    }
  }

  private void onTimeout(Pending p, long budget) {
    if (!p.finish()) {
      return;
    }
    sendFallback(p); // first: every millisecond counts here
    p.cancelTask();
    LOG.warning(p.decision + ": decide took more than its " + budget + " ms budget; " + fallbackText(p.decision));
  }

  private static String fallbackText(Decision d) {
    return d.required()
        ? "answering the fallback " + d.fallbackActionId()
        : "leaving the optional request unanswered";
  }

  private void sendFallback(Pending p) {
    if (p.decision.required()) {
      send(p, p.decision.fallbackActionId());
    } else {
      pending.remove(p.decision.request().getRequestId(), p);
    }
  }

  /**
   * Sends an answer, at once or together with the answers given while a write is in flight (see
   * {@link ActionWriter}). Nothing comes back for an accepted one.
   */
  private void send(Pending p, int actionId) {
    String id = p.decision.request().getRequestId();
    Action a = Action.newBuilder().setRequestId(id).setActionId(actionId).build();
    // only while the request is pending (not closed, superseded or ended), checked under the
    // writer's lock, which onRequestClosed's drop takes too
    if (!p.session.answers.send(a, () -> pending.get(id) == p)) {
      LOG.fine(p.decision + ": request closed or stream gone, answer " + actionId + " not sent");
    } else if (LOG.isLoggable(Level.FINE)) {
      LOG.fine(p.decision + ": answered " + actionId);
    }
  }

  /** Answers of the current stream waiting for a write in flight (tests). */
  int answersWaiting() {
    Session s = current;
    return s == null ? 0 : s.answers.waiting();
  }

  /** On session end: nothing pending there can be answered any more (the server re-sends). */
  private void abandon(Session s) {
    pending.values().removeIf(p -> {
      if (p.session != s) {
        return false;
      }
      p.close();
      return true;
    });
  }

  /**
   * The decide budget in ms: time_left_ms minus min(safety margin, time_left_ms / 2); {@link
   * #NO_DEADLINE} for an optional request without a deadline.
   */
  long budgetMs(DecisionRequest req) {
    long left = req.getTimeLeftMs();
    if (left <= 0) {
      if (!req.getRequired()) {
        return NO_DEADLINE;
      }
      left = req.getDecisionMs() > 0 ? req.getDecisionMs() : 1000; // never sent so; be safe
    }
    return left - Math.min(safetyMarginMs, left / 2);
  }

  private MatchContext context(String matchId, int seat) {
    return contexts.computeIfAbsent(new SeatKey(matchId, seat), k -> new MatchContext(matchId, seat));
  }

  /** Advances the seat's cursor; returns the events not seen before. */
  private static List<Event> fresh(MatchContext ctx, List<Event> events) {
    List<Event> out = new ArrayList<>(events.size());
    for (Event e : events) {
      if (ctx.advance(e.getSequence()) || e.getSequence() == 0) {
        out.add(e);
      }
    }
    return out;
  }

  /** The status codes a reconnect cannot fix. */
  static boolean isFatal(Status status) {
    switch (status.getCode()) {
      case UNAUTHENTICATED:
      case PERMISSION_DENIED:
      case FAILED_PRECONDITION:
      case INVALID_ARGUMENT:
      case UNIMPLEMENTED:
      case ABORTED:
        return true;
      default:
        return false;
    }
  }

  /**
   * Where a connection attempt goes instead of the address: {@code path} (the value of {@link
   * #LOCAL_SOCKET_ENV}) when it is not empty, the connection is plaintext ({@code tls} false) and
   * the path is a Unix socket right now; null means the address. The client asks before every
   * connection attempt.
   */
  public static Path localSocket(String path, boolean tls) {
    if (path == null || path.isEmpty() || tls) {
      return null;
    }
    Path p = Path.of(path);
    try {
      Object mode = Files.getAttribute(p, "unix:mode");
      return mode instanceof Integer m && (m & 0170000) == 0140000 ? p : null; // S_IFSOCK
    } catch (UnsupportedOperationException | IllegalArgumentException e) {
      // no "unix" attribute view: a socket is "other" (neither file, folder nor link)
      try {
        return Files.readAttributes(p, BasicFileAttributes.class).isOther() ? p : null;
      } catch (IOException | SecurityException e2) {
        return null;
      }
    } catch (IOException | SecurityException e) {
      return null; // missing or unreadable: the address
    }
  }

  /** One connection attempt's channel, and where it goes (for the logs). */
  record Connection(ManagedChannel channel, String target) {}

  /** Makes the channel of each connection attempt; closed when {@link #run()} ends. */
  interface Connector {
    Connection connect();

    default void close() {}
  }

  /**
   * The connector of a {@link Builder#target} address: the local socket when {@link
   * #localSocket} names one (Netty's epoll domain-socket transport, on one event loop shared by
   * the attempts), else the address.
   */
  static final class AddressConnector implements Connector {
    private final Address address;
    private final ChannelCredentials creds;
    private final boolean tls;
    private final Supplier<String> localSocketEnv;
    private EventLoopGroup loop;
    private boolean noEpollLogged;

    AddressConnector(Address address, boolean tls, Supplier<String> localSocketEnv) {
      this.address = address;
      this.tls = tls;
      this.creds = tls ? TlsChannelCredentials.create() : InsecureChannelCredentials.create();
      this.localSocketEnv = localSocketEnv;
    }

    @Override
    public synchronized Connection connect() {
      Path socket = localSocket(localSocketEnv.get(), tls);
      if (socket != null && !Epoll.isAvailable()) {
        if (!noEpollLogged) {
          noEpollLogged = true;
          LOG.info(
              LOCAL_SOCKET_ENV + " names " + socket + ", but Netty's epoll transport is not available ("
                  + Epoll.unavailabilityCause() + "); connecting to " + address + " instead");
        }
        socket = null;
      }
      if (socket == null) {
        return new Connection(
            Grpc.newChannelBuilderForAddress(address.host(), address.port(), creds).build(), address.toString());
      }
      if (loop == null) {
        loop = new EpollEventLoopGroup(1, daemonThreads("uno-local-socket"));
      }
      ManagedChannel channel =
          NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()), creds)
              .eventLoopGroup(loop)
              .channelType(EpollDomainSocketChannel.class)
              // a TCP option: Netty would warn at every connection that a Unix socket has none
              .withOption(ChannelOption.SO_KEEPALIVE, null)
              .overrideAuthority("localhost")
              .build();
      return new Connection(channel, "unix:" + socket);
    }

    @Override
    public synchronized void close() {
      if (loop != null) {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        loop = null;
      }
    }
  }

  /**
   * How a stream ended, in plain words: "connection refused (127.0.0.1:50051)", "server closed
   * the stream: UNAVAILABLE (shutting down)"; never gRPC-java's "io exception".
   */
  String describe(Status st) {
    for (Throwable t = st.getCause(); t != null; t = t.getCause()) {
      if (t instanceof ConnectException) {
        return "connection refused (" + serverName + ")";
      }
      if (t instanceof NoRouteToHostException) {
        return "host unreachable (" + serverName + ")";
      }
      if (t instanceof UnknownHostException) {
        return "unknown host (" + serverName + ")";
      }
    }
    if (st.isOk()) {
      return "server closed the stream";
    }
    return "server closed the stream: " + statusText(st);
  }

  /** "UNAVAILABLE (shutting down)": the code and what the server or the transport said. */
  static String statusText(Status st) {
    String desc = st.getDescription();
    if (desc == null || desc.isBlank() || desc.equals("io exception")) {
      Throwable root = st.getCause();
      while (root != null && root.getCause() != null) {
        root = root.getCause();
      }
      desc = root == null ? null : root.getMessage();
    }
    return st.getCode() + (desc == null || desc.isBlank() ? "" : " (" + desc + ")");
  }

  private static String prefix(String matchId, int seat) {
    return "[match " + matchId + " seat " + seat + "] ";
  }

  private static ThreadFactory daemonThreads(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  // ------------------------------------------------------------------ helpers

  private record SeatKey(String matchId, int seat) {}

  /** One decision in flight. {@link #finish()} makes exactly one of answer/timeout/close win. */
  private static final class Pending {
    final Session session;
    final Decision decision;
    final SeatKey key;
    final AtomicBoolean done = new AtomicBoolean();
    final AtomicBoolean retried = new AtomicBoolean();
    volatile Future<?> task;
    volatile ScheduledFuture<?> timeout;

    Pending(Session session, Decision decision) {
      this.session = session;
      this.decision = decision;
      this.key = new SeatKey(decision.matchId(), decision.seat());
    }

    boolean finish() {
      return done.compareAndSet(false, true);
    }

    /** The request is over: no answer is sent for it any more. */
    void close() {
      if (finish()) {
        cancelTask();
      }
    }

    void cancelTask() {
      Future<?> t = task;
      if (t != null) {
        t.cancel(true);
      }
      ScheduledFuture<?> to = timeout;
      if (to != null) {
        to.cancel(false);
      }
    }
  }

  /** One Play stream. Outgoing messages are serialised here (a StreamObserver is not thread-safe). */
  private final class Session implements ClientResponseObserver<PlayRequest, PlayResponse> {
    final int number;
    final CompletableFuture<Status> done = new CompletableFuture<>();
    final ActionWriter answers = new ActionWriter(this::send);
    volatile boolean welcomed;
    private ClientCallStreamObserver<PlayRequest> out;
    private boolean halfClosed;

    Session(int number) {
      this.number = number;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<PlayRequest> requestStream) {
      this.out = requestStream;
    }

    synchronized boolean send(PlayRequest msg) {
      if (halfClosed || done.isDone()) {
        return false;
      }
      try {
        out.onNext(msg);
        return true;
      } catch (RuntimeException e) {
        LOG.log(Level.FINE, "send failed", e);
        return false;
      }
    }

    synchronized void halfClose() {
      if (!halfClosed && !done.isDone()) {
        halfClosed = true;
        try {
          out.onCompleted();
        } catch (RuntimeException e) {
          LOG.log(Level.FINE, "half-close failed", e);
        }
      }
    }

    synchronized void cancel(String why) {
      if (!done.isDone()) {
        out.cancel(why, null);
      }
    }

    @Override
    public void onNext(PlayResponse value) {
      dispatch(this, value, System.nanoTime());
    }

    @Override
    public void onError(Throwable t) {
      done.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      done.complete(Status.OK);
    }
  }

  // ------------------------------------------------------------------ builder

  /**
   * Configures an {@link UnoBotClient}. {@code target} (or {@code channelFactory}), {@code botName}
   * and {@code bot} are required.
   */
  public static final class Builder {
    private String target;
    private Supplier<ManagedChannel> channelFactory;
    private boolean tls;
    private String token = "";
    private String botName;
    private String botVersion = "";
    private int maxConcurrentMatches;
    private int maxBatch = DEFAULT_MAX_BATCH;
    private Bot bot;
    private Duration initialBackoff = Duration.ofMillis(100);
    private Duration maxBackoff = Duration.ofSeconds(2);
    private Duration safetyMargin = Duration.ofMillis(100);
    private Duration stopGrace = Duration.ofSeconds(2);
    private Supplier<String> localSocketEnv = () -> System.getenv(LOCAL_SOCKET_ENV);

    private Builder() {}

    /** Where the client reads {@link #LOCAL_SOCKET_ENV} (tests: a JVM cannot set its own environment). */
    Builder localSocketEnv(Supplier<String> value) {
      this.localSocketEnv = Objects.requireNonNull(value);
      return this;
    }

    /**
     * Server address: {@code HOST:PORT}, {@code http://HOST:PORT} or {@code https://HOST:PORT}
     * ({@code [v6]:PORT} too). Anything else makes {@link #build()} throw {@link
     * IllegalArgumentException} with one line.
     */
    public Builder target(String target) {
      this.target = target;
      return this;
    }

    /**
     * Makes the channel of each connection attempt (instead of one built from {@link #target});
     * called once per attempt, and the client shuts each channel down when its stream ends.
     */
    public Builder channelFactory(Supplier<ManagedChannel> channelFactory) {
      this.channelFactory = channelFactory;
      return this;
    }

    /** Connect with TLS (system trust store) even to a {@code HOST:PORT} address. */
    public Builder tls(boolean tls) {
      this.tls = tls;
      return this;
    }

    /** The bot token, sent as {@code authorization: Bearer <token>}. */
    public Builder token(String token) {
      this.token = Objects.requireNonNull(token);
      return this;
    }

    /** Hello.bot_name: 1-64 characters of [A-Za-z0-9_.-]. */
    public Builder botName(String botName) {
      this.botName = botName;
      return this;
    }

    /**
     * The bot's own version [none]. Hello.bot_version carries it with the SDK's name and version
     * and the protocol after it (see {@link UnoBotClient#helloBotVersion}).
     */
    public Builder botVersion(String botVersion) {
      this.botVersion = Objects.requireNonNull(botVersion);
      return this;
    }

    /** Advisory Hello.max_concurrent_matches (0 = no limit). */
    public Builder maxConcurrentMatches(int n) {
      this.maxConcurrentMatches = n;
      return this;
    }

    /**
     * Hello.max_batch: when several messages wait for the bot at the same moment, the server may
     * send up to this many in one {@code PlayResponse.batch}, which the client unpacks and handles
     * one by one, in order. Only the framing changes; it saves CPU on both sides when the bot
     * plays many tables. 0 turns batching off; at most 1024 (default 64).
     *
     * @throws IllegalArgumentException outside 0-1024
     */
    public Builder maxBatch(int n) {
      if (n < 0 || n > MAX_HELLO_BATCH) {
        throw new IllegalArgumentException("maxBatch must be 0-" + MAX_HELLO_BATCH + ", not " + n);
      }
      this.maxBatch = n;
      return this;
    }

    public Builder bot(Bot bot) {
      this.bot = bot;
      return this;
    }

    /** Reconnect backoff: first delay about {@code initial}, doubling up to {@code max} (100 ms, 2 s). */
    public Builder backoff(Duration initial, Duration max) {
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    /**
     * Answered this long before the request's time left runs out (default 100 ms, at most half of
     * the time left), to cover network lag.
     */
    public Builder safetyMargin(Duration margin) {
      this.safetyMargin = margin;
      return this;
    }

    /** How long {@link UnoBotClient#stop()} waits for the server to end the stream before cancelling it (2 s). */
    public Builder stopGrace(Duration grace) {
      this.stopGrace = grace;
      return this;
    }

    /**
     * Builds the client.
     *
     * @throws IllegalArgumentException if the target is not a valid address (one line naming it)
     */
    public UnoBotClient build() {
      if (bot == null) {
        throw new IllegalStateException("bot is required");
      }
      if (botName == null || botName.isEmpty()) {
        throw new IllegalStateException("botName is required");
      }
      if (channelFactory != null) {
        String name = target != null ? target : "the server";
        return new UnoBotClient(this, () -> new Connection(channelFactory.get(), name), name);
      }
      if (target == null || target.isEmpty()) {
        throw new IllegalStateException("target (server address) or channelFactory is required");
      }
      Address address = Address.parse(target);
      Connector connector = new AddressConnector(address, tls || address.tls(), localSocketEnv);
      return new UnoBotClient(this, connector, address.toString());
    }
  }
}
