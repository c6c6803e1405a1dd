package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import uno.v1.Action;
import uno.v1.ActionKind;
import uno.v1.BotServiceGrpc;
import uno.v1.DecisionRequest;
import uno.v1.LegalAction;
import uno.v1.PlayRequest;
import uno.v1.PlayResponse;
import uno.v1.Prompt;
import uno.v1.Welcome;

/**
 * The local-socket shortcut ({@code UNO_ARENA_LOCAL_SOCKET}): the tournament's sandbox names the
 * game server's Unix socket, and a plaintext connection goes there instead of through the relay
 * behind the address. TLS connections, and a variable that names no socket, keep the address.
 */
class LocalSocketTest {
  /** How long the test waits for what must happen: generous, for a busy machine. */
  private static final long PATIENCE_S = 30;

  private Path dir;

  @BeforeEach
  void makeDir() throws Exception {
    // short: a Unix socket path has at most 107 bytes
    dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "uno-java-");
  }

  @AfterEach
  void removeDir() throws Exception {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** A Unix socket file (bound by the JDK, no gRPC): what stat sees is what matters. */
  private ServerSocketChannel socketFile(Path path) throws Exception {
    ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    ch.bind(UnixDomainSocketAddress.of(path));
    return ch;
  }

  /** A port nothing listens on (bound once, then released). */
  private static int deadPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void theSocketIsUsedOnlyForAPlaintextConnectionToARealSocket() throws Exception {
    Path sock = dir.resolve("probe.sock");
    try (ServerSocketChannel ignored = socketFile(sock)) {
      assertEquals(sock, UnoBotClient.localSocket(sock.toString(), false));
      assertNull(UnoBotClient.localSocket(sock.toString(), true), "TLS keeps the address");
      assertNull(UnoBotClient.localSocket(null, false), "unset");
      assertNull(UnoBotClient.localSocket("", false), "empty");
      Path plain = Files.writeString(dir.resolve("not-a-socket"), "");
      assertNull(UnoBotClient.localSocket(plain.toString(), false), "a regular file");
      assertNull(UnoBotClient.localSocket(dir.toString(), false), "a folder");
      assertNull(UnoBotClient.localSocket(dir.resolve("missing.sock").toString(), false), "missing");

      // The connector of a target address asks before every attempt.
      String[] env = {sock.toString()};
      Address addr = Address.parse("127.0.0.1:7");
      UnoBotClient.AddressConnector plainConn = new UnoBotClient.AddressConnector(addr, false, () -> env[0]);
      UnoBotClient.AddressConnector tlsConn = new UnoBotClient.AddressConnector(addr, true, () -> env[0]);
      try {
        UnoBotClient.Connection c = plainConn.connect();
        c.channel().shutdownNow();
        assertEquals("unix:" + sock, c.target());
        c = tlsConn.connect();
        c.channel().shutdownNow();
        assertEquals("127.0.0.1:7", c.target(), "TLS: the address");
        env[0] = plain.toString();
        c = plainConn.connect();
        c.channel().shutdownNow();
        assertEquals("127.0.0.1:7", c.target(), "not a socket: the address");
      } finally {
        plainConn.close();
        tlsConn.close();
      }
    }
  }

  /** Nothing listens at the address: the answer can only have come through the socket. */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aBotPlaysThroughTheSocketWhileItsAddressIsDead() throws Exception {
    assertTrue(Epoll.isAvailable(), "grpc-netty-shaded bundles epoll for Linux: " + Epoll.unavailabilityCause());
    Path sock = dir.resolve("server.sock");
    BlockingQueue<String> auth = new LinkedBlockingQueue<>();
    BlockingQueue<PlayRequest> got = new LinkedBlockingQueue<>();
    BotServiceGrpc.BotServiceImplBase service =
        new BotServiceGrpc.BotServiceImplBase() {
          @Override
          public StreamObserver<PlayRequest> play(StreamObserver<PlayResponse> out) {
            return new StreamObserver<>() {
              @Override
              public void onNext(PlayRequest r) {
                got.add(r);
                if (r.hasHello()) {
                  out.onNext(
                      PlayResponse.newBuilder()
                          .setWelcome(Welcome.newBuilder().setSessionId("s1").setProtocolVersion(1)
                              .setBotName(r.getHello().getBotName()))
                          .build());
                  out.onNext(PlayResponse.newBuilder().setDecisionRequest(request()).build());
                }
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {
                out.onCompleted();
              }
            };
          }
        };
    ServerInterceptor captureAuth =
        new ServerInterceptor() {
          @Override
          public <Q, R> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            auth.add(String.valueOf(headers.get(UnoBotClient.AUTHORIZATION)));
            return next.startCall(call, headers);
          }
        };
    EventLoopGroup loop = new EpollEventLoopGroup(1);
    Server server =
        NettyServerBuilder.forAddress(new DomainSocketAddress(sock.toString()), InsecureServerCredentials.create())
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(loop)
            .workerEventLoopGroup(loop)
            .withChildOption(ChannelOption.SO_KEEPALIVE, null) // a TCP option: Netty would warn
            .addService(ServerInterceptors.intercept(service, captureAuth))
            .build()
            .start();
    Logger log = Logger.getLogger(UnoBotClient.class.getName());
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Handler handler =
        new Handler() {
          @Override
          public void publish(LogRecord r) {
            lines.add(r.getMessage());
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    log.addHandler(handler);
    UnoBotClient client =
        UnoBotClient.builder()
            .target("127.0.0.1:" + deadPort())
            .token("T")
            .botName("java-socket")
            .backoff(java.time.Duration.ofMillis(10), java.time.Duration.ofMillis(50))
            .localSocketEnv(sock::toString)
            .bot(d -> d.actions(ActionKind.ACTION_KIND_PLAY).get(0).getId())
            .build();
    Thread runner = new Thread(() -> {
      try {
        client.run();
      } catch (Exception e) {
        lines.add("run failed: " + e);
      }
    });
    runner.start();
    try {
      assertEquals("Bearer T", auth.poll(PATIENCE_S, TimeUnit.SECONDS), "no stream reached the socket: " + lines);
      PlayRequest hello = got.poll(PATIENCE_S, TimeUnit.SECONDS);
      assertNotNull(hello);
      assertEquals("java-socket", hello.getHello().getBotName());
      PlayRequest answer = got.poll(PATIENCE_S, TimeUnit.SECONDS);
      assertNotNull(answer, "no answer");
      Action a = answer.hasAction() ? answer.getAction() : answer.getActions().getActions(0);
      assertEquals("r1", a.getRequestId());
      assertEquals(1070, a.getActionId());
      String connected = null;
      for (long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(PATIENCE_S); connected == null; ) {
        String line = lines.poll(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS);
        assertNotNull(line, "no \"connected\" line");
        if (line.startsWith("connected to ")) {
          connected = line;
        }
      }
      assertTrue(connected.startsWith("connected to unix:" + sock + " as java-socket"), connected);
    } finally {
      client.stop();
      runner.join(TimeUnit.SECONDS.toMillis(PATIENCE_S));
      log.removeHandler(handler);
      server.shutdownNow().awaitTermination(PATIENCE_S, TimeUnit.SECONDS);
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  private static DecisionRequest request() {
    return DecisionRequest.newBuilder()
        .setRequestId("r1")
        .setMatchId("m1")
        .setPrompt(Prompt.PROMPT_TURN)
        .setRequired(true)
        .setTimeLeftMs(60_000)
        .setDefaultActionId(0)
        .addLegalActions(LegalAction.newBuilder().setId(0).setKind(ActionKind.ACTION_KIND_DRAW))
        .addLegalActions(LegalAction.newBuilder().setId(1070).setKind(ActionKind.ACTION_KIND_PLAY))
        .build();
  }
}
