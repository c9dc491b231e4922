// voxcol_server: owns one voxel world and serves edits and collision queries over gRPC.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "core/query/query_types.h"
#include "core/voxel/change_log.h"
#include "core/voxel/edit_batch.h"
#include "core/worldgen/cave_generator.h"
#include "server/app/body_flags.h"
#include "server/app/cpu_quota.h"
#include "server/app/listener.h"
#include "server/app/log_flags.h"
#include "server/app/nav_flags.h"
#include "server/app/process_tuning.h"
#include "server/app/store_flags.h"
#include "server/replica/replica.h"
#include "server/rpc/admin_service.h"
#include "server/rpc/decode_errors.h"
#include "server/rpc/edit_service.h"
#include "server/rpc/health_service.h"
#include "server/rpc/query_service.h"
#include "server/rpc/world_service.h"
#include "server/security/auth_setup.h"
#include "server/security/tls.h"
#include "server/session/body_service.h"
#include "server/stream/async_stream.h"
#include "server/telemetry/log.h"
#include "server/telemetry/process_metrics.h"
#include "server/telemetry/request_log.h"
#include "server/telemetry/rpc_metrics.h"
#include "server/telemetry/server_metrics.h"
#include "server/world/data_dir.h"
#include "server/world/world_registry.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "gRPC listen address host:port (port 0 picks a free port); a non-loopback address "
          "needs TLS and tokens or --insecure (see the security flags, docs/security.md)");
ABSL_FLAG(std::string, data_dir, "./data", "Directory holding the world (created if missing)");
ABSL_FLAG(uint64_t, seed, 1, "Cave generator seed for a new world");
ABSL_FLAG(std::string, world_size, "512,192,512",
          "World size in voxels X,Y,Z for a new world (multiples of 8), centred on the origin");
ABSL_FLAG(float, voxel_size, 1.0f, "World units per voxel edge for a new world");
ABSL_FLAG(float, max_edit_radius, 64.0f, "Largest edit radius accepted, world units");
ABSL_FLAG(float, max_edit_extent, 128.0f,
          "Longest block/wedge edge or cylinder height accepted, world units");
ABSL_FLAG(int64_t, max_region_voxels, 4194304,
          "Most voxels per region of ReadVoxels, WriteVoxels, FillRegion, ReplaceMaterial, Clear");
ABSL_FLAG(int32_t, max_batch_primitives, 256, "Most primitives in one ApplyEdits batch");
ABSL_FLAG(uint64_t, idempotency_keys, 100000,
          "ApplyEdits idempotency keys remembered (the newest; stored with their edits, so retries "
          "after a restart are recognised)");
ABSL_FLAG(uint64_t, change_log_versions, 4096,
          "Change feed retention window: newest versions kept for Subscribe (stored with the "
          "edits, so the window survives restarts)");
ABSL_FLAG(uint64_t, change_log_chunks, 65536,
          "Change feed retention budget: changed chunks kept; shrinks the window");
ABSL_FLAG(uint64_t, change_log_mb, 64,
          "Change feed retention budget, MiB of changed voxels (2 bytes each, plus 40 bytes per "
          "changed chunk), kept in memory and in the store; shrinks the window");
ABSL_FLAG(uint64_t, subscribe_buffer, 1024,
          "Responses prepared but not yet sent per Subscribe stream; a stream that has caught up "
          "and falls further behind is ended with RESOURCE_EXHAUSTED");
ABSL_FLAG(uint64_t, subscribe_buffer_mb, 4,
          "Serialized MiB of responses prepared but not yet sent per Subscribe stream (the first "
          "always fits); bounds the buffer of include_voxels streams");
ABSL_FLAG(float, max_ray_distance, 4096.0f, "Longest ray accepted, world units");
ABSL_FLAG(int, query_threads, 0,
          "Threads running query batches; 0 = one per usable CPU (the affinity mask, capped by a "
          "container's cgroup CPU quota)");
ABSL_FLAG(int, rpc_threads, 0,
          "Threads that poll the sockets and run the streams' completions, all blocked on one "
          "completion queue; 0 = one per usable CPU, at least 2");
