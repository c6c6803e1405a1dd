#!/usr/bin/env bash
# Regenerates the Go code for proto/uno/v1 into gen/uno/v1 (package unov1).
#
#   scripts/genproto.sh           regenerate gen/ in place
#   scripts/genproto.sh --check   regenerate into a temp dir and diff against gen/ (exit 1 if stale)
#
# Everything runs locally: protoc is the one bundled with grpcio-tools in the repository's .venv
# (override with PROTOC="..."), the plugins are `go install`ed at pinned versions into .bin/
# (gitignored) from the Go module proxy. protoc-gen-go is pinned to the google.golang.org/protobuf
# version in go.mod so generated code and runtime always match. The import path comes from the
# `option go_package` line of every .proto file, which must name this module's gen/uno/v1.
set -euo pipefail

GRPC_PLUGIN_VERSION=v1.6.1 # google.golang.org/grpc/cmd/protoc-gen-go-grpc

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PROTO_DIR="$ROOT/proto"
MODULE="$(cd "$HERE" && go list -m)"
GO_PKG="$MODULE/gen/uno/v1;unov1"
BIN="$HERE/.bin"

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

PB_VERSION="$(cd "$HERE" && go list -m -f '{{.Version}}' google.golang.org/protobuf)"

# install_plugin NAME PACKAGE VERSION: go install into .bin unless the pinned version is there.
install_plugin() {
  local name=$1 pkg=$2 version=$3 stamp="$BIN/.$1.version"
  if [[ -x "$BIN/$name" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
    return
  fi
  echo "installing $pkg@$version into $BIN" >&2
  mkdir -p "$BIN"
  GOBIN="$BIN" GOFLAGS=-mod=mod go install "$pkg@$version"
  echo "$version" >"$stamp"
}
install_plugin protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go "$PB_VERSION"
install_plugin protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc "$GRPC_PLUGIN_VERSION"

if [[ -n "${PROTOC:-}" ]]; then
  read -r -a protoc <<<"$PROTOC"
else
  protoc=("$ROOT/.venv/bin/python" -m grpc_tools.protoc)
  wkt="$("$ROOT/.venv/bin/python" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
  protoc+=("-I$wkt")
fi

files=()
for f in "$PROTO_DIR"/uno/v1/*.proto; do
  rel="${f#"$PROTO_DIR"/}"
  files+=("$rel")
  if ! grep -qxF "option go_package = \"$GO_PKG\";" "$f"; then
    echo "$rel: needs the line: option go_package = \"$GO_PKG\";" >&2
    exit 1
  fi
done

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

(cd "$PROTO_DIR" && "${protoc[@]}" -I. \
  --plugin=protoc-gen-go="$BIN/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$BIN/protoc-gen-go-grpc" \
  --go_out="$out" --go_opt=module="$MODULE" \
  --go-grpc_out="$out" --go-grpc_opt=module="$MODULE" \
  "${files[@]}")

if ((check)); then
  if diff -ru "$HERE/gen" "$out/gen"; then
    echo "gen/ is up to date"
  else
    echo "gen/ is stale: run clients/go/scripts/genproto.sh" >&2
    exit 1
  fi
else
  rm -rf "$HERE/gen"
  cp -r "$out/gen" "$HERE/gen"
  echo "generated $(cd "$HERE" && ls gen/uno/v1 | tr '\n' ' ')"
fi
