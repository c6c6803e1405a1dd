package uno.arena.sdk;

import io.grpc.Status;

/** The server ended the stream for a reason a reconnect cannot fix (bad token, replaced session...). */
public final class UnoBotException extends Exception {
  private static final long serialVersionUID = 1L;
  private final transient Status status;

  UnoBotException(Status status, String message) {
    super(message);
    this.status = status;
  }

  /** The gRPC status the stream ended with. */
  public Status status() {
    return status;
  }
}