ABSL_FLAG(
    int, max_queued_batches, 256,
    "Query batches waiting for a thread beyond which new batches are shed with RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_batch_queries, 4096, "Most queries in one batch");
ABSL_FLAG(int, max_in_flight_batches_per_stream, 8,
          "Batches one stream may have running; more wait (backpressure)");
ABSL_FLAG(uint64_t, max_stream_pending_mb, 16,
          "Serialized responses, MiB, one Query stream may have queued for a client that does not "
          "read them (the first always fits); past it the stream ends with RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_in_flight_edit_batches_per_stream, 32,
          "Edit batches one EditStream may have read and not yet answered; at the bound the "
          "server stops reading that stream (backpressure)");
ABSL_FLAG(int, edit_stream_threads, 16,
          "Threads applying EditStream batches; each stream with pending batches uses one, so "
          "this bounds how many streams commit at once (they share group commits)");
ABSL_FLAG(int, max_streams_per_client, 256,
          "Open Query streams one client host may hold; more get RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_connections, 10000,
          "Client connections held open at most (lowered to 3/4 of the file limit); more are "
          "closed at once (voxcol_connections_refused_total)");
ABSL_FLAG(int, max_min_version_wait_ms, 1000,
          "Longest wait for a batch's min_version to be reached");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "HTTP address serving Prometheus metrics at /metrics; empty disables");
ABSL_FLAG(
    float, max_shape_extent, 64.0f,
    "Largest query shape accepted, world units: the half extent of the bounding box of a "
    "Sweep, Overlap or Contacts shape, a Probe's half extent or radius, and a Contacts margin");
ABSL_FLAG(float, max_sweep_distance, 4096.0f, "Longest Sweep distance accepted, world units");
ABSL_FLAG(uint32_t, max_sweep_hits, 1024,
          "Most hits one Sweep with HIT_COLLECTION_ALL returns (nearest kept)");
ABSL_FLAG(uint32_t, max_characters_per_request, 1024,
          "Most character moves in one MoveCharacters request (or batch query)");
ABSL_FLAG(uint32_t, max_probe_voxels, 65536, "Most touched voxels one Probe may return");
ABSL_FLAG(uint32_t, max_query_triangles, voxcol::kDefaultMaxQueryTriangles,
          "Work budget of one Sweep, Overlap or Contacts: most terrain triangles it may gather; "
          "past it the query fails with RESOURCE_EXHAUSTED. 0: no limit");
ABSL_FLAG(uint64_t, chunk_collision_cache_mb, 256,
          "Byte budget of the lazily built chunk meshes + kD-trees of smooth queries, MiB");
ABSL_FLAG(std::string, backup_root, "./backups",
          "Directory that CreateCheckpoint writes into (created when needed); a checkpoint's dir "
          "names a new directory inside it");
ABSL_FLAG(std::string, port_file, "",
          "If set, write the bound port number to this file once serving");
ABSL_FLAG(uint64_t, store_cache_mb, 256,
          "Budget for decoded chunks kept in memory, MiB (evicted chunks reload from the store or "
          "regenerate on the next touch); 0 = unlimited");
ABSL_FLAG(uint64_t, max_snapshot_history_mb, 256,
          "Budget for old chunk versions kept for queries that began before an edit, MiB; past "
          "it the oldest running batches fail with ABORTED; 0 = unlimited");
// Lag compensation (issue 19): how far back queries may read (QueryService ReadAt, ValidateHit).
ABSL_FLAG(int64_t, history_window_ms, 1000,
          "Keep every world version that was current within this many milliseconds readable by "
          "queries naming read_at (lag compensation); 0 = none by time");
ABSL_FLAG(uint64_t, history_versions, 64,
          "Keep at least the last this many world versions readable by read_at; 0 = none by count");
ABSL_FLAG(uint64_t, history_retention_mb, 64,
          "Bound on the old chunk versions kept for read_at, MiB; past it the oldest versions are "
          "dropped first (read_at them is OUT_OF_RANGE); 0 = unlimited");
