/** Server addresses and plain-words descriptions of how a connection or stream ended. */
import * as grpc from "@grpc/grpc-js";
import { isIP } from "node:net";

/** A parsed server address (see {@link parseAddress}). */
export interface Address {
  /** "host:port" ("[v6]:port" for an IPv6 literal): what the channel dials. */
  target: string;
  /** True for an https:// address: TLS with the system roots. */
  tls: boolean;
  /** "http", "https", or "" for a bare HOST:PORT. */
  scheme: "" | "http" | "https";
}

/** A server address that is not HOST:PORT, http://HOST:PORT or https://HOST:PORT. Never retried. */
export class AddressError extends Error {
  constructor(
    readonly address: string,
    readonly why: string,
  ) {
    super(`invalid address ${JSON.stringify(address)} (${why}): use HOST:PORT, http://HOST:PORT or https://HOST:PORT`);
    this.name = "AddressError";
  }
}

const HOSTNAME = /^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;

/**
 * Accepts the three address forms every UNO Arena SDK accepts:
 *
 *     HOST:PORT           plaintext, e.g. 127.0.0.1:50051, localhost:50051, [::1]:50051
 *     http://HOST:PORT    plaintext
 *     https://HOST:PORT   TLS with the system roots
 *
 * Anything else (no port, a port outside 1-65535, another scheme, a path, a user name) throws an
 * {@link AddressError}.
 */
export function parseAddress(address: string): Address {
  const bad = (why: string): never => {
    throw new AddressError(address, why);
  };
  let rest = address;
  let scheme: Address["scheme"] = "";
  const sep = address.indexOf("://");
  if (sep >= 0) {
    const given = address.slice(0, sep).toLowerCase();
    if (given !== "http" && given !== "https") bad(`scheme ${JSON.stringify(address.slice(0, sep))} is not http or https`);
    scheme = given as Address["scheme"];
    rest = address.slice(sep + 3);
  }
  if (rest === "") bad("empty");
  if (/[/?#@\s]/.test(rest)) bad("only a host and a port may follow the scheme");
  let host: string;
  let port: string;
  if (rest.startsWith("[")) {
    const close = rest.indexOf("]");
    if (close < 0) bad("not HOST:PORT");
    host = rest.slice(1, close);
    const after = rest.slice(close + 1);
    if (after === "") bad("no port");
    if (!after.startsWith(":")) bad("not HOST:PORT");
    port = after.slice(1);
    if (isIP(host) !== 6) bad("not an IPv6 address inside [ ]");
  } else {
    const colon = rest.lastIndexOf(":");
    if (colon < 0) bad("no port");
    host = rest.slice(0, colon);
    port = rest.slice(colon + 1);
    if (host.includes(":")) bad("not an IPv6 address inside [ ]");
    if (host === "") bad("no host");
    if (isIP(host) === 0 && !HOSTNAME.test(host)) bad("not a host name");
  }
  const n = /^[0-9]{1,5}$/.test(port) ? Number(port) : NaN;
  if (!(n >= 1 && n <= 65535)) bad("port must be a number from 1 to 65535");
  return { target: host.includes(":") ? `[${host}]:${n}` : `${host}:${n}`, tls: scheme === "https", scheme };
}

// What the transport reports when it cannot reach the server, in plain words.
const CONNECT_FAILURES: Array<[RegExp, string]> = [
  [/ECONNREFUSED/, "connection refused"],
  [/ENOTFOUND|EAI_AGAIN|Name resolution failed|DNS resolution failed/, "unknown host"],
  [/ETIMEDOUT|timed out/i, "connection timed out"],
  [/ENETUNREACH/, "network unreachable"],
  [/EHOSTUNREACH/, "no route to host"],
  [/ECONNRESET/, "connection reset"],
  [/certificate|CERT_|self.signed/i, "TLS certificate not trusted"],
  [/SSL|TLS|wrong version number/i, "TLS handshake failed"],
];

/**
 * How a stream or connection attempt ended, in plain words, e.g. "connection refused
 * (127.0.0.1:50051)" or "server closed the stream: UNAVAILABLE (shutting down)".
 */
export function describeStatus(status: { code: grpc.status; details: string } | undefined, address: string): string {
  if (!status) return `the stream ended (${address})`;
  if (status.code === grpc.status.OK) return `the server ended the stream (${address})`;
  if (status.code === grpc.status.UNAVAILABLE) {
    for (const [pattern, words] of CONNECT_FAILURES) if (pattern.test(status.details)) return `${words} (${address})`;
  }
  const name = grpc.status[status.code] ?? String(status.code);
  return `server closed the stream: ${name}` + (status.details ? ` (${status.details})` : "");
}
