//! Server addresses: `HOST:PORT`, `http://HOST:PORT` (plaintext), `https://HOST:PORT` (TLS), with
//! `[v6]:PORT` for IPv6. Anything else (no port, another scheme, a path) is refused before any
//! connection is tried, so a typo never turns into endless reconnect attempts.

use std::fmt;
use std::net::Ipv6Addr;

/// A parsed server address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Address {
    /// True for `https://` (TLS with the system's root certificates).
    pub tls: bool,
    /// Host name or IP address; an IPv6 address without its brackets.
    pub host: String,
    /// TCP port, 1-65535.
    pub port: u16,
}

/// Why an address was refused: it names the address and the accepted forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressError(pub String);

impl fmt::Display for AddressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid address {:?}: use HOST:PORT, http://HOST:PORT or https://HOST:PORT", self.0)
    }
}

impl std::error::Error for AddressError {}

impl Address {
    /// Parses `HOST:PORT`, `http://HOST:PORT` or `https://HOST:PORT` (`HOST` may be `[v6]`).
    pub fn parse(text: &str) -> Result<Address, AddressError> {
        let err = || AddressError(text.to_string());
        let (tls, rest) = match text.split_once("://") {
            None => (false, text),
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => (false, rest),
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => (true, rest),
            Some(_) => return Err(err()),
        };
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (inside, after) = v6.split_once(']').ok_or_else(err)?;
            inside.parse::<Ipv6Addr>().map_err(|_| err())?;
            (inside, after.strip_prefix(':').ok_or_else(err)?)
        } else {
            let (host, port) = rest.rsplit_once(':').ok_or_else(err)?;
            let host_ok = !host.is_empty()
                && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
            if !host_ok {
                return Err(err());
            }
            (host, port)
        };
        if port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()) {
            return Err(err());
        }
        let port: u16 = port.parse().map_err(|_| err())?;
        if port == 0 {
            return Err(err());
        }
        Ok(Address { tls, host: host.to_string(), port })
    }

    /// `HOST:PORT` (IPv6 hosts in brackets), as used in messages.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The URI tonic connects to: `http://HOST:PORT` or `https://HOST:PORT`.
    pub fn uri(&self) -> String {
        format!("{}://{}", if self.tls { "https" } else { "http" }, self.authority())
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.authority())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str, tls: bool, host: &str, port: u16) {
        let a = Address::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(a, Address { tls, host: host.into(), port }, "{text}");
    }

    #[test]
    fn the_three_forms_and_ipv6_are_accepted() {
        ok("127.0.0.1:50051", false, "127.0.0.1", 50051);
        ok("localhost:1", false, "localhost", 1);
        ok("http://arena.example.org:50051", false, "arena.example.org", 50051);
        ok("HTTP://h:2", false, "h", 2);
        ok("https://arena.example.org:443", true, "arena.example.org", 443);
        ok("[::1]:50051", false, "::1", 50051);
        ok("https://[2001:db8::7]:8443", true, "2001:db8::7", 8443);
        assert_eq!(Address::parse("[::1]:5").unwrap().uri(), "http://[::1]:5");
        assert_eq!(Address::parse("https://h:5").unwrap().uri(), "https://h:5");
    }

    #[test]
    fn anything_else_is_refused_with_one_line() {
        for bad in [
            "",
            "foo",
            "localhost",
            "http://localhost",
            "localhost:",
            "localhost:http",
            "localhost:0",
            "localhost:65536",
            "localhost:-1",
            "grpc://h:1",
            "dns:///h:1",
            "unix:///tmp/sock",
            "http://h:1/",
            "http://h:1/uno",
            "h:1?x",
            "user@h:1",
            "::1:50051",
            "[::1]",
            "[::1]50051",
            "[nothex]:1",
            " h:1",
            "h :1",
        ] {
            let e = Address::parse(bad).expect_err(bad);
            let line = e.to_string();
            assert!(!line.contains('\n'), "{line}");
            assert!(line.starts_with("invalid address "), "{line}");
            assert!(line.ends_with("use HOST:PORT, http://HOST:PORT or https://HOST:PORT"), "{line}");
        }
    }
}
