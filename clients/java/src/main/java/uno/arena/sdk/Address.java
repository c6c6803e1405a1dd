package uno.arena.sdk;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A server address: {@code HOST:PORT}, {@code http://HOST:PORT} (plaintext) or {@code
 * https://HOST:PORT} (TLS with the system's trust store), with {@code [v6]:PORT} for IPv6. Anything
 * else (no port, another scheme, a path) is refused by {@link #parse} before any connection is
 * tried, so a typo never turns into endless reconnect attempts.
 *
 * @param tls true for {@code https://}
 * @param host host name or IP address (an IPv6 address without its brackets)
 * @param port TCP port, 1-65535
 */
public record Address(boolean tls, String host, int port) {
  private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._-]+");
  private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");

  /**
   * Parses an address.
   *
   * @throws IllegalArgumentException with one line naming the address and the accepted forms
   */
  public static Address parse(String text) {
    IllegalArgumentException bad =
        new IllegalArgumentException(
            "invalid address \"" + text + "\": use HOST:PORT, http://HOST:PORT or https://HOST:PORT");
    if (text == null) {
      throw bad;
    }
    boolean tls = false;
    String rest = text;
    int scheme = text.indexOf("://");
    if (scheme >= 0) {
      String s = text.substring(0, scheme).toLowerCase(Locale.ROOT);
      if (s.equals("https")) {
        tls = true;
      } else if (!s.equals("http")) {
        throw bad;
      }
      rest = text.substring(scheme + 3);
    }
    String host;
    String port;
    if (rest.startsWith("[")) {
      int close = rest.indexOf(']');
      if (close < 0 || close + 1 >= rest.length() || rest.charAt(close + 1) != ':') {
        throw bad;
      }
      host = rest.substring(1, close);
      port = rest.substring(close + 2);
      if (!isIpv6(host)) {
        throw bad;
      }
    } else {
      int colon = rest.lastIndexOf(':');
      if (colon < 0) {
        throw bad;
      }
      host = rest.substring(0, colon);
      port = rest.substring(colon + 1);
      if (!HOST.matcher(host).matches()) {
        throw bad;
      }
    }
    if (!PORT.matcher(port).matches()) {
      throw bad;
    }
    int p = Integer.parseInt(port);
    if (p < 1 || p > 65535) {
      throw bad;
    }
    return new Address(tls, host, p);
  }

  private static boolean isIpv6(String host) {
    if (host.isEmpty() || !host.contains(":") || !host.matches("[0-9A-Fa-f:.]+")) {
      return false;
    }
    try {
      return InetAddress.getByName(host).getAddress().length == 16; // a literal: no lookup
    } catch (UnknownHostException e) {
      return false;
    }
  }

  /** {@code HOST:PORT}, IPv6 hosts in brackets: how messages name the server. */
  @Override
  public String toString() {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }
}
