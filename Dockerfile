# The image deploy/kubernetes/ names (fleetbench:0.1.0): both binaries, fleetbench-agent
# and fleetbench, on Debian slim, run as nobody.
#   docker build -t fleetbench:0.1.0 .
# Build stage: Rust's image (protoc is vendored, TLS is rustls: no system OpenSSL needed).
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bins \
 && install -d /out \
 && install -m 0755 target/release/fleetbench target/release/fleetbench-agent /out/

FROM debian:bookworm-slim
COPY --from=build /out/ /usr/local/bin/
# The agent's fileio work directory when none is mounted (Kubernetes mounts one at /work).
RUN install -d -o 65534 -g 65534 -m 0700 /work
USER 65534:65534
WORKDIR /work
EXPOSE 7600
ENTRYPOINT ["fleetbench-agent"]
CMD ["--listen", "0.0.0.0:7600", "--work-dir", "/work"]
