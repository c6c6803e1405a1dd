package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import uno.v1.DecisionRequest;
import uno.v1.PlayRequest;
import uno.v1.PlayResponse;
import uno.v1.ResponseBatch;
import uno.v1.Prompt;
import uno.v1.BotServiceGrpc;
import uno.v1.Card;
import uno.v1.Color;
import uno.v1.Rank;
import uno.v1.ActionKind;
import uno.v1.Event;
import uno.v1.LegalAction;
import uno.v1.PassedEvent;

/** An in-process fake of the server side of BotService.Play, scripted by each test. */
final class FakeArena extends BotServiceGrpc.BotServiceImplBase implements AutoCloseable {
  private static final Context.Key<String> AUTH = Context.key("authorization");

  final String name = InProcessServerBuilder.generateName();
  final BlockingQueue<FakeStream> streams = new LinkedBlockingQueue<>();
  /** Every channel the client made, in order (one per connection attempt). */
  final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();
  private final Server server;

  FakeArena() throws IOException {
    ServerInterceptor captureAuth =
        new ServerInterceptor() {
          @Override
          public <Q, R> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            Context ctx = Context.current().withValue(AUTH, headers.get(UnoBotClient.AUTHORIZATION));
            return Contexts.interceptCall(ctx, call, headers, next);
          }
        };
    server =
        InProcessServerBuilder.forName(name)
            .addService(ServerInterceptors.intercept(this, captureAuth))
            .build()
            .start();
  }

  /** Makes a new in-process channel for each connection attempt, and remembers it. */
  Supplier<ManagedChannel> channelFactory(ClientInterceptor... interceptors) {
    return () -> {
      ManagedChannel c = InProcessChannelBuilder.forName(name).intercept(interceptors).build();
      channels.add(c);
      return c;
    };
  }

  @Override
  public StreamObserver<PlayRequest> play(StreamObserver<PlayResponse> out) {
    FakeStream s = new FakeStream(AUTH.get(), out);
    streams.add(s);
    return s;
  }

  /**
   * How long a test waits for something that must happen: generous, for a busy machine (a test
   * may take 30 s in all). Nothing passes by waiting this long.
   */
  static final long PATIENCE_MS = 20_000;

  /** The next stream the client opens (waits up to PATIENCE_MS). */
  FakeStream nextStream() throws InterruptedException {
    FakeStream s = streams.poll(PATIENCE_MS, TimeUnit.MILLISECONDS);
    assertNotNull(s, "the client opened no stream");
    return s;
  }

  @Override
  public void close() throws InterruptedException {
    channels.forEach(ManagedChannel::shutdownNow);
    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
  }

  /** One Play stream as the server sees it. */
  static final class FakeStream implements StreamObserver<PlayRequest> {
    final String authorization;
    final BlockingQueue<PlayRequest> received = new LinkedBlockingQueue<>();
    final CompletableFuture<Status> clientEnded = new CompletableFuture<>();
    /** The size of every ActionBatch received (its actions reach {@link #received} one by one). */
    final List<Integer> batches = new CopyOnWriteArrayList<>();
    /** How many lone Actions were received. */
    final AtomicInteger singles = new AtomicInteger();
    private final StreamObserver<PlayResponse> out;

    FakeStream(String authorization, StreamObserver<PlayResponse> out) {
      this.authorization = authorization;
      this.out = out;
    }

    synchronized void send(PlayResponse r) {
      out.onNext(r);
    }

    synchronized void fail(Status status) {
      out.onError(status.asRuntimeException());
    }

    synchronized void complete() {
      out.onCompleted();
    }

    PlayRequest next() throws InterruptedException {
      PlayRequest r = received.poll(PATIENCE_MS, TimeUnit.MILLISECONDS);
      assertNotNull(r, "nothing received from the client");
      return r;
    }

    PlayRequest poll(long ms) throws InterruptedException {
      return received.poll(ms, TimeUnit.MILLISECONDS);
    }

    uno.v1.Action nextAction() throws InterruptedException {
      PlayRequest r = next();
      assertTrue(r.hasAction(), "expected an action, got " + r);
      return r.getAction();
    }

    /** Several messages in one, as the server sends them to a bot whose Hello.max_batch >= 2. */
    void sendBatch(PlayResponse... messages) {
      send(PlayResponse.newBuilder().setBatch(ResponseBatch.newBuilder().addAllMessages(List.of(messages))).build());
    }

    @Override
    public void onNext(PlayRequest value) {
      if (value.hasActions()) {
        // applied in order, each exactly as if it had come alone: so the tests see them
        batches.add(value.getActions().getActionsCount());
        for (uno.v1.Action a : value.getActions().getActionsList()) {
          received.add(PlayRequest.newBuilder().setAction(a).build());
        }
        return;
      }
      if (value.hasAction()) {
        singles.incrementAndGet();
      }
      received.add(value);
    }

    @Override
    public void onError(Throwable t) {
      clientEnded.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      clientEnded.complete(Status.OK);
      complete(); // a server ends the call when the bot leaves
    }
  }

  // ------------------------------------------------------------------ message builders

  static LegalAction draw() {
    return LegalAction.newBuilder().setId(0).setKind(ActionKind.ACTION_KIND_DRAW).setDescription("draw").build();
  }

  static LegalAction play(Color color, Rank rank, int code) {
    Card card = Card.newBuilder().setColor(color).setRank(rank).setCode(code).build();
    return LegalAction.newBuilder()
        .setId(1000 + 10 * code)
        .setKind(ActionKind.ACTION_KIND_PLAY)
        .setCard(card)
        .build();
  }

  static Event event(long sequence) {
    return Event.newBuilder().setSequence(sequence).setPassed(PassedEvent.newBuilder().setSeat(1)).build();
  }

  /** A required turn: legal = draw, red 7 (1070), blue 3 (1510); default draw. */
  static DecisionRequest.Builder turn(String requestId, String matchId, int seat, int timeLeftMs) {
    return DecisionRequest.newBuilder()
        .setRequestId(requestId)
        .setMatchId(matchId)
        .setSeat(seat)
        .setPrompt(Prompt.PROMPT_TURN)
        .setRequired(true)
        .setTimeLeftMs(timeLeftMs)
        .setDecisionMs(timeLeftMs)
        .setDefaultActionId(0)
        .addLegalActions(draw())
        .addLegalActions(play(Color.COLOR_RED, Rank.RANK_SEVEN, 7))
        .addLegalActions(play(Color.COLOR_BLUE, Rank.RANK_THREE, 51));
  }

  static PlayResponse wrap(DecisionRequest.Builder r) {
    return PlayResponse.newBuilder().setDecisionRequest(r).build();
  }
}
