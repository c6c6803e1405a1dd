//! Generates the uno.v1 messages and gRPC client/server stubs from the crate's own copy of the
//! protocol, `proto/uno/v1/*.proto`, at every build (into OUT_DIR), with the protoc binary shipped
//! by the `protoc-bin-vendored` crate: no system protoc, no network, and the code cannot go stale.
//! Cargo reruns this script whenever a .proto file changes.
//!
//! The copy lives inside the crate so that the packaged crate (`cargo package`, crates.io) builds
//! on its own. It is written from the repository's `proto/` by `make proto`, and `make
//! proto-check` fails when it differs (clients/each.sh, steps generate and check).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let proto_root = manifest.join("proto");
    let protos: Vec<PathBuf> = ["cards", "game", "errors", "bot", "admin"]
        .iter()
        .map(|name| proto_root.join(format!("uno/v1/{name}.proto")))
        .collect();
    for p in &protos {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    println!("cargo:rerun-if-changed=build.rs");

    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    let includes = [proto_root, protoc_bin_vendored::include_path()?];

    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true) // used by the fake server in tests/, and by anyone testing a bot
        .build_transport(false)
        .emit_rerun_if_changed(false) // done above, per file
        .compile_with_config(config, &protos, &includes)?;
    Ok(())
}
