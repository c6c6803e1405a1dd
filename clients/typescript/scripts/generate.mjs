#!/usr/bin/env node
// Regenerates src/gen/ from ../../proto/uno/v1/*.proto with ts-proto (a local protoc plugin from
// node_modules) run by the protoc bundled in grpcio-tools. No network, no remote plugins.
//
//   node scripts/generate.mjs           write src/gen/ (npm run generate)
//   node scripts/generate.mjs --check   regenerate into a temp dir and fail if src/gen/ differs
//                                       (npm run check-generated)
//
// The Python interpreter that has grpcio-tools is $PYTHON, else ../../.venv/bin/python (the repo's
// venv, created by `make venv`), else python3 on PATH.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PKG = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REPO = resolve(PKG, "..", "..");
const PROTO_DIR = join(REPO, "proto");
const GEN_DIR = join(PKG, "src", "gen");
const PLUGIN = join(PKG, "node_modules", ".bin", process.platform === "win32" ? "protoc-gen-ts_proto.cmd" : "protoc-gen-ts_proto");

// ts-proto options; changing them changes the public types of the SDK.
const TS_PROTO_OPTS = [
  "outputServices=grpc-js", // BotServiceClient / BotServiceService for @grpc/grpc-js
  "env=node",
  "esModuleInterop=true",
  "forceLong=bigint", // int64/uint64 (event sequence, seeds, ping nonce) as bigint: exact
  "useDate=true", // google.protobuf.Timestamp as Date
  "removeEnumPrefix=true", // Color.RED rather than Color.COLOR_RED
  "annotateFilesWithVersion=false", // keep the output independent of the protoc version
  "useExactTypes=false",
].join(",");

function python() {
  if (process.env.PYTHON) return process.env.PYTHON;
  const venv = join(REPO, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

function generate(out) {
  mkdirSync(out, { recursive: true });
  if (!existsSync(PLUGIN)) {
    throw new Error(`protoc-gen-ts_proto not found at ${PLUGIN}: run \`npm ci\` first`);
  }
  const protos = readdirSync(join(PROTO_DIR, "uno", "v1"))
    .filter((f) => f.endsWith(".proto"))
    .sort()
    .map((f) => `uno/v1/${f}`);
  if (protos.length === 0) throw new Error(`no .proto files under ${PROTO_DIR}/uno/v1`);
  const py = python();
  const inc = spawnSync(py, ["-c", "import grpc_tools,os;print(os.path.dirname(grpc_tools.__file__)+'/_proto')"], {
    encoding: "utf8",
  });
  if (inc.status !== 0) {
    throw new Error(`${py} cannot import grpc_tools (set $PYTHON or run \`make venv\` at the repo root):\n${inc.stderr}`);
  }
  const args = [
    "-m",
    "grpc_tools.protoc",
    `--plugin=protoc-gen-ts_proto=${PLUGIN}`,
    `-I${PROTO_DIR}`,
    `-I${inc.stdout.trim()}`,
    `--ts_proto_out=${out}`,
    `--ts_proto_opt=${TS_PROTO_OPTS}`,
    ...protos,
  ];
  const r = spawnSync(py, args, { cwd: PROTO_DIR, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`protoc failed with status ${r.status}`);
}

function listFiles(dir, base = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? listFiles(p, base) : [relative(base, p)];
  }).sort();
}

function main() {
  const check = process.argv.includes("--check");
  if (!check) {
    rmSync(GEN_DIR, { recursive: true, force: true });
    generate(GEN_DIR);
    for (const f of listFiles(GEN_DIR)) console.log(`wrote src/gen/${f}`);
    return 0;
  }
  const tmp = mkdtempSync(join(tmpdir(), "uno-ts-gen-"));
  try {
    generate(tmp);
    const fresh = listFiles(tmp);
    const mine = listFiles(GEN_DIR);
    const stale = [...new Set([...fresh, ...mine])].filter(
      (f) => !fresh.includes(f) || !mine.includes(f) || !readFileSync(join(tmp, f)).equals(readFileSync(join(GEN_DIR, f))),
    );
    if (stale.length > 0) {
      console.error(`generated code is stale, run \`npm run generate\`: ${stale.map((f) => `src/gen/${f}`).join(", ")}`);
      return 1;
    }
    console.log("generated code is current");
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  process.exitCode = main();
} catch (err) {
  console.error(`generate: ${err instanceof Error ? err.message : err}`);
  process.exitCode = 1;
}
