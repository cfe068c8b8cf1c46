//! Compiles proto/hermes/v1/*.proto with protox (pure Rust, no protoc) into tonic clients and servers,
//! and writes the encoded descriptor set used by gRPC reflection.

use std::{env, fs, path::PathBuf};

use prost::Message;

const PROTOS: &[&str] = &[
    "hermes/v1/common.proto",
    "hermes/v1/events.proto",
    "hermes/v1/daemon.proto",
    "hermes/v1/sessions.proto",
    "hermes/v1/cron.proto",
    "hermes/v1/memory.proto",
    "hermes/v1/skills.proto",
    "hermes/v1/gateway.proto",
    "hermes/v1/models.proto",
    "hermes/v1/mcp.proto",
    "hermes/v1/auth.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }
    let descriptors = protox::compile(PROTOS, ["."])?;
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    fs::write(
        out_dir.join("hermes_descriptor.bin"),
        descriptors.encode_to_vec(),
    )?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
