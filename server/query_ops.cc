#include "server/query_ops.h"

#include "server/convert.h"
#include "server/log.h"

#include <vector>

namespace voxcol::server {

absl::Status RunRaycast(const QueryEngine& engine, const ServiceLimits& limits, const v1::RaycastRequest& request,
                        v1::RaycastResponse* response) {
  RayInput ray;
  RaySettings settings;
  absl::Status status = FromProto(request, &ray, &settings);
  if (status.ok()) status = ValidateRay(engine.world(), ray, limits.query);
  if (!status.ok()) return status;
  QueryStats stats;
  RayHit hit;
  if (request.all_hits() && settings.mode == RaycastMode::kSmooth) {
    thread_local std::vector<RayHit> hits;
    RaycastSmoothAll(engine.index, engine.cache, ray, settings, &hits, &stats);
    for (const RayHit& h : hits) ToProto(h, response->add_hits());
    if (!hits.empty()) hit = hits.front();
  } else {
    hit = Raycast(engine.index, engine.cache, ray, settings, &stats);
    if (request.all_hits() && hit.hit) ToProto(hit, response->add_hits());
  }
  if (!hit.load_status.ok()) {
    // A chunk along the ray has a corrupt stored record: never answer from garbage.
    LogError("event=chunk_load_failed query=raycast code=%s message=\"%s\"",
             absl::StatusCodeToString(hit.load_status.code()), hit.load_status.message());
    return hit.load_status;
  }
  ToProto(hit, response);
  if (request.include_stats()) ToProto(stats, response->mutable_stats());
  return absl::OkStatus();
}

absl::Status RunOverlap(const QueryEngine& engine, const ServiceLimits& limits, const v1::OverlapRequest& request,
                        v1::OverlapResponse* response) {
  const BroadphaseIndex& index = engine.index;
  OverlapShape shape;
  OverlapSettings settings;
  absl::Status status = FromProto(request, limits.overlap.max_voxels, &shape, &settings);
  if (status.ok()) status = ValidateOverlap(index.world(), shape, settings, limits.overlap);
  if (!status.ok()) return status;
  // One result per thread: its vectors keep their capacity, so steady-state queries do not allocate.
  thread_local OverlapResult result;
  Overlap(index, shape, settings, &result);
  ToProto(result, response);
  if (request.include_stats()) response->mutable_stats()->set_chunks_visited(result.chunks_visited);
  return absl::OkStatus();
}

}  // namespace voxcol::server