ABSL_FLAG(uint64_t, store_block_cache_mb, 32, "RocksDB block cache for stored chunk records, MiB");
ABSL_FLAG(bool, store_sync, true,
          "Sync the write-ahead log before acknowledging an edit; false risks losing acknowledged "
          "edits on power loss (never on a process crash)");
ABSL_FLAG(uint64_t, max_worlds, 128,
          "Most worlds CreateWorld may add besides the default one; each gets this share of the "
          "--store_cache_mb and --chunk_collision_cache_mb budgets (at least 1 MiB each)");
ABSL_FLAG(double, shutdown_grace_seconds, 5.0,
          "On SIGINT/SIGTERM, time allowed for in-flight calls");

namespace voxcol::server {
namespace {

// Edit streams with pending batches waiting for an edit thread; past it their batches are answered
// RESOURCE_EXHAUSTED.
constexpr size_t kMaxQueuedEditStreams = 4096;

// Everything the flags configure, checked before anything is opened.
struct ServerConfig {
  std::string data_dir;
  WorldConfig new_world;  // used only when the data directory holds no world yet
  store::StoreOptions store;
  uint64_t resident_chunk_bytes = 0;    // 0 = unlimited
  uint64_t snapshot_history_bytes = 0;  // 0 = unlimited
  ChangeLogConfig change_log;
  SubscribeLimits subscribe;
  uint64_t idempotency_keys = 0;
  ServiceLimits limits;
  NavOptions nav;
  BodyLimits bodies;
  StreamLimits stream_limits;
  int query_threads = 1;
  int rpc_threads = 2;
  int edit_stream_threads = 1;
  int max_in_flight_edit_batches = 1;
  size_t max_queued_batches = 0;
  size_t chunk_collision_cache_bytes = 0;
  std::string metrics_listen;  // empty disables
  std::string listen;
  std::string port_file;  // empty: none
  double shutdown_grace_seconds = 0;
};

absl::StatusOr<Int3> ParseSize(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  Int3 size;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &size.x) ||
      !absl::SimpleAtoi(parts[1], &size.y) || !absl::SimpleAtoi(parts[2], &size.z)) {
    return absl::InvalidArgumentError("--world_size must be X,Y,Z in voxels, e.g. 512,192,512");
  }
  return size;
}

absl::StatusOr<WorldConfig> NewWorldFromFlags() {
  absl::StatusOr<Int3> size = ParseSize(absl::GetFlag(FLAGS_world_size));
  if (!size.ok()) return size.status();
  WorldConfig world{*size, absl::GetFlag(FLAGS_voxel_size), absl::GetFlag(FLAGS_seed)};
  if (absl::Status s = ValidateWorldConfig(world); !s.ok()) return s;
  return world;
}

absl::StatusOr<ServiceLimits> LimitsFromFlags() {
  if (absl::GetFlag(FLAGS_max_region_voxels) <= 0 ||
      absl::GetFlag(FLAGS_max_batch_primitives) <= 0) {
    return absl::InvalidArgumentError("--max_region_voxels and --max_batch_primitives must be > 0");
  }
  ServiceLimits limits;
  limits.edit.max_radius = absl::GetFlag(FLAGS_max_edit_radius);
  limits.edit.max_extent = absl::GetFlag(FLAGS_max_edit_extent);
  limits.edit.max_region_voxels = absl::GetFlag(FLAGS_max_region_voxels);
  limits.edit.max_batch_primitives = absl::GetFlag(FLAGS_max_batch_primitives);
  limits.query.max_ray_distance = absl::GetFlag(FLAGS_max_ray_distance);
  limits.query.max_shape_extent = absl::GetFlag(FLAGS_max_shape_extent);
  limits.query.max_probe_voxels = absl::GetFlag(FLAGS_max_probe_voxels);
  limits.query.max_sweep_distance = absl::GetFlag(FLAGS_max_sweep_distance);
  limits.query.max_sweep_hits = std::max(1u, absl::GetFlag(FLAGS_max_sweep_hits));
  limits.query.max_query_triangles = absl::GetFlag(FLAGS_max_query_triangles);
  limits.max_characters_per_request = absl::GetFlag(FLAGS_max_characters_per_request);
  return limits;
}

