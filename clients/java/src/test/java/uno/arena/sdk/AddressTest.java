package uno.arena.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class AddressTest {
  @Test
  void theThreeFormsAndIpv6AreAccepted() {
    assertEquals(new Address(false, "127.0.0.1", 50051), Address.parse("127.0.0.1:50051"));
    assertEquals(new Address(false, "localhost", 1), Address.parse("localhost:1"));
    assertEquals(new Address(false, "arena.example.org", 50051), Address.parse("http://arena.example.org:50051"));
    assertEquals(new Address(false, "h", 2), Address.parse("HTTP://h:2"));
    assertEquals(new Address(true, "arena.example.org", 443), Address.parse("https://arena.example.org:443"));
    assertEquals(new Address(false, "::1", 50051), Address.parse("[::1]:50051"));
    assertEquals(new Address(true, "2001:db8::7", 8443), Address.parse("https://[2001:db8::7]:8443"));
    assertEquals("[::1]:5", Address.parse("[::1]:5").toString());
  }

  @Test
  void anythingElseIsRefusedWithOneLine() {
    for (String bad :
        List.of(
            "", "foo", "localhost", "http://localhost", "localhost:", "localhost:http", "localhost:0",
            "localhost:65536", "localhost:-1", "grpc://h:1", "dns:///h:1", "unix:///tmp/sock",
            "http://h:1/", "http://h:1/uno", "h:1?x", "user@h:1", "::1:50051", "[::1]", "[::1]50051",
            "[nothex]:1", " h:1", "h :1")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Address.parse(bad), bad);
      assertEquals(
          "invalid address \"" + bad + "\": use HOST:PORT, http://HOST:PORT or https://HOST:PORT", e.getMessage());
    }
  }
}
