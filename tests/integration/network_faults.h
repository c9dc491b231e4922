// Shared by the network fault tests (replica_fault_test.cc, client_fault_test.cc): a writer that
// edits a primary continuously, and byte-for-byte comparisons of two servers' answers.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/voxcol_client.h"
#include "tests/integration/replica_queries.h"

namespace voxcol::testing {

using Clock = std::chrono::steady_clock;

inline double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline uint64_t WorldVersion(client::Client& client) {
  v1::GetWorldInfoResponse info;
  return client.GetWorldInfo(&info).ok() ? info.version() : 0;
}

// Edit batches on the primary at `per_second` on a thread of its own until Stop(): a ball (dug or
// built, radius 1.5-3.5) per batch and every 4th batch also a 16x6x16 block, so that the feed
// carries small and large batches (the block's voxels are about 3 KB).
class Writer {
 public:
  explicit Writer(const std::string& address) : client_(address) {}
  ~Writer() { Stop(); }

  void Start(double per_second) {
    thread_ = std::thread([this, per_second] { Run(per_second); });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint64_t last_version() const { return last_version_.load(); }
  int batches() const { return batches_.load(); }
  int errors() const { return errors_.load(); }

 private:
  void Run(double per_second) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> xz(-50, 50), y(-25, 35), r(1.5, 3.5);
    const auto period = std::chrono::duration<double>(1.0 / per_second);
    auto next = Clock::now();
    for (int k = 0; !stop_; ++k) {
      v1::ApplyEditsRequest request;
      v1::FillBallRequest* ball = request.add_primitives()->mutable_fill_ball();
      SetVec(ball->mutable_center(), xz(rng), y(rng), xz(rng));
      ball->set_radius(float(r(rng)));
      ball->set_material(k % 3 == 0 ? 0 : 2 + k % 4);
      if (k % 4 == 0) {
        v1::FillBlock* block = request.add_primitives()->mutable_fill_block();
        SetVec(block->mutable_center(), xz(rng), y(rng), xz(rng));
        SetVec(block->mutable_size(), 16, 6, 16);
        block->set_material(k % 8 == 0 ? 0 : 3);
      }
      v1::EditAck ack;
      if (client_.ApplyEdits(request, &ack).ok()) {
        last_version_ = ack.version();
        ++batches_;
      } else {
        ++errors_;
      }
      next += std::chrono::duration_cast<Clock::duration>(period);
      std::this_thread::sleep_until(next);
    }
  }

  client::Client client_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> last_version_{0};
  std::atomic<int> batches_{0}, errors_{0};
};

// Serialized with the timing fields cleared (server_micros and timing differ between runs).
inline std::string AnswerBytes(v1::QueryBatchResponse response) {
  response.clear_server_micros();
  response.clear_timing();
  std::string bytes;
  google::protobuf::io::StringOutputStream out(&bytes);
  google::protobuf::io::CodedOutputStream coded(&out);
  coded.SetSerializationDeterministic(true);
  response.SerializeToCodedStream(&coded);
  return bytes;
}

// A 24 x 24 grid of rays straight down plus 500 random rays, in batches of 300.
inline std::vector<v1::QueryBatchRequest> RayBatches() {
  std::vector<v1::QueryRequest> rays;
  for (int i = 0; i < 24; ++i) {
    for (int j = 0; j < 24; ++j) rays.push_back(DownRay(-57.5 + 5 * i, -57.5 + 5 * j));
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 500; ++i) rays.push_back(RandomRay(rng));
  std::vector<v1::QueryBatchRequest> batches;
  for (size_t i = 0; i < rays.size(); ++i) {
    if (i % 300 == 0) batches.emplace_back();
    *batches.back().add_queries() = rays[i];
  }
  return batches;
}

// Both servers at `version`: every voxel (ReadVoxels in slabs of 16 y-layers) and the answers of
// RayBatches() must be byte-identical, versions included.
inline void ExpectByteIdentical(client::Client& a, client::Client& b, uint64_t version) {
  v1::GetWorldInfoResponse info;
  ASSERT_TRUE(a.GetWorldInfo(&info).ok());
  const v1::VoxelBox& bounds = info.voxel_bounds();
  int slabs = 0;
  for (int y = bounds.min().y(); y < bounds.max().y(); y += 16, ++slabs) {
    v1::ReadVoxelsRequest request;
    *request.mutable_region() = bounds;
    request.mutable_region()->mutable_min()->set_y(y);
    request.mutable_region()->mutable_max()->set_y(std::min(y + 16, bounds.max().y()));
    v1::ReadVoxelsResponse ra, rb;
    ASSERT_TRUE(a.ReadVoxels(request, &ra).ok());
    ASSERT_TRUE(b.ReadVoxels(request, &rb).ok());
    ASSERT_EQ(ra.version(), version);
    ASSERT_EQ(rb.version(), version);
    ASSERT_TRUE(ra.SerializeAsString() == rb.SerializeAsString()) << "voxels differ at y " << y;
  }
  EXPECT_GE(slabs, 6);
  int hits = 0, queries = 0;
  for (v1::QueryBatchRequest& request : RayBatches()) {
    request.set_min_version(version);
    const v1::QueryBatchResponse ra = RunBatch(a, request), rb = RunBatch(b, request);
    ASSERT_EQ(ra.code(), 0) << ra.message();
    ASSERT_EQ(ra.version(), version);
    ASSERT_EQ(AnswerBytes(ra), AnswerBytes(rb)) << "raycast answers differ";
    for (const v1::QueryResult& result : ra.results()) hits += result.raycast().hit();
    queries += ra.results_size();
  }
  EXPECT_EQ(queries, 24 * 24 + 500);
  EXPECT_GT(hits, queries / 2);  // the comparison covered surfaces, not only misses
}

}  // namespace voxcol::testing
