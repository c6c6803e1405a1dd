import assert from "node:assert/strict";
import { test } from "node:test";

import * as grpc from "@grpc/grpc-js";

import { AddressError, describeStatus, parseAddress } from "../src/address";

test("parseAddress accepts HOST:PORT, http:// and https://", () => {
  const good: Array<[string, string, boolean]> = [
    ["127.0.0.1:50051", "127.0.0.1:50051", false],
    ["localhost:50051", "localhost:50051", false],
    ["uno.example.org:443", "uno.example.org:443", false],
    ["http://127.0.0.1:50051", "127.0.0.1:50051", false],
    ["HTTP://127.0.0.1:50051", "127.0.0.1:50051", false],
    ["https://uno.example.org:443", "uno.example.org:443", true],
    ["[::1]:50051", "[::1]:50051", false],
    ["http://[::1]:50051", "[::1]:50051", false],
    ["https://[2001:db8::1]:8443", "[2001:db8::1]:8443", true],
  ];
  for (const [input, target, tls] of good) {
    const a = parseAddress(input);
    assert.deepEqual([a.target, a.tls], [target, tls], input);
  }
});

test("parseAddress refuses anything else with one line", () => {
  const bad = [
    "", "foo", "localhost", "127.0.0.1", "http://localhost", "grpc://localhost:50051", "dns:///localhost:50051",
    "http://127.0.0.1:50051/", "http://127.0.0.1:50051/uno", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:port",
    "::1:50051", ":50051", "http://user@host:1", "host:50051?x=1", "unix:///tmp/sock", "http://", "bad host!:1", "-x:1",
  ];
  for (const input of bad) {
    assert.throws(
      () => parseAddress(input),
      (err: unknown) =>
        err instanceof AddressError &&
        err.message.startsWith(`invalid address ${JSON.stringify(input)} (`) &&
        err.message.endsWith("): use HOST:PORT, http://HOST:PORT or https://HOST:PORT") &&
        !err.message.includes("\n"),
      input,
    );
  }
});

test("describeStatus says what happened in plain words", () => {
  const addr = "127.0.0.1:50051";
  const cases: Array<[{ code: grpc.status; details: string } | undefined, string]> = [
    [{ code: grpc.status.UNAVAILABLE, details: "No connection established. Last error: connect ECONNREFUSED 127.0.0.1:50051" }, "connection refused (127.0.0.1:50051)"],
    [{ code: grpc.status.UNAVAILABLE, details: "shutting down" }, "server closed the stream: UNAVAILABLE (shutting down)"],
    [{ code: grpc.status.UNAUTHENTICATED, details: "INVALID_TOKEN: unknown token" }, "server closed the stream: UNAUTHENTICATED (INVALID_TOKEN: unknown token)"],
    [{ code: grpc.status.RESOURCE_EXHAUSTED, details: "" }, "server closed the stream: RESOURCE_EXHAUSTED"],
    [{ code: grpc.status.OK, details: "" }, "the server ended the stream (127.0.0.1:50051)"],
  ];
  for (const [st, want] of cases) assert.equal(describeStatus(st, addr), want);
});
