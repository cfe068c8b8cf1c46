//! The `hermes.v1` gRPC API (generated from `proto/hermes/v1/*.proto`) and the client side of the
//! hermesd socket: where a daemon lives ([`place`]) and how to reach it ([`client`]).

pub mod client;
pub mod commands;
pub mod env;
pub mod events;
pub mod mcp;
pub mod place;
pub mod yaml_edit;

/// Generated protobuf messages, clients and servers.
#[allow(clippy::all, missing_docs)]
pub mod hermes {
    pub mod v1 {
        tonic::include_proto!("hermes.v1");
    }
}

pub use hermes::v1 as pb;

/// Version of the wire protocol. Bump on every change to the attach/event messages or RPC semantics.
pub const PROTOCOL_VERSION: u32 = 10;

/// Version of this build (all crates of the workspace share it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Encoded descriptor set of every hermes.v1 file and its imports, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/hermes_descriptor.bin"));

/// Names of the hermes.v1 services, as served.
pub const SERVICE_NAMES: &[&str] = &[
    "hermes.v1.Daemon",
    "hermes.v1.Sessions",
    "hermes.v1.Cron",
    "hermes.v1.Memory",
    "hermes.v1.Skills",
    "hermes.v1.Gateway",
    "hermes.v1.Models",
    "hermes.v1.Auth",
];
