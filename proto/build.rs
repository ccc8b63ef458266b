//! Generates the gRPC contract. Uses the vendored protoc unless PROTOC is set, so a fresh
//! machine needs no system protoc.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("PROTOC").is_none() {
        let protoc = protoc_bin_vendored::protoc_bin_path()?;
        // SAFETY: build scripts are single-threaded; nothing else reads the environment here.
        unsafe { std::env::set_var("PROTOC", protoc) };
    }
    println!("cargo:rerun-if-changed=proto/fleetbench.proto");
    tonic_prost_build::configure().compile_protos(&["proto/fleetbench.proto"], &["proto"])?;
    Ok(())
}
