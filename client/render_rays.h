// Many raycasts through one Query stream: the engine under `voxcol render` (render.h).
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "client/render.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::client {

// The material of the section through rock in a cut-away map (outside the 0..255 of voxels).
constexpr uint32_t kSectionMaterial = 256;

// What a render needs of one RaycastResponse.
struct RayHit {
  bool hit = false;
  float distance = 0;
  RenderVec3 position, normal;
  uint32_t material = 0;
};

// Sends `rays` in QueryBatchRequests of `batch_rays` over one Query stream of `channel`, keeping
// up to `in_flight` batches unanswered, and stores the answer to rays[i] in (*hits)[i]. A batch
// shed with RESOURCE_EXHAUSTED is sent again after a short pause. `answered` (may be null) is
// called with the number of rays answered by each batch. Returns the first failed query's or
// batch's status (query errors carry the server's message naming the field). `stats` gets the
// batch counts and the version of the first batch. For rays with all_hits the hit stored is the
// first front face (where the ray enters a surface), so a ray starting inside rock shows what
// lies beyond it; one that enters none gets a hit of material kSectionMaterial at its origin.
absl::Status CastRays(const std::shared_ptr<grpc::Channel>& channel,
                      const std::vector<v1::RaycastRequest>& rays, int batch_rays, int in_flight,
                      const std::function<void(uint64_t)>& answered, std::vector<RayHit>* hits,
                      RenderStats* stats);

}  // namespace voxcol::client