StreamLimits StreamLimitsFromFlags() {
  StreamLimits stream_limits;
  stream_limits.batch.max_queries = absl::GetFlag(FLAGS_max_batch_queries);
  stream_limits.batch.max_min_version_wait =
      absl::Milliseconds(absl::GetFlag(FLAGS_max_min_version_wait_ms));
  stream_limits.max_in_flight_batches =
      std::max(1, absl::GetFlag(FLAGS_max_in_flight_batches_per_stream));
  stream_limits.max_streams_per_client = std::max(1, absl::GetFlag(FLAGS_max_streams_per_client));
  stream_limits.max_pending_bytes = size_t(absl::GetFlag(FLAGS_max_stream_pending_mb)) << 20;
  return stream_limits;
}

// Reads and checks every flag; the error names the flag.
absl::StatusOr<ServerConfig> ConfigFromFlags() {
  ServerConfig config;
  absl::StatusOr<WorldConfig> world = NewWorldFromFlags();
  if (!world.ok()) return world.status();
  config.new_world = *world;
  absl::StatusOr<ServiceLimits> limits = LimitsFromFlags();
  if (!limits.ok()) return limits.status();
  config.limits = *limits;
  if (absl::Status s = NavFromFlags(&config.nav, &config.limits); !s.ok()) return s;
  if (absl::Status s = BodyLimitsFromFlags(&config.bodies); !s.ok()) return s;
  config.stream_limits = StreamLimitsFromFlags();
  config.data_dir = absl::GetFlag(FLAGS_data_dir);
  config.store.sync = absl::GetFlag(FLAGS_store_sync);
  config.store.block_cache_bytes = absl::GetFlag(FLAGS_store_block_cache_mb) << 20;
  config.store.idempotency_keys = absl::GetFlag(FLAGS_idempotency_keys);
  ApplyStoreFaultFlags(&config.store);
  config.resident_chunk_bytes = absl::GetFlag(FLAGS_store_cache_mb) << 20;
  config.snapshot_history_bytes = absl::GetFlag(FLAGS_max_snapshot_history_mb) << 20;
  config.change_log = {absl::GetFlag(FLAGS_change_log_versions),
                       absl::GetFlag(FLAGS_change_log_chunks),
                       absl::GetFlag(FLAGS_change_log_mb) << 20};
  config.store.change_log = config.change_log;  // the store trims its copy by the same rule
  config.subscribe.buffer_responses = std::max<uint64_t>(1, absl::GetFlag(FLAGS_subscribe_buffer));
  config.subscribe.buffer_bytes = absl::GetFlag(FLAGS_subscribe_buffer_mb) << 20;
  config.idempotency_keys = absl::GetFlag(FLAGS_idempotency_keys);
  config.query_threads = absl::GetFlag(FLAGS_query_threads);
  if (config.query_threads <= 0) {
    config.query_threads = UsableCpus();
  }
  config.rpc_threads = absl::GetFlag(FLAGS_rpc_threads);
  if (config.rpc_threads <= 0) config.rpc_threads = std::max(2, UsableCpus());
  config.edit_stream_threads = std::max(1, absl::GetFlag(FLAGS_edit_stream_threads));
  config.max_in_flight_edit_batches =
      std::max(1, absl::GetFlag(FLAGS_max_in_flight_edit_batches_per_stream));
  config.max_queued_batches = size_t(std::max(0, absl::GetFlag(FLAGS_max_queued_batches)));
  config.chunk_collision_cache_bytes = size_t(absl::GetFlag(FLAGS_chunk_collision_cache_mb)) << 20;
  config.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  config.listen = absl::GetFlag(FLAGS_listen);
  config.port_file = absl::GetFlag(FLAGS_port_file);
  config.shutdown_grace_seconds = absl::GetFlag(FLAGS_shutdown_grace_seconds);
  return config;
}

