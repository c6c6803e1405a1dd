package unobot

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
)

var hostname = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$`)

// Address is a parsed server address (see [ParseAddress]).
type Address struct {
	// Target is "host:port" ("[v6]:port" for an IPv6 literal), what grpc dials.
	Target string
	// TLS is true for an https:// address (TLS with the system roots).
	TLS bool
	// Scheme is "http", "https" or "" (a bare HOST:PORT).
	Scheme string
}

// AddressError is returned by [ParseAddress], and by [Run] before it connects, for an address
// that is not HOST:PORT, http://HOST:PORT or https://HOST:PORT. It is never retried.
type AddressError struct {
	Addr string // the address as given
	Why  string // what is wrong with it, in a few words
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("invalid address %q (%s): use HOST:PORT, http://HOST:PORT or https://HOST:PORT", e.Addr, e.Why)
}

// ParseAddress accepts the three address forms every UNO Arena SDK accepts:
//
//	HOST:PORT           plaintext, e.g. 127.0.0.1:50051, localhost:50051, [::1]:50051
//	http://HOST:PORT    plaintext
//	https://HOST:PORT   TLS with the system roots
//
// Anything else (no port, a port outside 1-65535, another scheme, a path, a user name) is
// refused with an [*AddressError].
func ParseAddress(s string) (Address, error) {
	bad := func(why string) (Address, error) { return Address{}, &AddressError{Addr: s, Why: why} }
	rest, scheme := s, ""
	if i := strings.Index(s, "://"); i >= 0 {
		scheme = strings.ToLower(s[:i])
		rest = s[i+3:]
		if scheme != "http" && scheme != "https" {
			return bad("scheme " + strconv.Quote(s[:i]) + " is not http or https")
		}
	}
	if rest == "" {
		return bad("empty")
	}
	if strings.ContainsAny(rest, "/?#@ \t") {
		return bad("only a host and a port may follow the scheme")
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			return bad("no port")
		}
		return bad("not HOST:PORT")
	}
	if host == "" {
		return bad("no host")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port[0] == '+' {
		return bad("port must be a number from 1 to 65535")
	}
	if strings.Contains(host, ":") && net.ParseIP(host) == nil {
		return bad("not an IPv6 address inside [ ]")
	}
	if net.ParseIP(host) == nil && !hostname.MatchString(host) {
		return bad("not a host name")
	}
	return Address{Target: net.JoinHostPort(host, port), TLS: scheme == "https", Scheme: scheme}, nil
}
