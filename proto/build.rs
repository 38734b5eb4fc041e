//! Compiles `hallpass.proto` with protox, a pure-Rust protobuf compiler, so a fresh machine
//! needs no system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=hallpass.proto");
    let fds = protox::compile(["hallpass.proto"], ["."])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