// Blocks the shutdown signals in this thread and every thread it starts later, so that one
// thread alone receives them (with sigwait). Call before any thread exists.
sigset_t BlockShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// What every world is opened with (the registry applies it as AttachStore did for one world); a
// read replica of `primary` (non-empty) refuses client edits.
WorldRegistryOptions RegistryOptions(const ServerConfig& config, const std::string& primary) {
  WorldRegistryOptions o;
  o.data_dir = config.data_dir;
  o.new_world = config.new_world;
  o.store = config.store;
  o.resident_chunk_bytes = config.resident_chunk_bytes;
  o.snapshot_history_bytes = config.snapshot_history_bytes;
  o.history = {absl::Milliseconds(std::max<int64_t>(0, absl::GetFlag(FLAGS_history_window_ms))),
               absl::GetFlag(FLAGS_history_versions),
               size_t(absl::GetFlag(FLAGS_history_retention_mb)) << 20};
  o.change_log = config.change_log;
  o.subscribe = config.subscribe;
  o.edit = config.limits.edit;
  o.idempotency_keys = config.idempotency_keys;
  o.chunk_collision_cache_bytes = config.chunk_collision_cache_bytes;
  o.max_worlds = std::max<uint64_t>(1, absl::GetFlag(FLAGS_max_worlds));
  o.nav = config.nav;
  o.bodies = config.bodies;
  if (!primary.empty()) o.edit_refusal = ReplicaEditRefusal(primary);
  return o;
}

// Gauges and counters read when scraped; the objects must outlive the metrics HTTP server.
void RegisterStateMetrics(const World& world, const WorkerPool& query_pool,
                          const ChunkCollisionCache& cache, Metrics& registry) {
  registry.AddGauge("voxcol_world_version", "Committed edit batches",
                    [&world] { return double(world.version()); });
  registry.AddGauge("voxcol_chunks_resident", "Chunks held in memory",
                    [&world] { return double(world.resident_chunks()); });
  registry.AddGauge("voxcol_snapshot_history_bytes",
                    "Old chunk versions kept for running queries (bounded by "
                    "--max_snapshot_history_mb)",
                    [&world] { return double(world.history_stats().bytes); });
  registry.AddCounterCallback("voxcol_snapshots_expired_total",
                              "Query snapshots expired because the history outgrew its budget",
                              [&world] { return double(world.history_stats().expired); });
  registry.AddGauge("voxcol_query_queue_length", "Batches waiting for a query thread",
                    [&query_pool] { return double(query_pool.queued()); });
  // The cache keeps its counters as atomics.
  auto cache_stat = [&cache](uint64_t ChunkCollisionCacheStats::*field) {
    return [&cache, field] { return double(cache.stats().*field); };
  };
  registry.AddCounterCallback("voxcol_chunk_collision_cache_hits_total",
                              "Chunk mesh+tree lookups served from the cache",
                              cache_stat(&ChunkCollisionCacheStats::hits));
  registry.AddCounterCallback("voxcol_chunk_collision_cache_misses_total",
                              "Chunk meshes+trees built (cache misses)",
                              cache_stat(&ChunkCollisionCacheStats::builds));
  registry.AddCounterCallback("voxcol_chunk_collision_cache_evictions_total",
                              "Entries evicted over the byte budget",
                              cache_stat(&ChunkCollisionCacheStats::evictions));
  registry.AddGauge("voxcol_chunk_collision_cache_bytes", "Bytes of cached meshes and trees",
                    [&cache] { return double(cache.stats().bytes); });
}

// The change feed's window and the Subscribe streams, read when scraped.
void RegisterFeedMetrics(const ChangeLog& change_log, const SubscriptionHub& subscriptions,
                         Metrics& registry) {
  registry.AddGauge("voxcol_change_feed_oldest_resumable_version",
                    "Oldest from_version Subscribe accepts (the retention window's start)",
                    [&change_log] { return double(change_log.oldest_resumable_version()); });
  registry.AddGauge("voxcol_change_feed_bytes", "Bytes of change-feed entries retained",
                    [&change_log] { return double(change_log.retained_bytes()); });
  registry.AddGauge("voxcol_subscribers", "Open Subscribe streams",
                    [&subscriptions] { return double(subscriptions.stats().open); });
  registry.AddCounterCallback(
      "voxcol_subscribers_fell_behind_total",
      "Subscribe streams ended with RESOURCE_EXHAUSTED (buffer full or out of the window)",
      [&subscriptions] { return double(subscriptions.stats().ended_slow); });
}

