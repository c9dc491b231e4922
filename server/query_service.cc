#include "server/query_service.h"

#include <vector>

#include "server/convert.h"

namespace voxcol::server {

grpc::Status QueryServiceImpl::Raycast(grpc::ServerContext*, const v1::RaycastRequest* request,
                                       v1::RaycastResponse* response) {
  RayInput ray;
  RaySettings settings;
  absl::Status status = FromProto(*request, &ray, &settings);
  if (status.ok()) status = ValidateRay(world_, ray, limits_.query);
  if (!status.ok()) return ToGrpcStatus(status);
  uint64_t version = world_.version();
  QueryStats stats;
  if (request->all_hits() && settings.mode == RaycastMode::kSmooth) {
    std::vector<RayHit> hits;
    RaycastSmoothAll(world_, cache_, ray, settings, &hits, &stats);
    for (const RayHit& h : hits) ToProto(h, response->add_hits());
    ToProto(hits.empty() ? RayHit{} : hits.front(), response);
  } else {
    RayHit hit = voxcol::Raycast(world_, cache_, ray, settings, &stats);
    ToProto(hit, response);
    if (request->all_hits() && hit.hit) ToProto(hit, response->add_hits());
  }
  response->set_version(version);
  if (request->include_stats()) ToProto(stats, response->mutable_stats());
  return grpc::Status::OK;
}

}  // namespace voxcol::server
