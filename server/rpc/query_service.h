// gRPC QueryService: unary queries plus the batched bidirectional Query stream. No geometry here.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/voxel/world.h"
#include "server/exec/query_batch.h"
#include "server/exec/query_ops.h"
#include "server/exec/service_limits.h"
#include "server/exec/worker_pool.h"
#include "server/stream/async_stream.h"
#include "server/world/world_registry.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol::server {

struct StreamLimits {
  BatchLimits batch;
  // Per stream; further reads wait (backpressure). 8 rather than 4: with 4, one stream left the
  // query threads idle for part of every round trip (docs/benchmarks.md, "Packed raycasts").
  int max_in_flight_batches = 8;
  int max_streams_per_client =
      256;  // open Query streams per client host; more get RESOURCE_EXHAUSTED
};

class QueryServiceImpl final
    : public v1::QueryService::WithRawMethod_Query<v1::QueryService::Service> {
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
        pool_(pool) {}
  // Every request names its world (empty: the default one), found by `resolver`.
  QueryServiceImpl(const WorldResolver& resolver, const ServiceLimits& limits,
                   const StreamLimits& stream_limits, WorkerPool* pool)
      : resolver_(resolver), limits_(limits), stream_limits_(stream_limits), pool_(pool) {}

  grpc::Status Raycast(grpc::ServerContext* context, const v1::RaycastRequest* request,
                       v1::RaycastResponse* response) override;
  grpc::Status Sweep(grpc::ServerContext* context, const v1::SweepRequest* request,
                     v1::SweepResponse* response) override;
  grpc::Status Overlap(grpc::ServerContext* context, const v1::OverlapRequest* request,
                       v1::OverlapResponse* response) override;
  grpc::Status Contacts(grpc::ServerContext* context, const v1::ContactsRequest* request,
                        v1::ContactsResponse* response) override;
  grpc::Status Probe(grpc::ServerContext* context, const v1::ProbeRequest* request,
                     v1::ProbeResponse* response) override;
  grpc::Status MoveCharacters(grpc::ServerContext* context,
                              const v1::MoveCharactersRequest* request,
                              v1::MoveCharactersResponse* response) override;
  // Lag-compensated hit validation (server/exec/validate_hit.h) at the request's read_at.
  grpc::Status ValidateHit(grpc::ServerContext* context, const v1::ValidateHitRequest* request,
                           v1::ValidateHitResponse* response) override;
  // Starts answering Query streams (raw messages: each stream parses its batches itself) on the
  // server's own queues; call once, after the server started and before `threads` start.
  void AcceptStreams(const RpcThreads& threads);

 private:
  friend class QueryStream;
  // Counts open streams per client host; false (and no count taken) when the host is at the limit.
  bool AcquireStream(const std::string& host);
  void ReleaseStream(const std::string& host);

  std::unique_ptr<SingleWorld> single_;  // the single-world constructor's
  const WorldResolver& resolver_;
  ServiceLimits limits_;
  StreamLimits stream_limits_;
  WorkerPool* pool_;
  absl::Mutex streams_mu_;
  absl::flat_hash_map<std::string, int> streams_per_host_ ABSL_GUARDED_BY(streams_mu_);
};

}  // namespace voxcol::server