// Serves /metrics on `address` unless it is empty; false if it cannot be bound.
bool StartMetricsHttp(const std::string& address, const Metrics& registry,
                      MetricsHttpServer* http) {
  if (address.empty()) return true;
  if (!http->Start(&registry, address)) {
    LogError("event=metrics_listen_failed address=%s", address);
    return false;
  }
  LogInfo("event=metrics_serving address=%s port=%d", address, http->port());
  return true;
}

// The services this server registers, by full name: each has its own health status, and the
// RPC metrics list their methods.
std::vector<std::string> ServiceNames() {
  return {v1::WorldService::service_full_name(),   v1::QueryService::service_full_name(),
          v1::EditService::service_full_name(),    v1::AdminService::service_full_name(),
          v1::ReplicaService::service_full_name(), grpc::health::v1::Health::service_full_name(),
          v1::BodyService::service_full_name()};
}

// Builds and starts the gRPC server with reflection, the request log and the RPC metrics; null
// (logged) if the address cannot be bound. The services (health among them) and `rpc_metrics`
// must outlive the server.
std::unique_ptr<grpc::Server> StartGrpcServer(const ServerConfig& config,
                                              const std::vector<grpc::Service*>& services,
                                              RpcMetrics* rpc_metrics, ServerSecurity& security,
                                              Listener& listener,
                                              std::unique_ptr<RpcThreads>* rpc_threads, int* port) {
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  absl::StatusOr<int> bound = listener.Bind(config.listen, security.allow_reuseport,
                                            security.transport.credentials, builder);
  if (!bound.ok()) {
    LogError("event=listen_failed address=%s message=%s", config.listen,
             "cannot bind the gRPC port: " + std::string(bound.status().message()) +
                 " (is another server on this port?)");
    return nullptr;
  }
  *port = *bound;
  listener.RegisterMetrics(GetServerMetrics().registry);
  // A full WriteVoxels/ApplyEdits region is two bytes per voxel plus framing.
  const int64_t max_message = 2 * config.limits.edit.max_region_voxels + (1 << 20);
  // Larger messages get RESOURCE_EXHAUSTED from gRPC before any handler runs.
  const int max_message_size = int(std::min<int64_t>(max_message, std::numeric_limits<int>::max()));
  builder.SetMaxReceiveMessageSize(max_message_size);
  builder.SetMaxSendMessageSize(max_message_size);
  InterceptorFactories interceptors;
  // First, so that the metrics and logs after it count the INVALID_ARGUMENT it sends.
  interceptors.push_back(std::make_unique<DecodeErrorInterceptorFactory>());
  interceptors.push_back(std::make_unique<RpcMetricsInterceptorFactory>(rpc_metrics));
  ApplySecurity(security, &interceptors);  // credentials first
  interceptors.push_back(std::make_unique<RequestLogInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  for (grpc::Service* service : services) builder.RegisterService(service);
  *rpc_threads = std::make_unique<RpcThreads>(builder, config.rpc_threads);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    LogError("event=start_failed address=%s", config.listen);
    return nullptr;
  }
  listener.Start();
  LogInfo("event=serving address=%s port=%d store_sync=%s max_connections=%d", config.listen, *port,
          config.store.sync ? "true" : "false", listener.limit());
  return server;
}

// Writes the bound port to `path` (if set) atomically: a reader never sees a partial file.
void WritePortFile(const std::string& path, int port) {
  if (path.empty()) return;
  std::string tmp = path + ".tmp";
  std::ofstream(tmp) << port << "\n";
  std::rename(tmp.c_str(), path.c_str());
}

