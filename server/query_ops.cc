#include "server/query_ops.h"

#include <vector>

#include "server/convert.h"
#include "server/convert_shape.h"
#include "server/log.h"

namespace voxcol::server {

namespace {

// A chunk the query needed could not be loaded (a corrupt stored record): never answer from
// garbage.
absl::Status LoadFailure(const char* query, const absl::Status& status) {
  LogError("event=chunk_load_failed query=%s code=%s message=\"%s\"", query,
           absl::StatusCodeToString(status.code()), status.message());
  return status;
}

absl::Status RunPosedOverlap(const QueryEngine& engine, const ServiceLimits& limits,
                             const v1::OverlapRequest& request, v1::OverlapResponse* response) {
  DecodedShape shape;
  absl::Status status = FromProto(request.posed(), "posed.", &shape);
  if (status.ok())
    status = ValidatePosedShape(engine.world(), shape.posed(), limits.shape, "posed.");
  if (!status.ok()) return status;
  thread_local ShapeOverlapResult result;
  QueryStats stats;
  OverlapPosedShape(engine.index, engine.cache, shape.posed(), request.include_penetration(),
                    &result, &stats);
  if (!result.load_status.ok()) return LoadFailure("overlap", result.load_status);
  ToProto(result, request.include_penetration(), response);
  if (request.include_stats()) ToProto(stats, response->mutable_stats());
  return absl::OkStatus();
}

}  // namespace

absl::Status RunRaycast(const QueryEngine& engine, const ServiceLimits& limits,
                        const v1::RaycastRequest& request, v1::RaycastResponse* response) {
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
  if (!hit.load_status.ok()) return LoadFailure("raycast", hit.load_status);
  ToProto(hit, response);
  if (request.include_stats()) ToProto(stats, response->mutable_stats());
  return absl::OkStatus();
}

absl::Status RunOverlap(const QueryEngine& engine, const ServiceLimits& limits,
                        const v1::OverlapRequest& request, v1::OverlapResponse* response) {
  if (request.shape_case() == v1::OverlapRequest::kPosed) {
    if (request.include_voxels()) {
      return absl::InvalidArgumentError(
          "include_voxels: touched voxels are reported for box and sphere only, not posed");
    }
    return RunPosedOverlap(engine, limits, request, response);
  }
  const BroadphaseIndex& index = engine.index;
  // `struct`: core/query/shape_query.h also declares a function OverlapShape.
  OverlapShape shape;
  OverlapSettings settings;
  absl::Status status = FromProto(request, limits.overlap.max_voxels, &shape, &settings);
  if (status.ok()) status = ValidateOverlap(index.world(), shape, settings, limits.overlap);
  if (!status.ok()) return status;
  // One result per thread: its vectors keep their capacity, so steady-state queries do not
  // allocate.
  thread_local OverlapResult result;
  Overlap(index, shape, settings, &result);
  ToProto(result, response);
  if (request.include_stats()) response->mutable_stats()->set_chunks_visited(result.chunks_visited);
  return absl::OkStatus();
}

absl::Status RunSweep(const QueryEngine& engine, const ServiceLimits& limits,
                      const v1::SweepRequest& request, v1::SweepResponse* response) {
  DecodedShape shape;
  ShapeSweepInput input;
  ShapeSweepSettings settings;
  absl::Status status = FromProto(request.shape(), "shape.", &shape);
  if (status.ok())
    status = ValidatePosedShape(engine.world(), shape.posed(), limits.shape, "shape.");
  if (status.ok()) status = FromProto(request, limits.shape, &input, &settings);
  if (!status.ok()) return status;
  input.shape = shape.posed();
  thread_local ShapeSweepResult result;
  QueryStats stats;
  SweepShape(engine.index, engine.cache, input, settings, &result, &stats);
  if (!result.load_status.ok()) return LoadFailure("sweep", result.load_status);
  ToProto(result, input, response);
  if (request.include_stats()) ToProto(stats, response->mutable_stats());
  return absl::OkStatus();
}

absl::Status RunContacts(const QueryEngine& engine, const ServiceLimits& limits,
                         const v1::ContactsRequest& request, v1::ContactsResponse* response) {
  DecodedShape shape;
  ContactSettings settings;
  absl::Status status = FromProto(request.shape(), "shape.", &shape);
  if (status.ok())
    status = ValidatePosedShape(engine.world(), shape.posed(), limits.shape, "shape.");
  if (status.ok()) status = FromProto(request, limits.shape, &settings);
  if (!status.ok()) return status;
  thread_local ContactResult result;
  QueryStats stats;
  const PosedShape posed = shape.posed();
  ShapeContacts(engine.index, engine.cache, posed, settings, &result, &stats);
  if (!result.load_status.ok()) return LoadFailure("contacts", result.load_status);
  ToProto(result, posed.pose.translation, settings.water, response);
  if (request.include_stats()) ToProto(stats, response->mutable_stats());
  return absl::OkStatus();
}

}  // namespace voxcol::server
