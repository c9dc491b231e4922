// voxcol_server: owns one voxel world and serves edits and collision queries over gRPC.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
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
#include "core/voxel/change_log.h"
#include "core/voxel/edit_batch.h"
#include "core/worldgen/cave_generator.h"
#include "server/admin_service.h"
#include "server/data_dir.h"
#include "server/edit_service.h"
#include "server/log.h"
#include "server/query_service.h"
#include "server/request_log.h"
#include "server/server_metrics.h"
#include "server/world_service.h"

ABSL_FLAG(std::string, listen, "0.0.0.0:50051",
          "gRPC listen address host:port (port 0 picks a free port)");
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
          "Change feed retention window: newest versions kept for Subscribe");
ABSL_FLAG(uint64_t, change_log_chunks, 65536,
          "Change feed retention budget: changed chunks kept (~1 KiB each); shrinks the window");
ABSL_FLAG(float, max_ray_distance, 4096.0f, "Longest ray accepted, world units");
ABSL_FLAG(int, query_threads, 0, "Threads running query batches; 0 = one per core");
ABSL_FLAG(
    int, max_queued_batches, 256,
    "Query batches waiting for a thread beyond which new batches are shed with RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_batch_queries, 4096, "Most queries in one batch");
ABSL_FLAG(int, max_in_flight_batches_per_stream, 4,
          "Batches one stream may have running; more wait (backpressure)");
ABSL_FLAG(int, max_streams_per_client, 256,
          "Open Query streams one client host may hold; more get RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_min_version_wait_ms, 1000,
          "Longest wait for a batch's min_version to be reached");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9464",
          "HTTP address serving Prometheus metrics at /metrics; empty disables");
ABSL_FLAG(
    float, max_shape_extent, 64.0f,
    "Largest query shape accepted, world units: the half extent of the bounding box of a "
    "Sweep, Overlap or Contacts shape, a Probe's half extent or radius, and a Contacts margin");
ABSL_FLAG(float, max_sweep_distance, 4096.0f, "Longest Sweep distance accepted, world units");
ABSL_FLAG(uint32_t, max_sweep_hits, 1024,
          "Most hits one Sweep with HIT_COLLECTION_ALL returns (nearest kept)");
ABSL_FLAG(uint32_t, max_probe_voxels, 65536, "Most touched voxels one Probe may return");
ABSL_FLAG(uint64_t, chunk_collision_cache_mb, 256,
          "Byte budget of the lazily built chunk meshes + kD-trees of smooth queries, MiB");
ABSL_FLAG(std::string, port_file, "",
          "If set, write the bound port number to this file once serving");
ABSL_FLAG(uint64_t, store_cache_mb, 256,
          "Budget for decoded chunks kept in memory, MiB (evicted chunks reload from the store or "
          "regenerate on the next touch); 0 = unlimited");
ABSL_FLAG(uint64_t, store_block_cache_mb, 32, "RocksDB block cache for stored chunk records, MiB");
ABSL_FLAG(bool, store_sync, true,
          "Sync the write-ahead log before acknowledging an edit; false risks losing acknowledged "
          "edits on power loss (never on a process crash)");
ABSL_FLAG(double, shutdown_grace_seconds, 5.0,
          "On SIGINT/SIGTERM, time allowed for in-flight calls");

namespace voxcol::server {
namespace {

absl::StatusOr<Int3> ParseSize(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  Int3 size;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &size.x) ||
      !absl::SimpleAtoi(parts[1], &size.y) || !absl::SimpleAtoi(parts[2], &size.z)) {
    return absl::InvalidArgumentError("--world_size must be X,Y,Z in voxels, e.g. 512,192,512");
  }
  return size;
}

