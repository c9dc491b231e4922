// gRPC service: validate, call core, convert. No geometry lives here.
#pragma once

#include <grpcpp/grpcpp.h>

#include "core/voxel/change_log.h"
#include "core/voxel/edit_batch.h"
#include "core/voxel/world.h"
#include "server/edit_stream.h"
#include "server/service_limits.h"
#include "voxcol/v1/edit_service.grpc.pb.h"

namespace voxcol::server {

// EditStream is a callback method (raw messages); the other methods use the sync API.
using EditServiceBase = v1::EditService::WithRawCallbackMethod_EditStream<v1::EditService::Service>;

class EditServiceImpl final : public EditServiceBase {
 public:
  // `batcher` applies batches to `world`; `change_log` must be registered as an observer of
  // `world`. `edit_streams` (built on the same batcher) serves EditStream; null answers it
  // UNIMPLEMENTED.
  EditServiceImpl(World& world, const ServiceLimits& limits, EditBatcher& batcher,
                  const ChangeLog& change_log, EditStreams* edit_streams = nullptr)
      : world_(world),
        limits_(limits),
        batcher_(batcher),
        change_log_(change_log),
        edit_streams_(edit_streams) {}

  grpc::Status FillBall(grpc::ServerContext* context, const v1::FillBallRequest* request,
                        v1::EditAck* response) override;
  grpc::Status ApplyEdits(grpc::ServerContext* context, const v1::ApplyEditsRequest* request,
                          v1::EditAck* response) override;
  grpc::Status ReadVoxels(grpc::ServerContext* context, const v1::ReadVoxelsRequest* request,
                          v1::ReadVoxelsResponse* response) override;
  grpc::Status WriteVoxels(grpc::ServerContext* context, const v1::WriteVoxelsRequest* request,
                           v1::EditAck* response) override;
  // Follows the change log from the requested version until the client cancels, falls out of
  // the retention window, or the log is closed at shutdown. Blocks one server thread per stream,
  // waking at least every 200 ms to notice cancellation.
  grpc::Status Subscribe(grpc::ServerContext* context, const v1::SubscribeRequest* request,
                         grpc::ServerWriter<v1::SubscribeResponse>* writer) override;
  // Defined in server/edit_stream.cc.
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* EditStream(
      grpc::CallbackServerContext* context) override;

 private:
  World& world_;
  ServiceLimits limits_;
  EditBatcher& batcher_;
  const ChangeLog& change_log_;
  EditStreams* edit_streams_;
};

}  // namespace voxcol::server
