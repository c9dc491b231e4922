// gRPC service: validate, call core, convert. No geometry lives here.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>

#include "core/voxel/change_log.h"
#include "core/voxel/edit_batch.h"
#include "core/voxel/world.h"
#include "server/exec/service_limits.h"
#include "server/feed/subscribe_stream.h"
#include "server/rpc/edit_stream.h"
#include "server/security/audit_log.h"
#include "server/stream/async_stream.h"
#include "server/world/world_registry.h"
#include "voxcol/v1/edit_service.grpc.pb.h"

namespace voxcol::server {

// Subscribe and EditStream run on the server's own queues (server/stream/async_stream.h) and read
// raw messages; the other methods use the sync API.
using EditServiceBase = v1::EditService::WithRawMethod_EditStream<
    v1::EditService::WithRawMethod_Subscribe<v1::EditService::Service>>;

class EditServiceImpl final : public EditServiceBase {
 public:
  // `batcher` applies batches to `world`; `subscriptions` serves Subscribe from the change log
  // that observes `world`. `edit_streams` (built on the same batcher) serves EditStream; null
  // answers it UNIMPLEMENTED.
  EditServiceImpl(World& world, const ServiceLimits& limits, EditBatcher& batcher,
                  SubscriptionHub& subscriptions, EditStreams* edit_streams = nullptr)
      : single_(std::make_unique<SingleWorld>(
            MakeWorldParts(&world, nullptr, nullptr, &batcher, &subscriptions))),
        resolver_(*single_),
        limits_(limits),
        edit_streams_(edit_streams) {}
  // Every request names its world (empty: the default one), found by `resolver`.
  EditServiceImpl(const WorldResolver& resolver, const ServiceLimits& limits,
                  EditStreams* edit_streams = nullptr)
      : resolver_(resolver), limits_(limits), edit_streams_(edit_streams) {}

  grpc::Status FillBall(grpc::ServerContext* context, const v1::FillBallRequest* request,
                        v1::EditAck* response) override;
  grpc::Status ApplyEdits(grpc::ServerContext* context, const v1::ApplyEditsRequest* request,
                          v1::EditAck* response) override;
  grpc::Status ReadVoxels(grpc::ServerContext* context, const v1::ReadVoxelsRequest* request,
                          v1::ReadVoxelsResponse* response) override;
  grpc::Status WriteVoxels(grpc::ServerContext* context, const v1::WriteVoxelsRequest* request,
                           v1::EditAck* response) override;
  // Starts answering Subscribe and EditStream on the server's own queues; call once, after the
  // server started and before `threads` start.
  //
  // Subscribe validates the region and hands the stream to the SubscriptionHub, which follows the
  // change log from the requested version until the client cancels, falls behind (its buffer or
  // the retention window), or the log is closed at shutdown. Holds no thread per stream.
  // EditStream is defined in server/rpc/edit_stream.cc.
  void AcceptStreams(const RpcThreads& threads);
  // Records every committed edit batch of FillBall, ApplyEdits and WriteVoxels (must outlive the
  // server; unset: none are recorded). EditStream's are recorded by EditStreams.
  void SetEditAudit(const EditAudit* audit) { audit_ = audit; }

 private:
  AsyncStream* OpenSubscribe(std::unique_ptr<StreamCall> call);
  AsyncStream* OpenEditStream(std::unique_ptr<StreamCall> call);

  std::unique_ptr<SingleWorld> single_;  // the single-world constructor's
  const WorldResolver& resolver_;
  ServiceLimits limits_;
  EditStreams* edit_streams_;
  const EditAudit* audit_ = nullptr;
};

}  // namespace voxcol::server
