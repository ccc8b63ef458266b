//! The wire contract between the fleetbench coordinator and its agents: generated gRPC types
//! and the histogram codec both sides share. No logic beyond that lives here.

pub mod histogram;

/// Generated messages and service stubs of `fleetbench.v1`.
// Start and OltpSpec are large next to their sibling variants; they are sent once per run.
#[allow(clippy::large_enum_variant)]
pub mod v1 {
    tonic::include_proto!("fleetbench.v1");
}

/// Version of the contract. Coordinator and agent refuse to work with a different one.
pub const PROTOCOL_VERSION: u32 = 12;