int RunServer() {
  // Block the shutdown signals in every thread; one thread waits for them with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<Int3> size = ParseSize(absl::GetFlag(FLAGS_world_size));
  if (!size.ok()) {
    LogError("event=bad_flag message=\"%s\"", size.status().message());
    return 2;
  }
  WorldConfig requested{*size, absl::GetFlag(FLAGS_voxel_size), absl::GetFlag(FLAGS_seed)};
  if (absl::Status s = ValidateWorldConfig(requested); !s.ok()) {
    LogError("event=bad_flag message=\"%s\"", s.message());
    return 2;
  }
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  store::StoreOptions store_options;
  store_options.sync = absl::GetFlag(FLAGS_store_sync);
  store_options.block_cache_bytes = absl::GetFlag(FLAGS_store_block_cache_mb) << 20;
  store_options.idempotency_keys = absl::GetFlag(FLAGS_idempotency_keys);
  absl::StatusOr<DataDir> data =
      OpenDataDir(data_dir, requested, CaveGenerator::kVersion, store_options);
  if (!data.ok()) {
    LogError("event=open_failed data_dir=%s message=\"%s\"", data_dir, data.status().message());
    return 1;
  }
  const WorldConfig& config = data->world.config;
  CaveParams cave;
  World world(config, std::make_unique<CaveGenerator>(config.seed, WorldVoxelBounds(config), cave));
  // The store sees every edit before it is visible and serves edited chunks on first touch.
  world.SetLoader(data->store.get());
  world.AddObserver(data->store.get());
  world.RestoreVersion(data->world.version);
  world.SetResidentBudget(absl::GetFlag(FLAGS_store_cache_mb) << 20);
  LogInfo("event=world_open data_dir=%s created=%d seed=%d size=%d,%d,%d voxel_size=%g version=%d",
          data_dir, data->world.created, config.seed, config.size_voxels.x, config.size_voxels.y,
          config.size_voxels.z, config.voxel_size, data->world.version);

  // The broadphase follows every edit: it must observe the world before the first request.
  BroadphaseIndex broadphase(world);
  world.AddObserver(&broadphase);

  if (absl::GetFlag(FLAGS_max_region_voxels) <= 0 ||
      absl::GetFlag(FLAGS_max_batch_primitives) <= 0) {
    LogError(
        "event=bad_flag message=\"--max_region_voxels and --max_batch_primitives must be > 0\"");
    return 2;
  }
  ServiceLimits limits;
  limits.query.max_ray_distance = absl::GetFlag(FLAGS_max_ray_distance);
  limits.edit.max_radius = absl::GetFlag(FLAGS_max_edit_radius);
  limits.edit.max_extent = absl::GetFlag(FLAGS_max_edit_extent);
  limits.edit.max_region_voxels = absl::GetFlag(FLAGS_max_region_voxels);
  limits.edit.max_batch_primitives = absl::GetFlag(FLAGS_max_batch_primitives);
  ChangeLog change_log(world.version(), {absl::GetFlag(FLAGS_change_log_versions),
                                         absl::GetFlag(FLAGS_change_log_chunks)});
  world.AddObserver(&change_log);
  EditBatcher batcher(world, limits.edit, absl::GetFlag(FLAGS_idempotency_keys));
  for (const store::StoredAck& ack : data->store->acks_at_open()) {
    batcher.Restore(ack.key, {ack.fingerprint, {ack.version, ack.changed_chunks, false}});
  }
  LogInfo("event=idempotency_keys_restored count=%d", data->store->acks_at_open().size());
  limits.query.max_shape_extent = absl::GetFlag(FLAGS_max_shape_extent);
  limits.query.max_probe_voxels = absl::GetFlag(FLAGS_max_probe_voxels);
  limits.query.max_sweep_distance = absl::GetFlag(FLAGS_max_sweep_distance);
  limits.query.max_sweep_hits = std::max(1u, absl::GetFlag(FLAGS_max_sweep_hits));
  StreamLimits stream_limits;
  stream_limits.batch.max_queries = absl::GetFlag(FLAGS_max_batch_queries);
  stream_limits.batch.max_min_version_wait =
      absl::Milliseconds(absl::GetFlag(FLAGS_max_min_version_wait_ms));
  stream_limits.max_in_flight_batches =
      std::max(1, absl::GetFlag(FLAGS_max_in_flight_batches_per_stream));
  stream_limits.max_streams_per_client = std::max(1, absl::GetFlag(FLAGS_max_streams_per_client));
  int threads = absl::GetFlag(FLAGS_query_threads);
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  // Declared before the server so that it outlives every stream that submits to it.
  WorkerPool query_pool(threads, size_t(std::max(0, absl::GetFlag(FLAGS_max_queued_batches))));

  ServerMetrics& metrics = GetServerMetrics();
  metrics.registry.AddGauge("voxcol_world_version", "Committed edit batches",
                            [&world] { return double(world.version()); });
  metrics.registry.AddGauge("voxcol_chunks_resident", "Chunks held in memory",
                            [&world] { return double(world.resident_chunks()); });
  metrics.registry.AddGauge("voxcol_query_queue_length", "Batches waiting for a query thread",
                            [&query_pool] { return double(query_pool.queued()); });
  MetricsHttpServer metrics_http;
  if (const std::string address = absl::GetFlag(FLAGS_metrics_listen); !address.empty()) {
    if (!metrics_http.Start(&metrics.registry, address)) {
      LogError("event=metrics_listen_failed address=%s", address);
      return 1;
    }
    LogInfo("event=metrics_serving address=%s port=%d", address, metrics_http.port());
  }

  WorldServiceImpl world_service(world, cave.sea_level);
  ChunkCollisionCache chunk_collision_cache(
      world, size_t(absl::GetFlag(FLAGS_chunk_collision_cache_mb)) << 20);
  // Cache counters are read when scraped (the cache keeps them as atomics).
  auto cache_stat = [&chunk_collision_cache](uint64_t ChunkCollisionCacheStats::*field) {
    return [&chunk_collision_cache, field] { return double(chunk_collision_cache.stats().*field); };
  };
  metrics.registry.AddCounterCallback("voxcol_chunk_collision_cache_hits_total",
                                      "Chunk mesh+tree lookups served from the cache",
                                      cache_stat(&ChunkCollisionCacheStats::hits));
  metrics.registry.AddCounterCallback("voxcol_chunk_collision_cache_misses_total",
                                      "Chunk meshes+trees built (cache misses)",
                                      cache_stat(&ChunkCollisionCacheStats::builds));
  metrics.registry.AddCounterCallback("voxcol_chunk_collision_cache_evictions_total",
                                      "Entries evicted over the byte budget",
                                      cache_stat(&ChunkCollisionCacheStats::evictions));
  metrics.registry.AddGauge(
      "voxcol_chunk_collision_cache_bytes", "Bytes of cached meshes and trees",
      [&chunk_collision_cache] { return double(chunk_collision_cache.stats().bytes); });
  QueryServiceImpl query_service(world, QueryEngine{broadphase, chunk_collision_cache}, limits,
                                 stream_limits, &query_pool);
  EditServiceImpl edit_service(world, limits, batcher, change_log);
  AdminServiceImpl admin_service(world, *data->store);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  const std::string listen = absl::GetFlag(FLAGS_listen);
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  // A full WriteVoxels/ApplyEdits region is two bytes per voxel plus framing.
  int64_t max_message = 2 * limits.edit.max_region_voxels + (1 << 20);
  // Larger messages get RESOURCE_EXHAUSTED from gRPC before any handler runs.
  builder.SetMaxReceiveMessageSize(
      int(std::min<int64_t>(max_message, std::numeric_limits<int>::max())));
  builder.SetMaxSendMessageSize(
      int(std::min<int64_t>(max_message, std::numeric_limits<int>::max())));
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<RequestLogInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.RegisterService(&world_service);
  builder.RegisterService(&query_service);
  builder.RegisterService(&edit_service);
  builder.RegisterService(&admin_service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    LogError("event=listen_failed address=%s", listen);
    return 1;
  }
  LogInfo("event=serving address=%s port=%d", listen, port);
  if (const std::string port_file = absl::GetFlag(FLAGS_port_file); !port_file.empty()) {
    std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << port << "\n";
    std::rename(tmp.c_str(), port_file.c_str());
  }

  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    LogInfo("event=shutdown signal=%d", sig);
    server->GetHealthCheckService()->Shutdown();  // health turns NOT_SERVING for balancers
    change_log.Close();  // Subscribe streams end now instead of holding the grace period
    auto grace = std::chrono::duration<double>(absl::GetFlag(FLAGS_shutdown_grace_seconds));
    server->Shutdown(std::chrono::system_clock::now() +
                     std::chrono::duration_cast<std::chrono::system_clock::duration>(grace));
  });
  server->Wait();
  signal_thread.join();
  LogInfo("event=stopped version=%d", world.version());
  return 0;
}

}  // namespace
}  // namespace voxcol::server

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("voxcol_server: voxel terrain collision and query service");
  absl::ParseCommandLine(argc, argv);
  return voxcol::server::RunServer();
}
