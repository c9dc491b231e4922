#include "server/exec/query_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/query/character.h"
#include "core/query/validate.h"
#include "server/bodies/body_convert.h"
#include "server/bodies/body_ops.h"
#include "server/convert/convert.h"
#include "server/exec/query_kinds.h"
#include "server/telemetry/log.h"
#include "server/telemetry/server_metrics.h"

namespace voxcol::server {

namespace {

// A chunk the query needed could not be loaded (a corrupt stored record): never answer from
// garbage. Also passes on a query stopped by its interrupt (the caller's deadline) or by its work
// budget (RESOURCE_EXHAUSTED, --max_query_triangles), neither logged as a load failure.
absl::Status LoadFailure(const char* query, const absl::Status& status) {
  if (absl::IsDeadlineExceeded(status) || absl::IsCancelled(status) ||
      absl::IsResourceExhausted(status)) {
    return status;
  }
  LogError("event=chunk_load_failed query=%s code=%s message=%s", query,
           absl::StatusCodeToString(status.code()), status.message());
  return status;
}

}  // namespace

absl::Status RunRaycast(const QueryEngine& engine, const ServiceLimits& limits,
                        const v1::RaycastRequest& request, v1::RaycastResponse* response,
                        const QueryInterrupt& interrupt) {
  RaycastInput ray;
  RaycastSettings settings;
  absl::Status status = FromProto(request, &ray, &settings);
  if (status.ok()) status = ValidateRaycast(engine.world(), &ray, limits.query);
  if (!status.ok()) return status;
  if (WantsBodies(request.has_body_filter(), request.body_filter())) {
    absl::Status load;
    status = RunSceneRaycast(engine.index, engine.cache, engine.bodies, ray, settings, request,
                             response, &load);
    return load.ok() ? status : LoadFailure("raycast", load);
  }
  QueryStats stats;
  RaycastHit hit;
  // One vector per thread: it keeps its capacity, so steady-state queries do not allocate.
  thread_local std::vector<RaycastHit> hits;
  hits.clear();
  if (request.all_hits() && settings.mode == RaycastMode::kSmooth) {
    RaycastSmoothAll(engine.index, engine.cache, ray, settings, &hits, &stats);
    if (!hits.empty()) hit = hits.front();
  } else {
    hit = Raycast(engine.index, engine.cache, ray, settings, &stats);
    if (hit.hit && request.all_hits()) hits.push_back(hit);  // blocky: its one hit
  }
  if (!hit.load_status.ok()) return LoadFailure("raycast", hit.load_status);
  ToProto(hit, request.all_hits() ? &hits : nullptr, response);
  if (request.include_stats()) ToProto(stats, response->mutable_stats());
  return absl::OkStatus();
}

int RaycastArrayCount(const v1::RaycastArrays& request) { return request.origins_size() / 3; }

namespace {

// CheckRaycastArrays, and the arrays' settings when they are OK.
absl::Status DecodeRaycastArrays(const v1::RaycastArrays& request, RaycastSettings* settings) {
  const int n = RaycastArrayCount(request);
  if (request.origins_size() % 3 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("raycasts.origins: ", request.origins_size(),
                                                   " floats, not 3 (x, y, z) per ray"));
  }
  if (request.directions_size() != request.origins_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("raycasts.directions: ", request.directions_size(),
                     " floats, must match raycasts.origins (", request.origins_size(), ")"));
  }
  const int d = request.max_distances_size();
  if (n > 0 && d != 1 && d != n) {
    return absl::InvalidArgumentError(absl::StrCat("raycasts.max_distances: ", d, " values for ", n,
                                                   " rays (give 1, or 1 per ray)"));
  }
  if (absl::Status s = FromProto(request.water_mode(), request.mode(), settings); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("raycasts.", s.message()));
  }
  return absl::OkStatus();
}

// A ray's validation message with the array element it is about: "raycasts.origins[7]: origin
// (...) is outside the world bounds". A single max_distances value is element 0.
std::string RayField(int i, bool one_distance, absl::string_view message) {
  absl::string_view field = message.substr(0, message.find_first_of(" :"));
  if (field == "max_distance" && one_distance) i = 0;
  return absl::StrCat("raycasts.", field, "s[", i, "]: ", message);
}

