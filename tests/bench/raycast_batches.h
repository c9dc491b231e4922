// The Query-stream raycast batches shared by the stream and past-version benchmarks: kBatchRays
// downward rays over the bench cave world (DownwardRays, seed 9), cut into batches of `size`.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/bench/bench_scenes.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::bench {

constexpr int kBatchRays = 4096;

// With `at_version`, every batch reads that version (QueryBatchRequest.read_at).
inline std::vector<v1::QueryBatchRequest> RaycastBatches(int size,
                                                         const uint64_t* at_version = nullptr) {
  const std::vector<RaycastInput> rays = DownwardRays(BenchCaveWorld(), kBatchRays, 9);
  std::vector<v1::QueryBatchRequest> batches;
  for (int b = 0; b < kBatchRays / size; ++b) {
    v1::QueryBatchRequest& batch = batches.emplace_back();
    if (at_version != nullptr) batch.mutable_read_at()->set_at_version(*at_version);
    for (int i = 0; i < size; ++i) {
      const RaycastInput& r = rays[(size_t(b) * size + i) % rays.size()];
      v1::QueryRequest* q = batch.add_queries();
      q->set_client_id(i);
      auto* ray = q->mutable_raycast();
      ray->mutable_origin()->set_x(r.origin.x);
      ray->mutable_origin()->set_y(r.origin.y);
      ray->mutable_origin()->set_z(r.origin.z);
      ray->mutable_direction()->set_x(r.direction.x);
      ray->mutable_direction()->set_y(r.direction.y);
      ray->mutable_direction()->set_z(r.direction.z);
      ray->set_max_distance(r.max_distance);
    }
  }
  return batches;
}

// The same rays as RaycastBatches, each batch's rays as one QueryBatchRequest.raycasts (packed
// arrays) instead of one QueryRequest per ray.
inline std::vector<v1::QueryBatchRequest> RaycastArrayBatches(int size) {
  std::vector<v1::QueryBatchRequest> batches = RaycastBatches(size);
  for (v1::QueryBatchRequest& batch : batches) {
    v1::RaycastArrays* arrays = batch.mutable_raycasts();
    for (const v1::QueryRequest& q : batch.queries()) {
      const v1::RaycastRequest& ray = q.raycast();
      for (const v1::Vec3* v : {&ray.origin(), &ray.direction()}) {
        auto* out = v == &ray.origin() ? arrays->mutable_origins() : arrays->mutable_directions();
        out->Add(v->x());
        out->Add(v->y());
        out->Add(v->z());
      }
      arrays->add_max_distances(ray.max_distance());
    }
    batch.clear_queries();
  }
  return batches;
}

}  // namespace voxcol::bench
