# voxcol server image: build on Debian 12 with the -dev packages, run on a minimal Debian 12 with
# only the runtime libraries, the server and the CLI.
#
#   podman build --format docker -t voxcol .
#   podman run -d -p 50051:50051 -p 127.0.0.1:9464:9464 -v voxcol-data:/data \
#     -v ./secrets/tls:/etc/voxcol/tls:ro -v ./secrets/tokens:/etc/voxcol/tokens:ro voxcol
#
# The default command serves TLS with bearer tokens: it needs tls.crt, tls.key and ca.crt in
# /etc/voxcol/tls and a token file /etc/voxcol/tokens/tokens (see docs/security.md); no key is
# ever part of the image.

FROM docker.io/library/debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      g++ cmake ninja-build pkg-config \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev \
      librocksdb-dev libzstd-dev liblz4-dev libcivetweb-dev libssl-dev libcli11-dev libpng-dev \
      librecast-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY cmake cmake
COPY proto proto
COPY core core
COPY server server
COPY client client
COPY clients/c clients/c
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOXCOL_BUILD_TESTS=OFF -DVOXCOL_BUILD_BENCH=OFF \
 && cmake --build /build -j "$(nproc)" --target voxcol_server voxcol \
 && strip /build/server/voxcol_server /build/client/voxcol

FROM docker.io/library/debian:bookworm-slim AS runtime
# Runtime libraries only: the shared objects the two binaries link, no compiler, no -dev package.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 librocksdb7.8 libzstd1 liblz4-1 libcivetweb1 libssl3 libpng16-16 librecast1 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin voxcol \
 && mkdir -p /data && chown voxcol:voxcol /data
COPY --from=build /build/server/voxcol_server /build/client/voxcol /usr/local/bin/
USER voxcol
VOLUME ["/data"]
EXPOSE 50051
EXPOSE 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["voxcol", "--tls_ca=/etc/voxcol/tls/ca.crt", "--tls_server_name=voxcol", "--server=127.0.0.1:50051", "--timeout_ms=2000", "health"]
ENTRYPOINT ["voxcol_server"]
CMD ["--data_dir=/data", "--backup_root=/data/backups", "--listen=0.0.0.0:50051", "--metrics_listen=0.0.0.0:9464", "--tls_cert=/etc/voxcol/tls/tls.crt", "--tls_key=/etc/voxcol/tls/tls.key", "--auth_tokens=/etc/voxcol/tokens/tokens", "--audit_log=/data/audit.jsonl"]