void WriteHit(const RaycastHit& hit, int i, v1::RaycastArrayResults* out) {
  if (!hit.hit) return;
  out->mutable_flags()->Set(i, v1::RAYCAST_FLAG_HIT |
                                   (hit.started_inside ? v1::RAYCAST_FLAG_STARTED_INSIDE : 0) |
                                   (hit.front_face ? v1::RAYCAST_FLAG_FRONT_FACE : 0));
  out->mutable_distances()->Set(i, hit.distance);
  float* position = out->mutable_positions()->mutable_data() + 3 * i;
  float* normal = out->mutable_normals()->mutable_data() + 3 * i;
  int32_t* voxel = out->mutable_voxels()->mutable_data() + 3 * i;
  for (int a = 0; a < 3; ++a) {
    position[a] = hit.position[a];
    normal[a] = hit.normal[a];
    voxel[a] = hit.voxel[a];
  }
  out->mutable_materials()->Set(i, hit.value.material);
}

}  // namespace

absl::Status CheckRaycastArrays(const v1::RaycastArrays& request) {
  RaycastSettings settings;
  return DecodeRaycastArrays(request, &settings);
}

absl::Status RunRaycastArrays(const QueryEngine& engine, const ServiceLimits& limits,
                              const v1::RaycastArrays& request, v1::RaycastArrayResults* out,
                              const QueryInterrupt& interrupt) {
  RaycastSettings settings;
  if (absl::Status s = DecodeRaycastArrays(request, &settings); !s.ok()) return s;
  static Counter* const raycasts = QueryKindOfMethod("Raycast")->queries;
  raycasts->Add(uint64_t(RaycastArrayCount(request)));
  const int n = RaycastArrayCount(request);
  out->Clear();
  out->mutable_codes()->Resize(n, 0);
  out->mutable_flags()->Resize(n, 0);
  out->mutable_distances()->Resize(n, 0.0f);
  out->mutable_positions()->Resize(3 * n, 0.0f);
  out->mutable_normals()->Resize(3 * n, 0.0f);
  out->mutable_materials()->Resize(n, 0);
  out->mutable_voxels()->Resize(3 * n, 0);
  const float* o = request.origins().data();
  const float* d = request.directions().data();
  const bool one_distance = request.max_distances_size() == 1;
  constexpr int kRaysPerInterruptCheck = 32;
  for (int i = 0; i < n; ++i) {
    if (i % kRaysPerInterruptCheck == 0) {
      if (absl::Status s = interrupt.Check(); !s.ok()) return s;
    }
    RaycastInput ray;
    ray.origin = Vec3{o[3 * i], o[3 * i + 1], o[3 * i + 2]};
    ray.direction = Vec3{d[3 * i], d[3 * i + 1], d[3 * i + 2]};
    ray.max_distance = request.max_distances(one_distance ? 0 : i);
    if (absl::Status s = ValidateRaycast(engine.world(), &ray, limits.query); !s.ok()) {
      GetServerMetrics().query_failures->Add();
      out->set_codes(i, int(s.code()));
      if (out->message().empty()) out->set_message(RayField(i, one_distance, s.message()));
      continue;
    }
    const RaycastHit hit = Raycast(engine.index, engine.cache, ray, settings, nullptr);
    if (!hit.load_status.ok()) return LoadFailure("raycast", hit.load_status);
    WriteHit(hit, i, out);
  }
  return absl::OkStatus();
}

absl::Status RunSweep(const QueryEngine& engine, const ServiceLimits& limits,
                      const v1::SweepRequest& request, v1::SweepResponse* response,
                      const QueryInterrupt& interrupt) {
  DecodedShape shape;
  SweepInput input;
  SweepSettings settings;
  absl::Status status = FromProto(request.shape(), &shape);
  if (status.ok()) status = FromProto(request, &input, &settings);
  input.shape = shape.posed();
  if (status.ok()) status = ValidateSweep(engine.world(), &input, &settings, limits.query);
  if (!status.ok()) return status;
  settings.interrupt = &interrupt;
  settings.budget.max_triangles = limits.query.max_query_triangles;
  thread_local SweepResult result;
  QueryStats stats;
  Sweep(engine.index, engine.cache, input, settings, &result, &stats);
  if (!result.load_status.ok()) return LoadFailure("sweep", result.load_status);
  ToProto(result, input, response);
  if (request.include_stats()) ToProto(stats, response->mutable_stats());
  return absl::OkStatus();
}

