// gRPC QueryService: unary queries plus the batched bidirectional Query stream. No geometry here.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/voxel/world.h"
#include "server/exec/query_batch.h"
#include "server/exec/query_kinds.h"
#include "server/exec/query_ops.h"
#include "server/exec/service_limits.h"
#include "server/exec/worker_pool.h"
#include "server/security/audit_log.h"
#include "server/stream/async_stream.h"
#include "server/world/world_registry.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol::server {

struct StreamLimits {
  BatchLimits batch;
  // Per stream; further reads wait (backpressure). 8 rather than 4: with 4, one stream left the
  // query threads idle for part of every round trip (docs/benchmarks.md, "Packed raycasts").
  int max_in_flight_batches = 8;
  // Serialized responses one stream may have queued for its client (the first always fits); a
  // stream whose client does not read them past this is ended with RESOURCE_EXHAUSTED
  // (--max_stream_pending_mb).
  size_t max_pending_bytes = size_t(16) << 20;
  int max_streams_per_client =
      256;  // open Query streams per client host; more get RESOURCE_EXHAUSTED
};

class QueryServiceImpl final
    : public v1::QueryService::WithRawMethod_WatchPaths<
          v1::QueryService::WithRawMethod_Query<v1::QueryService::Service>> {
 public:
  // `engine` holds the broadphase and narrowphase cache of `world` (both observing its edits);
  // `pool` runs the batches of every stream. All of them must outlive the server.
  QueryServiceImpl(const World& world, QueryEngine engine, const ServiceLimits& limits,
                   const StreamLimits& stream_limits, WorkerPool* pool)
      : single_(std::make_unique<SingleWorld>(
            MakeWorldParts(const_cast<World*>(&world),  // queries never edit through it
                           &engine.index, &engine.cache, engine.batcher, nullptr))),
        resolver_(*single_),
        limits_(limits),
        stream_limits_(stream_limits),
        pool_(pool) {
    MarkUnaryMethodsRaw();
  }
  // Every request names its world (empty: the default one), found by `resolver`.
  QueryServiceImpl(const WorldResolver& resolver, const ServiceLimits& limits,
                   const StreamLimits& stream_limits, WorkerPool* pool);

  // Starts answering the unary queries (every row of the query kinds table, server/exec) and
  // Query streams on the RPC threads, all raw: each call parses its requests itself. A unary query
  // runs on the RPC thread that took it; a stream's batches run on `pool`. Call once, after the
  // server started and before `threads` start.
  void AcceptStreams(const RpcThreads& threads);
  // Records the committed edits of every tick batch (must outlive the server; unset: none are).
  void SetEditAudit(const EditAudit* audit) { audit_ = audit; }

  // GetNavMesh (a sync method: drawing, not a query kind of the batches).
  grpc::Status GetNavMesh(grpc::ServerContext* context, const v1::GetNavMeshRequest* request,
                          v1::GetNavMeshResponse* response) override;

 private:
  friend class QueryStream;
  // Counts open streams per client host; false (and no count taken) when the host is at the limit.
  bool AcquireStream(const std::string& host);
  void ReleaseStream(const std::string& host);

  // Marks every query kind's unary method raw (served by AcceptStreams) and lists it.
  void MarkUnaryMethodsRaw();

  // The unary method of each query kind, by its index in the service (marked raw).
  struct UnaryKind {
    const QueryKind* kind;
    int method_index;
  };
  std::vector<UnaryKind> unary_methods_;
  std::unique_ptr<SingleWorld> single_;  // the single-world constructor's
  const WorldResolver& resolver_;
  ServiceLimits limits_;
  StreamLimits stream_limits_;
  WorkerPool* pool_;
  const EditAudit* audit_ = nullptr;
  // Batches running on RPC threads in a pool worker's place, and how many may (QueryStream).
  std::atomic<int> inline_batches_{0};
  int max_inline_batches_ = 1;
  absl::Mutex streams_mu_;
  absl::flat_hash_map<std::string, int> streams_per_host_ ABSL_GUARDED_BY(streams_mu_);
};

}  // namespace voxcol::server
