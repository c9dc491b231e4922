// One function per query kind: proto request in, proto response out. Each decodes the request
// (convert.h), validates it in core (core/query/validate.h), runs the core query and encodes the
// answer. Shared by the unary RPCs and the batch stream so both answer identically.
#pragma once

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/query/query_types.h"
#include "core/voxel/edit_batch.h"
#include "server/bodies/world_bodies.h"
#include "server/exec/service_limits.h"
#include "server/nav/find_path_op.h"
#include "server/telemetry/metrics.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

// What queries run against: the world's broadphase index (index.world() is the world) and the
// lazily built chunk meshes and kD-trees of smooth queries. Both observe the world's edits.
struct QueryEngine {
  const BroadphaseIndex& index;
  ChunkCollisionCache& cache;
  // Applies the edits of tick batches (QueryBatchRequest.edits); null: such batches are refused.
  EditBatcher* batcher = nullptr;
  // The world's navigation (FindPath); nav.nav null: navigation is off.
  NavContext nav = {};
  // The world's bodies (body filters, ValidateHit on a body); null: not served.
  const WorldBodies* bodies = nullptr;
  const World& world() const { return index.world(); }
};

// INVALID_ARGUMENT naming the field for bad input, DATA_LOSS for a chunk that could not be
// loaded, DEADLINE_EXCEEDED / CANCELLED when `interrupt` stopped a shape query (raycasts and probes
// are bounded by their limits and do not check it); otherwise fills `response` (without version).
absl::Status RunRaycast(const QueryEngine& engine, const ServiceLimits& limits,
                        const v1::RaycastRequest& request, v1::RaycastResponse* response,
                        const QueryInterrupt& interrupt = QueryInterrupt{});
absl::Status RunSweep(const QueryEngine& engine, const ServiceLimits& limits,
                      const v1::SweepRequest& request, v1::SweepResponse* response,
                      const QueryInterrupt& interrupt = QueryInterrupt{});
absl::Status RunOverlap(const QueryEngine& engine, const ServiceLimits& limits,
                        const v1::OverlapRequest& request, v1::OverlapResponse* response,
                        const QueryInterrupt& interrupt = QueryInterrupt{});
absl::Status RunContacts(const QueryEngine& engine, const ServiceLimits& limits,
                         const v1::ContactsRequest& request, v1::ContactsResponse* response,
                         const QueryInterrupt& interrupt = QueryInterrupt{});
absl::Status RunProbe(const QueryEngine& engine, const ServiceLimits& limits,
                      const v1::ProbeRequest& request, v1::ProbeResponse* response,
                      const QueryInterrupt& interrupt = QueryInterrupt{});
// The batch's packed raycasts (QueryBatchRequest.raycasts). INVALID_ARGUMENT naming the field for
// array lengths that do not fit together or an unknown mode (nothing runs); DEADLINE_EXCEEDED /
// CANCELLED when `interrupt` stopped it (checked every few rays); DATA_LOSS for a chunk that
// could not be loaded. A ray with a bad origin, direction or max_distance fails alone: its code
// in out->codes, and out->message names the first such ray's field. `out` is overwritten.
absl::Status RunRaycastArrays(const QueryEngine& engine, const ServiceLimits& limits,
                              const v1::RaycastArrays& request, v1::RaycastArrayResults* out,
                              const QueryInterrupt& interrupt = QueryInterrupt{});
// The number of rays in `request` (origins / 3, rounded down; CheckRaycastArrays checks the rest).
int RaycastArrayCount(const v1::RaycastArrays& request);
// INVALID_ARGUMENT naming the field when the arrays' lengths do not fit together (3 floats per ray
// in origins and directions, 1 or 1 per ray in max_distances) or a mode is unknown.
absl::Status CheckRaycastArrays(const v1::RaycastArrays& request);

// Every move is decoded and validated before any runs: the first bad one fails the whole request
// with INVALID_ARGUMENT naming "moves[i].<field>" (or "moves" beyond
// limits.max_characters_per_request). A move stopped by `interrupt`, a work budget or a chunk load
// error fails the whole request too (no partial results).
absl::Status RunMoveCharacters(const QueryEngine& engine, const ServiceLimits& limits,
                               const v1::MoveCharactersRequest& request,
                               v1::MoveCharactersResponse* response,
                               const QueryInterrupt& interrupt = QueryInterrupt{});

}  // namespace voxcol::server