absl::Status RunOverlap(const QueryEngine& engine, const ServiceLimits& limits,
                        const v1::OverlapRequest& request, v1::OverlapResponse* response,
                        const QueryInterrupt& interrupt) {
  DecodedShape shape;
  OverlapSettings settings;
  absl::Status status = FromProto(request.shape(), &shape);
  FromProto(request, &settings);
  if (status.ok()) status = ValidateOverlap(engine.world(), &shape.posed(), limits.query);
  if (!status.ok()) return status;
  if (WantsBodies(request.has_body_filter(), request.body_filter())) {
    status = RunBodyOverlap(engine.bodies, shape.posed(), request.body_filter(), response);
    if (!status.ok() || request.body_filter().scope() == v1::BODY_SCOPE_BODIES) return status;
  }
  settings.interrupt = &interrupt;
  settings.budget.max_triangles = limits.query.max_query_triangles;
  thread_local OverlapResult result;
  QueryStats stats;
  Overlap(engine.index, engine.cache, shape.posed(), settings, &result, &stats);
  if (!result.load_status.ok()) return LoadFailure("overlap", result.load_status);
  ToProto(result, settings.include_penetration, response);
  if (request.include_stats()) ToProto(stats, response->mutable_stats());
  return absl::OkStatus();
}

absl::Status RunContacts(const QueryEngine& engine, const ServiceLimits& limits,
                         const v1::ContactsRequest& request, v1::ContactsResponse* response,
                         const QueryInterrupt& interrupt) {
  DecodedShape shape;
  ContactsSettings settings;
  absl::Status status = FromProto(request.shape(), &shape);
  FromProto(request, &settings);
  if (status.ok()) {
    status = ValidateContacts(engine.world(), &shape.posed(), settings, limits.query);
  }
  if (!status.ok()) return status;
  settings.interrupt = &interrupt;
  settings.budget.max_triangles = limits.query.max_query_triangles;
  thread_local ContactsResult result;
  QueryStats stats;
  Contacts(engine.index, engine.cache, shape.posed(), settings, &result, &stats);
  if (!result.load_status.ok()) return LoadFailure("contacts", result.load_status);
  ToProto(result, settings.water, response);
  if (request.include_stats()) ToProto(stats, response->mutable_stats());
  return absl::OkStatus();
}

absl::Status RunProbe(const QueryEngine& engine, const ServiceLimits& limits,
                      const v1::ProbeRequest& request, v1::ProbeResponse* response,
                      const QueryInterrupt& interrupt) {
  ProbeShape shape;
  ProbeSettings settings;
  absl::Status status = FromProto(request, limits.query.max_probe_voxels, &shape, &settings);
  if (status.ok()) status = ValidateProbe(engine.world(), shape, settings, limits.query);
  if (!status.ok()) return status;
  thread_local ProbeResult result;
  Probe(engine.index, shape, settings, &result);
  ToProto(result, response);
  if (request.include_stats()) response->mutable_stats()->set_chunks_visited(result.chunks_visited);
  return absl::OkStatus();
}

absl::Status RunMoveCharacters(const QueryEngine& engine, const ServiceLimits& limits,
                               const v1::MoveCharactersRequest& request,
                               v1::MoveCharactersResponse* response,
                               const QueryInterrupt& interrupt) {
  const int n = request.moves_size();
  if (uint32_t(n) > limits.max_characters_per_request) {
    return absl::InvalidArgumentError(
        absl::StrCat("moves: ", n, " moves exceed the server's limit of ",
                     limits.max_characters_per_request, " (--max_characters_per_request)"));
  }
  // Per thread: they keep their capacity, so steady-state ticks do not allocate.
  thread_local std::vector<CharacterMove> moves;
  thread_local std::vector<CharacterResult> results;
  moves.resize(n);
  // With a body filter the characters are bodies: RunCharactersAsBodies validates them all.
  const bool as_bodies = request.has_body_filter();
  for (int i = 0; i < n; ++i) {
    absl::Status status = FromProto(request.moves(i), limits.query, &moves[i]);
    moves[i].id = request.moves(i).client_id();
    if (status.ok() && !as_bodies) {
      status = ValidateCharacterMove(engine.world(), moves[i], limits.query);
    }
    moves[i].budget.max_triangles = limits.query.max_query_triangles;
    if (!status.ok()) {
      // The field's path is only built for the error.
      return absl::Status(status.code(), absl::StrCat("moves[", i, "].", status.message()));
    }
  }
  QueryStats stats;
  if (as_bodies) {
    absl::Status status =
        RunCharactersAsBodies(engine.index, engine.cache, engine.bodies, limits.query,
                              request.body_filter(), moves, interrupt, &results, &stats);
    if (!status.ok()) return status;
  } else {
    MoveCharacters(engine.index, engine.cache, moves, &interrupt, &results, &stats);
  }
  for (const CharacterResult& r : results) {
    if (!r.status.ok()) return LoadFailure("move_characters", r.status);
  }
  response->mutable_results()->Reserve(n);
  for (int i = 0; i < n; ++i) {
    ToProto(results[i], request.moves(i).client_id(), response->add_results());
  }
  if (request.include_stats()) ToProto(stats, response->mutable_stats());
  return absl::OkStatus();
}

}  // namespace voxcol::server
