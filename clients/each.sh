#!/usr/bin/env bash
# Runs one step for every client language: build, test, generate or check (generated code).
#
#   clients/each.sh build|test|generate|check [LANG...]
#
# A language whose toolchain is missing is skipped with a line saying so; with CI=true a missing
# toolchain is a failure instead. Rust and Java generate their code inside every build (build.rs,
# protobuf-maven-plugin); for Rust, generate/check keep the crate's copy of proto/ current.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
step="${1:-}"; shift || true
langs=("$@"); [ ${#langs[@]} -eq 0 ] && langs=(go typescript rust java)
case "$step" in build|test|generate|check) ;; *) echo "usage: $0 build|test|generate|check [LANG...]" >&2; exit 2;; esac

tools_of() { case "$1" in go) echo go;; typescript) echo "node npm";; rust) echo cargo;; java) echo "java mvn";; esac; }

run() { # lang, then the command, run in the language folder
  local lang=$1; shift
  echo "== $lang: $*"
  (cd "$here/$lang" && "$@") || { echo "FAILED: $lang: $*" >&2; exit 1; }
}

sync_rust_proto() { # write: copy proto/uno/v1/*.proto into the crate; check: fail if they differ
  local src="$here/../proto/uno/v1" dst="$here/rust/proto/uno/v1"
  if [ "$1" = write ]; then
    echo "== rust: copy proto/uno/v1 into clients/rust/proto/uno/v1"
    rm -rf "$dst" && mkdir -p "$dst" && cp "$src"/*.proto "$dst"/ || exit 1
  else
    echo "== rust: clients/rust/proto/uno/v1 equals proto/uno/v1"
    diff -r "$src" "$dst" >&2 || {
      echo "FAILED: rust: the crate's copy of the protocol is stale; run \`make proto\`" >&2; exit 1; }
  fi
}

skipped=()
for lang in "${langs[@]}"; do
  missing=()
  for t in $(tools_of "$lang"); do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "${CI:-}" = "true" ]; then
      echo "FAILED: $lang: toolchain not found (${missing[*]}); CI=true makes this a failure" >&2
      exit 1
    fi
    skipped+=("$lang (no ${missing[*]})")
    continue
  fi
  case "$lang:$step" in
    go:build) run go go build -o bin/ ./cmd/... ;;
    go:test) run go go vet ./... && run go go test ./... ;;
    go:generate) run go scripts/genproto.sh ;;
    go:check) run go scripts/genproto.sh --check ;;
    # npm ci runs the package's `prepare` script, which builds dist/ (src and tests).
    typescript:build) run typescript npm ci --no-audit --no-fund --loglevel=error ;;
    typescript:test) run typescript npm ci --no-audit --no-fund --loglevel=error && run typescript npm test ;;
    typescript:generate) run typescript npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && run typescript npm run generate ;;
    typescript:check) run typescript npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && run typescript npm run check-generated ;;
    rust:build) run rust cargo build --release --locked ;;
    rust:test) run rust cargo test --release --locked ;;
    java:build) run java mvn -q -B package -DskipTests ;;
    java:test) run java mvn -q -B package ;;
    # The Rust crate carries its own copy of the protocol (clients/rust/proto), so that the
    # packaged crate builds alone; its code is generated from that copy inside every build.
    rust:generate) sync_rust_proto write ;;
    rust:check) sync_rust_proto check ;;
    java:generate|java:check) echo "== $lang: code is generated inside every build" ;;
    *) echo "unknown language $lang" >&2; exit 2 ;;
  esac
done
if [ ${#skipped[@]} -gt 0 ]; then
  echo "SKIPPED client languages: ${skipped[*]}. Install the toolchain to include them."
fi