// Serves until SIGINT or SIGTERM, then drains: health turns NOT_SERVING for balancers,
// Subscribe streams end at once, and in-flight calls get the grace period.
void ServeUntilSignal(const sigset_t& signals, const ServerConfig& config, WorldRegistry& worlds,
                      HealthService& health, Listener& listener, grpc::Server& server,
                      RpcThreads& rpc_threads) {
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    LogInfo("event=shutdown signal=%d", sig);
    health.Shutdown();    // watchers hear NOT_SERVING and their streams end
    worlds.CloseFeeds();  // instead of holding the grace period
    listener.Stop();      // no new connections, as gRPC did when it had the port
    auto grace = std::chrono::duration<double>(config.shutdown_grace_seconds);
    server.Shutdown(std::chrono::system_clock::now() +
                    std::chrono::duration_cast<std::chrono::system_clock::duration>(grace));
  });
  server.Wait();
  rpc_threads.Stop();  // after the server: the calls still open end on these threads
  signal_thread.join();
}

// Read replica mode (issue 22, server/replica/replica.h), one place: a new replica data directory
// takes the primary's world (waiting for the primary); a replica's batcher refuses client edits.
bool AdoptPrimaryWorld(const ReplicaOptions& replica, ServerConfig* config) {
  if (replica.primary.empty() || std::filesystem::exists(DataDirStorePath(config->data_dir))) {
    return true;  // a primary, or a replica's own world (the follower checks it against the
                  // primary)
  }
  absl::StatusOr<WorldConfig> world =
      FetchPrimaryWorld(replica, CaveGenerator::kVersion, absl::InfiniteFuture());
  if (!world.ok()) LogError("event=replica_failed message=%s", world.status().message());
  if (world.ok()) config->new_world = *world;
  return world.ok();
}
// Every world of a replica (default, reopened and followed ones) refuses client edits through the
// registry's edit_refusal; the set follows all of the primary's worlds.
std::unique_ptr<ReplicaSet> MakeReplica(const ReplicaOptions& replica, WorldRegistry& worlds,
                                        Metrics& registry) {
  if (replica.primary.empty()) return nullptr;
  auto followers = std::make_unique<ReplicaSet>(worlds, replica, CaveGenerator::kVersion);
  followers->RegisterMetrics(registry);
  LogInfo("event=replica_of primary=%s version=%d", replica.primary,
          worlds.default_world().world->version());
  return followers;
}

// Whether the default world's store syncs before each ack (the shipped default, --store_sync).
void RegisterStoreMetrics(const WorldParts& world, Metrics& registry) {
  registry.AddGauge("voxcol_store_sync",
                    "1 when an edit is acknowledged only after its write-ahead log is synced "
                    "(--store_sync), 0 when a power loss can lose acknowledged edits",
                    [&world] { return world.store->syncs_writes() ? 1.0 : 0.0; });
}

