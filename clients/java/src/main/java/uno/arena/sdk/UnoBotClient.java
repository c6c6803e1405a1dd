package uno.arena.sdk;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
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
import java.util.logging.Level;
import java.util.logging.Logger;
import uno.v1.Bot.Action;
import uno.v1.Bot.ActionResult;
import uno.v1.Bot.DecisionRequest;
import uno.v1.Bot.EventCursor;
import uno.v1.Bot.Hello;
import uno.v1.Bot.MatchEnded;
import uno.v1.Bot.MatchStarted;
import uno.v1.Bot.PlayRequest;
import uno.v1.Bot.PlayResponse;
import uno.v1.Bot.RequestClosed;
import uno.v1.Bot.Resume;
import uno.v1.Bot.SeatEvents;
import uno.v1.Bot.StreamError;
import uno.v1.Bot.Welcome;
import uno.v1.BotServiceGrpc;
import uno.v1.Errors.ErrorReason;
import uno.v1.Game.Event;
import uno.v1.Game.LegalAction;

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
 * <p>What it does for you: sends the token as {@code authorization: Bearer <token>} metadata and
 * {@code Hello} first; calls {@link Bot#decide} on a worker thread for every decision request (any
 * number of matches and seats at once) and answers with the id; keeps a {@link MatchContext} per
 * (match, seat), dropped on {@code MatchEnded}; answers {@link Decision#fallbackActionId()} if
 * decide overruns the request's time left (minus a safety margin), throws or returns an illegal
 * id (optional requests are then left unanswered, which the server takes as "no"); retries once
 * with the fallback if the server rejects an answer and the request stays open; reconnects with
 * exponential backoff and jitter and resumes the session (event cursors) when the stream drops;
 * on {@link #stop()} half-closes the stream and shuts down.
 *
 * <p>Fatal stream ends, which make {@link #run()} throw {@link UnoBotException} instead of
 * reconnecting: UNAUTHENTICATED (bad token), PERMISSION_DENIED (bot name not bound to the token),
 * FAILED_PRECONDITION (protocol version not supported / no Hello), ABORTED with SESSION_REPLACED
 * (another process of the same bot took over).
 */
public final class UnoBotClient implements AutoCloseable {
  /** The protocol version this SDK speaks (Hello.protocol_version). */
  public static final int PROTOCOL_VERSION = 1;

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final Logger LOG = Logger.getLogger(UnoBotClient.class.getName());

  private final ManagedChannel channel;
  private final boolean ownsChannel;
  private final String token;
  private final String botName;
  private final String botVersion;
  private final int maxConcurrentMatches;
  private final Bot bot;
  private final Backoff backoff;
  private final long safetyMarginMs;
  private final long noDeadlineBudgetMs;
  private final Duration stopGrace;

  private final ExecutorService workers;
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

  private UnoBotClient(Builder b, ManagedChannel channel, boolean ownsChannel) {
    this.channel = channel;
    this.ownsChannel = ownsChannel;
    this.token = b.token;
    this.botName = b.botName;
    this.botVersion = b.botVersion;
    this.maxConcurrentMatches = b.maxConcurrentMatches;
    this.bot = b.bot;
    this.backoff = new Backoff(b.initialBackoff, b.maxBackoff);
    this.safetyMarginMs = b.safetyMargin.toMillis();
    this.noDeadlineBudgetMs = b.noDeadlineBudget.toMillis();
    this.stopGrace = b.stopGrace;
    this.workers = Executors.newCachedThreadPool(daemonThreads("uno-decide"));
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
    BotServiceGrpc.BotServiceStub stub =
        BotServiceGrpc.newStub(channel)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    try {
      while (!stopping) {
        Session s = new Session(streamsOpened.incrementAndGet());
        current = s;
        stub.play(s);
        s.send(PlayRequest.newBuilder().setHello(hello()).build());
        if (stopping) {
          s.halfClose(); // stop() raced with the connect: leave at once
        }
        Status status = awaitEnd(s);
        current = null;
        abandon(s);
        if (stopping) {
          break;
        }
        String why = describe(status, s.fatalError);
        if (isFatal(status, s.fatalError)) {
          LOG.severe("stream ended: " + why + "; not reconnecting");
          throw new UnoBotException(status, "stream ended: " + why);
        }
        Duration delay = backoff.next();
        LOG.warning("stream ended: " + why + "; reconnecting in " + delay.toMillis() + " ms");
        synchronized (sleepLock) {
          long until = System.nanoTime() + delay.toNanos();
          while (!stopping && System.nanoTime() < until) {
            TimeUnit.NANOSECONDS.timedWait(sleepLock, until - System.nanoTime());
          }
        }
      }
    } finally {
      stopping = true;
      workers.shutdownNow();
      timer.shutdownNow();
      if (ownsChannel) {
        channel.shutdown();
        if (!channel.awaitTermination(2, TimeUnit.SECONDS)) {
          channel.shutdownNow();
        }
      }
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

  /** How many Play streams have been opened (1 + reconnects). */
  public int streamsOpened() {
    return streamsOpened.get();
  }

  // ------------------------------------------------------------------ stream handling

  private Hello hello() {
    Hello.Builder h =
        Hello.newBuilder()
            .setBotName(botName)
            .setBotVersion(botVersion)
            .setProtocolVersion(PROTOCOL_VERSION)
            .setMaxConcurrentMatches(maxConcurrentMatches);
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

  private void handle(Session s, PlayResponse r) {
    switch (r.getKindCase()) {
      case WELCOME:
        onWelcome(s, r.getWelcome());
        break;
      case DECISION_REQUEST:
        onDecisionRequest(s, r.getDecisionRequest());
        break;
      case ACTION_RESULT:
        onActionResult(r.getActionResult());
        break;
      case REQUEST_CLOSED:
        onRequestClosed(r.getRequestClosed());
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
            "server error: code " + e.getCode() + " " + e.getReason() + ": " + e.getMessage()
                + (e.getFatal() ? " (fatal)" : ""));
        if (e.getFatal()) {
          s.fatalError = e;
        }
        break;
      default:
        LOG.fine("ignoring unknown message kind " + r.getKindCase());
    }
  }

  private void onWelcome(Session s, Welcome w) {
    sessionId = w.getSessionId();
    backoff.reset();
    for (var seat : w.getSeatsList()) {
      context(seat.getMatchId(), seat.getSeat());
    }
    LOG.info(
        "connected as " + w.getBotName() + " (session " + w.getSessionId() + ", server "
            + w.getServerVersion() + (w.getResumed() ? ", resumed" : "") + ", "
            + w.getSeatsCount() + " seats in play), stream #" + s.number);
  }

  private void onMatchStarted(MatchStarted m) {
    MatchContext ctx = context(m.getMatchId(), m.getSeat());
    ctx.setStarted(m);
    LOG.info(prefix(m.getMatchId(), m.getSeat()) + "match started, " + m.getSeatsCount() + " seats");
    try {
      bot.onMatchStarted(ctx, m);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, prefix(m.getMatchId(), m.getSeat()) + "onMatchStarted threw", e);
    }
  }

  private void onMatchEnded(MatchEnded m) {
    SeatKey key = new SeatKey(m.getMatchId(), m.getSeat());
    MatchContext ctx = context(m.getMatchId(), m.getSeat());
    fresh(ctx, m.getEventsList());
    pending.values().removeIf(p -> {
      if (!p.key.equals(key)) {
        return false;
      }
      if (p.finish()) {
        p.cancelTask();
      }
      return true;
    });
    LOG.info(
        prefix(m.getMatchId(), m.getSeat()) + "match ended (" + m.getCause() + "): "
            + (m.getWon() ? "won" : "lost") + ", winners " + m.getWinnersList() + ", totals "
            + m.getTotalsList() + ", strikes " + m.getStrikes()
            + (m.getTakenOver() ? ", taken over" : ""));
    try {
      bot.onMatchEnded(ctx, m);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, prefix(m.getMatchId(), m.getSeat()) + "onMatchEnded threw", e);
    } finally {
      contexts.remove(key);
    }
  }

  private void onRequestClosed(RequestClosed c) {
    Pending p = pending.remove(c.getRequestId());
    if (p != null) {
      p.finish();
    }
    String pre = prefix(c.getMatchId(), c.getSeat());
    switch (c.getReason()) {
      case CLOSE_REASON_TIMED_OUT:
        LOG.warning(
            pre + "request " + c.getRequestId() + " timed out: server played "
                + c.getAppliedActionId() + ", strikes " + c.getStrikes());
        break;
      case CLOSE_REASON_TAKEN_OVER:
        LOG.warning(pre + "seat taken over by the server's bot");
        break;
      default:
        LOG.fine(pre + "request " + c.getRequestId() + " closed: " + c.getReason());
    }
  }

  private void onActionResult(ActionResult ar) {
    String pre = prefix(ar.getMatchId(), ar.getSeat());
    Pending p = pending.get(ar.getRequestId());
    if (ar.getAccepted()) {
      pending.remove(ar.getRequestId());
      LOG.fine(pre + "action " + ar.getActionId() + " accepted (" + ar.getResponseMs() + " ms)");
    } else {
      LOG.warning(
          pre + "action " + ar.getActionId() + " for request " + ar.getRequestId()
              + " rejected: " + ar.getReason() + " (code " + ar.getCode() + ")"
              + (ar.getMessage().isEmpty() ? "" : " " + ar.getMessage())
              + (ar.getRequestOpen() ? "; request still open" : ""));
      if (ar.getRequestOpen() && p != null && p.decision.required() && p.retried.compareAndSet(false, true)) {
        int retry = retryId(p.decision.request(), ar.getActionId());
        if (retry >= 0) {
          LOG.warning(pre + "retrying with action " + retry);
          send(p, retry);
        }
      } else {
        pending.remove(ar.getRequestId());
      }
    }
    MatchContext ctx = contexts.get(new SeatKey(ar.getMatchId(), ar.getSeat()));
    if (ctx != null) {
      try {
        bot.onActionResult(ctx, ar);
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, pre + "onActionResult threw", e);
      }
    }
  }

  private void onDecisionRequest(Session s, DecisionRequest req) {
    MatchContext ctx = context(req.getMatchId(), req.getSeat());
    List<Event> events = fresh(ctx, req.getEventsList());
    long budget = budgetMs(req);
    Decision d = new Decision(req, ctx, events, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budget));
    Pending p = new Pending(s, d);
    Pending old = pending.put(req.getRequestId(), p);
    if (old != null && old.finish()) {
      old.cancelTask();
    }
    LOG.fine(
        d + (req.getRequired() ? "" : " (optional)") + ", " + req.getLegalActionsCount()
            + " legal actions, budget " + budget + " ms" + (req.getResent() ? ", resent" : ""));
    try {
      p.task = workers.submit(() -> runDecide(p));
      p.timeout = timer.schedule(() -> onTimeout(p, budget), budget, TimeUnit.MILLISECONDS);
    } catch (RuntimeException e) { // executors shut down: we are stopping
      p.finish();
    }
  }

  private void runDecide(Pending p) {
    int id;
    Throwable error = null;
    try {
      id = bot.decide(p.decision);
    } catch (Throwable t) { // the user's code: any failure falls back
      id = Bot.NO_ACTION;
      error = t;
    }
    if (!p.finish()) {
      LOG.fine(p.decision + ": late answer " + id + " dropped");
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
    } else if (id == Bot.NO_ACTION && !d.required()) {
      pending.remove(d.request().getRequestId());
      LOG.fine(d + ": optional request left unanswered");
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
    p.cancelTask();
    LOG.warning(p.decision + ": decide took more than " + budget + " ms; " + fallbackText(p.decision));
    sendFallback(p);
  }

  private static String fallbackText(Decision d) {
    return d.required()
        ? "answering fallback " + d.fallbackActionId()
        : "leaving the optional request unanswered";
  }

  private void sendFallback(Pending p) {
    if (p.decision.required()) {
      send(p, p.decision.fallbackActionId());
    } else {
      pending.remove(p.decision.request().getRequestId());
    }
  }

  private void send(Pending p, int actionId) {
    PlayRequest msg =
        PlayRequest.newBuilder()
            .setAction(
                Action.newBuilder()
                    .setRequestId(p.decision.request().getRequestId())
                    .setActionId(actionId))
            .build();
    if (!p.session.send(msg)) {
      LOG.fine(p.decision + ": stream closed, answer " + actionId + " not sent");
    }
  }

  /** On session end: nothing pending there can be answered any more (the server re-sends). */
  private void abandon(Session s) {
    pending.values().removeIf(p -> {
      if (p.session == s && p.finish()) {
        p.cancelTask();
      }
      return p.session == s;
    });
  }

  private long budgetMs(DecisionRequest req) {
    long left = req.getTimeLeftMs();
    if (left <= 0) {
      if (!req.getRequired()) {
        return noDeadlineBudgetMs;
      }
      left = req.getDecisionMs() > 0 ? req.getDecisionMs() : 1000;
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

  static int retryId(DecisionRequest req, int rejected) {
    if (req.hasDefaultActionId() && req.getDefaultActionId() != rejected) {
      for (LegalAction a : req.getLegalActionsList()) {
        if (a.getId() == req.getDefaultActionId()) {
          return a.getId();
        }
      }
    }
    for (LegalAction a : req.getLegalActionsList()) {
      if (a.getId() != rejected) {
        return a.getId();
      }
    }
    return -1;
  }

  static boolean isFatal(Status status, StreamError fatalError) {
    switch (status.getCode()) {
      case UNAUTHENTICATED:
      case PERMISSION_DENIED:
      case FAILED_PRECONDITION:
        return true;
      case ABORTED:
        return (fatalError != null && fatalError.getReason() == ErrorReason.ERROR_REASON_SESSION_REPLACED)
            || String.valueOf(status.getDescription()).contains("SESSION_REPLACED");
      default:
        return false;
    }
  }

  private static String describe(Status st, StreamError e) {
    String s = st.getCode() + (st.getDescription() != null ? " (" + st.getDescription() + ")" : "");
    if (st.getCause() != null && st.getDescription() == null) {
      s += " (" + st.getCause() + ")";
    }
    return e != null ? s + " after " + e.getReason() : s;
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
    volatile StreamError fatalError;
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
      try {
        handle(this, value);
      } catch (RuntimeException e) {
        LOG.log(Level.SEVERE, "error handling " + value.getKindCase(), e);
      }
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

  /** Configures an {@link UnoBotClient}. {@code target} (or {@code channel}), {@code botName} and {@code bot} are required. */
  public static final class Builder {
    private String target;
    private ManagedChannel channel;
    private boolean tls;
    private String token = "";
    private String botName;
    private String botVersion = "0.1.0";
    private int maxConcurrentMatches;
    private Bot bot;
    private Duration initialBackoff = Duration.ofMillis(250);
    private Duration maxBackoff = Duration.ofSeconds(30);
    private Duration safetyMargin = Duration.ofMillis(100);
    private Duration noDeadlineBudget = Duration.ofSeconds(10);
    private Duration stopGrace = Duration.ofSeconds(2);

    private Builder() {}

    /** Server address, e.g. {@code 127.0.0.1:50051} or any gRPC target ({@code dns:///host:port}). */
    public Builder target(String target) {
      this.target = target;
      return this;
    }

    /** Use this channel instead of building one from {@link #target} (the caller shuts it down). */
    public Builder channel(ManagedChannel channel) {
      this.channel = channel;
      return this;
    }

    /** Connect with TLS (system trust store) instead of plaintext. */
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

    public Builder botVersion(String botVersion) {
      this.botVersion = Objects.requireNonNull(botVersion);
      return this;
    }

    /** Advisory Hello.max_concurrent_matches (0 = no limit). */
    public Builder maxConcurrentMatches(int n) {
      this.maxConcurrentMatches = n;
      return this;
    }

    public Builder bot(Bot bot) {
      this.bot = bot;
      return this;
    }

    /** Reconnect backoff: first delay about {@code initial}, doubling up to {@code max} (250 ms, 30 s). */
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

    /** Thinking time allowed for optional requests without a deadline (jump-in), default 10 s. */
    public Builder noDeadlineBudget(Duration budget) {
      this.noDeadlineBudget = budget;
      return this;
    }

    /** How long {@link UnoBotClient#stop()} waits for the server to end the stream before cancelling it (2 s). */
    public Builder stopGrace(Duration grace) {
      this.stopGrace = grace;
      return this;
    }

    public UnoBotClient build() {
      if (bot == null) {
        throw new IllegalStateException("bot is required");
      }
      if (botName == null || botName.isEmpty()) {
        throw new IllegalStateException("botName is required");
      }
      if (channel != null) {
        return new UnoBotClient(this, channel, false);
      }
      if (target == null || target.isEmpty()) {
        throw new IllegalStateException("target (server address) or channel is required");
      }
      ChannelCredentials creds =
          tls ? TlsChannelCredentials.create() : InsecureChannelCredentials.create();
      return new UnoBotClient(this, Grpc.newChannelBuilder(target, creds).build(), true);
    }
  }
}
