#include "server/query_ops.h"

#include "server/convert.h"

namespace voxcol::server {

absl::Status RunRaycast(const World& world, const ServiceLimits& limits, const v1::RaycastRequest& request,
                        v1::RaycastResponse* response) {
  RayInput ray;
  RaySettings settings;
  absl::Status status = FromProto(request, &ray, &settings);
  if (status.ok()) status = ValidateRay(world, ray, limits.query);
  if (!status.ok()) return status;
  QueryStats stats;
  RayHit hit = RaycastBlocky(world, ray, settings, &stats);
  ToProto(hit, response);
  if (request.include_stats()) {
    response->mutable_stats()->set_voxels_visited(stats.voxels_visited);
    response->mutable_stats()->set_chunks_visited(stats.chunks_visited);
  }
  return absl::OkStatus();
}

}  // namespace voxcol::server