// The steps in order; objects are declared so that each outlives everything that uses it
// (reverse destruction: the gRPC server first, the world last).
int RunServer() {
  const sigset_t signals = BlockShutdownSignals();
  absl::StatusOr<ServerConfig> config = ConfigFromFlags();
  if (!config.ok()) {
    LogError("event=bad_flag message=%s", config.status().message());
    return 2;
  }
  if (!RestoreIfAsked(config->data_dir)) return 2;
  absl::StatusOr<std::unique_ptr<ServerSecurity>> security = SecurityFromFlags(config->listen);
  if (!security.ok()) {
    LogError("event=bad_flag message=%s", security.status().message());
    return 2;
  }
  Listener listener(absl::GetFlag(FLAGS_max_connections));  // within the file limit main() raised
  absl::StatusOr<ReplicaOptions> replica = ReplicaOptionsFromFlags();
  if (!replica.ok()) LogError("event=bad_flag message=%s", replica.status().message());
  if (!replica.ok()) return 2;
  if (!AdoptPrimaryWorld(*replica, &*config)) return 1;
  // Many worlds (issue 22): the default one in <data_dir>, the others in <data_dir>/worlds/<id>.
  WorldRegistry worlds(RegistryOptions(*config, replica->primary));
  if (absl::Status s = worlds.Open(); !s.ok()) {
    LogError("event=open_failed data_dir=%s message=%s", config->data_dir, s.message());
    return 1;
  }
  const WorldParts& world = worlds.default_world();
  // Runs the batches of every Query stream; declared before the server, which it outlives.
  WorkerPool query_pool(config->query_threads, config->max_queued_batches);
  // Applies EditStream batches (one task per stream with work); queued tasks wait for a thread.
  WorkerPool edit_stream_pool(config->edit_stream_threads, kMaxQueuedEditStreams);
  EditStreams edit_streams(*world.batcher, &edit_stream_pool, config->max_in_flight_edit_batches);
  edit_streams.SetResolver(&worlds);

  Metrics& registry = GetServerMetrics().registry;
  RegisterProcessMetrics(registry);
  RegisterDiskMetrics(config->data_dir, config->store.min_free_bytes, registry);
  RpcMetrics rpc_metrics(registry, ServiceNames());
  (*security)->gate->SetRpcMetrics(&rpc_metrics);  // refused calls count in the same series
  RegisterStateMetrics(*world.world, query_pool, *world.cache, registry);
  RegisterStoreMetrics(world, registry);
  RegisterFeedMetrics(worlds.default_change_log(), *world.subscriptions, registry);
  RegisterWorldMetrics(worlds, registry);
  std::unique_ptr<ReplicaSet> follower = MakeReplica(*replica, worlds, registry);
  MetricsHttpServer metrics_http;
  if (!StartMetricsHttp(config->metrics_listen, registry, &metrics_http)) return 1;
  // Edits are audited when they commit (the services call it), the rest by an interceptor.
  const EditAudit edit_audit((*security)->audit.get(), (*security)->tokens.get());
  edit_streams.SetEditAudit(&edit_audit);
  WorldServiceImpl world_service(worlds, &worlds);
  QueryServiceImpl query_service(worlds, config->limits, config->stream_limits, &query_pool);
  query_service.SetEditAudit(&edit_audit);
  EditServiceImpl edit_service(worlds, config->limits, &edit_streams);
  edit_service.SetEditAudit(&edit_audit);
  AdminServiceImpl admin_service(worlds, absl::GetFlag(FLAGS_backup_root));
  if (follower) admin_service.RefuseImports(ReplicaEditRefusal(replica->primary));
  if (follower) world_service.RefuseChanges(ReplicaWorldRefusal(replica->primary));
  ReplicaServiceImpl replica_service(follower.get(), replica->primary);
  BodyServiceImpl body_service(worlds);  // a replica keeps its own bodies (docs/bodies.md)
  HealthService health;
  for (const std::string& name : ServiceNames()) health.SetServing(name, true);
  int port = 0;
  std::unique_ptr<RpcThreads> rpc_threads;  // destroyed after the server
  std::unique_ptr<grpc::Server> server =
      StartGrpcServer(*config,
                      {&world_service, &query_service, &edit_service, &admin_service,
                       &replica_service, &body_service, &health},
                      &rpc_metrics, **security, listener, &rpc_threads, &port);
  if (!server) return 1;
  query_service.AcceptStreams(*rpc_threads);
  edit_service.AcceptStreams(*rpc_threads);
  health.AcceptStreams(*rpc_threads);
  rpc_threads->Start();
  WritePortFile(config->port_file, port);
  if (follower) follower->Start();

  ServeUntilSignal(signals, *config, worlds, health, listener, *server, *rpc_threads);
  if (follower) follower->Stop();
  LogInfo("event=stopped version=%d", world.world->version());
  return 0;
}

}  // namespace
}  // namespace voxcol::server

int main(int argc, char** argv) {
  voxcol::server::TuneProcessForServing();  // first, before any thread starts
  absl::SetProgramUsageMessage("voxcol_server: voxel terrain collision and query service");
  if (voxcol::server::AnswerHelpOrVersion(argc, argv, "voxcol_server", "server/")) return 0;
  absl::ParseCommandLine(argc, argv);
  if (absl::Status logs = voxcol::server::ApplyLogFlags(); !logs.ok()) {
    std::cerr << "voxcol_server: " << logs.message() << "\n";
    return 2;
  }
  voxcol::server::RaiseFileLimit();  // before any file opens: a connection flood must leave room
  return voxcol::server::RunServer();
}
