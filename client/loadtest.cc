#include "client/loadtest.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"
#include "voxcol/v1/world_service.grpc.pb.h"

namespace voxcol::client {
namespace {

using Clock = std::chrono::steady_clock;

void SetVec(v1::Vec3* v, float x, float y, float z) {
  v->set_x(x);
  v->set_y(y);
  v->set_z(z);
}

// A character-sized capsule (1.8 tall, radius 0.4) standing at (x, y, z), upright.
void SetCapsule(v1::PosedShape* s, float x, float y, float z) {
  s->mutable_shape()->mutable_capsule()->set_half_height(0.5f);
  s->mutable_shape()->mutable_capsule()->set_radius(0.4f);
  SetVec(s->mutable_position(), x, y, z);
}

// A mixed batch in the play area: per four queries, two raycasts straight down from the sky (ground
// probes), one raycast in a random direction (line of sight) and one character-sized box probe.
// With `shape_queries`, per eight queries one ground probe becomes a capsule sweep (a character
// moving 8 units) and one line-of-sight ray a capsule contacts query.
v1::QueryBatchRequest RandomBatch(std::mt19937& rng, const v1::Box& b, int size, uint64_t id,
                                  bool shape_queries) {
  std::uniform_real_distribution<float> ux(b.min().x() + 1, b.max().x() - 1),
      uy(b.min().y() + 1, b.max().y() - 1), uz(b.min().z() + 1, b.max().z() - 1), ud(-1, 1);
  v1::QueryBatchRequest batch;
  batch.set_batch_id(id);
  for (int i = 0; i < size; ++i) {
    v1::QueryRequest* q = batch.add_queries();
    q->set_client_id(uint64_t(i));
    if (shape_queries && i % 8 == 1) {
      v1::SweepRequest* s = q->mutable_sweep();
      SetCapsule(s->mutable_shape(), ux(rng), uy(rng), uz(rng));
      SetVec(s->mutable_direction(), ud(rng), ud(rng), ud(rng) + 0.01f);
      s->set_distance(8);
      continue;
    }
    if (shape_queries && i % 8 == 6) {
      SetCapsule(q->mutable_contacts()->mutable_shape(), ux(rng), uy(rng), uz(rng));
      continue;
    }
    if (i % 4 == 3) {
      v1::ProbeRequest* p = q->mutable_probe();
      SetVec(p->mutable_box()->mutable_center(), ux(rng), uy(rng), uz(rng));
      SetVec(p->mutable_box()->mutable_half_extents(), 0.5f, 1.0f, 0.5f);
      continue;
    }
    v1::RaycastRequest* r = q->mutable_raycast();
    r->set_include_stats(true);  // cache_builds tells cold batches from warm ones
    if (i % 4 < 2) {
      SetVec(r->mutable_origin(), ux(rng), b.max().y() - 1, uz(rng));
      SetVec(r->mutable_direction(), 0, -1, 0);
      r->set_max_distance(b.max().y() - b.min().y());
    } else {
      SetVec(r->mutable_origin(), ux(rng), uy(rng), uz(rng));
      SetVec(r->mutable_direction(), ud(rng), ud(rng), ud(rng) + 0.01f);
      r->set_max_distance(64);
    }
  }
  return batch;
}

// Counts for the progress line, updated by every stream as it goes; latencies in power-of-two
// buckets of microseconds (bucket b holds [2^b, 2^(b+1)) us).
struct Live {
  static constexpr int kBuckets = 32;
  std::atomic<uint64_t> batches{0}, shed{0}, failed{0}, queries{0};
  std::atomic<uint64_t> buckets[kBuckets] = {};
  std::atomic<uint64_t> max_us{0};
  void Record(double ms) {
    const uint64_t us = uint64_t(std::max(1.0, ms * 1e3));
    int b = 0;
    while (b + 1 < kBuckets && (uint64_t(2) << b) <= us) ++b;
    buckets[b].fetch_add(1, std::memory_order_relaxed);
    uint64_t seen = max_us.load(std::memory_order_relaxed);
    while (us > seen && !max_us.compare_exchange_weak(seen, us, std::memory_order_relaxed)) {
    }
  }
};

struct Shared {
  Live live;
  std::mutex mu;
  LoadTestReport report;
  std::vector<double> latencies_ms;
  void Error(const std::string& e) {
    if (report.first_error.empty()) report.first_error = e;
  }
};

// Files a batch slower than kSlowBatchMs under the part of its round trip that dominated.
void ClassifySlow(const v1::QueryBatchResponse& response, double rtt_ms, LoadTestReport* report) {
  if (rtt_ms <= kSlowBatchMs) return;
  const v1::BatchTiming& t = response.timing();
  uint32_t builds = 0;
  for (const v1::QueryResult& r : response.results()) {
    if (r.has_raycast()) builds += r.raycast().stats().cache_builds();
  }
  const double queue = t.queue_micros() / 1e3, wait = t.wait_micros() / 1e3,
               run = t.run_micros() / 1e3, outside = rtt_ms - response.server_micros() / 1e3;
  ++report->slow_batches;
  const double top = std::max({queue, wait, run, outside});
  if (top == outside) {
    ++report->slow_outside;
  } else if (top == queue) {
    ++report->slow_queue;
  } else if (top == wait) {
    ++report->slow_wait;
  } else if (builds > 0) {
    ++report->slow_cold;
  } else {
    ++report->slow_warm;
  }
  if (rtt_ms > report->slowest_ms) {
    report->slowest_ms = rtt_ms;
    report->slowest_queue_ms = queue;
    report->slowest_wait_ms = wait;
    report->slowest_run_ms = run;
    report->slowest_cache_builds = builds;
  }
}

void RunStream(const LoadTestOptions& o, const v1::Box& bounds,
               std::shared_ptr<grpc::Channel> channel, int index, Clock::time_point end,
               Shared& shared) {
  auto stub = v1::QueryService::NewStub(channel);
  std::mt19937 rng(uint32_t(o.seed * 7919 + index));
  grpc::ClientContext context;
  auto stream = stub->Query(&context);
  LoadTestReport local;
  std::vector<double> latencies;
  for (uint64_t id = 0; Clock::now() < end; ++id) {
    v1::QueryBatchRequest batch = RandomBatch(rng, bounds, o.batch_size, id, o.shape_queries);
    Clock::time_point start = Clock::now();
    v1::QueryBatchResponse response;
    if (!stream->Write(batch) || !stream->Read(&response)) break;
    latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    ClassifySlow(response, latencies.back(), &local);
    shared.live.Record(latencies.back());
    shared.live.batches.fetch_add(1, std::memory_order_relaxed);
    if (response.code() == int(grpc::StatusCode::RESOURCE_EXHAUSTED)) {
      ++local.batches_shed;
      shared.live.shed.fetch_add(1, std::memory_order_relaxed);
    } else if (response.code() != 0) {
      ++local.batches_failed;
      shared.live.failed.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(shared.mu);
      shared.Error("batch: " + response.message());
    } else {
      ++local.batches_ok;
      local.queries += uint64_t(response.results_size());
      shared.live.queries.fetch_add(uint64_t(response.results_size()), std::memory_order_relaxed);
      for (const v1::QueryResult& r : response.results()) local.query_errors += r.code() != 0;
    }
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  std::lock_guard<std::mutex> lock(shared.mu);
  if (!status.ok()) {
    ++shared.report.batches_failed;
    shared.Error("stream: " + status.error_message());
  }
  shared.report.batches_ok += local.batches_ok;
  shared.report.batches_shed += local.batches_shed;
  shared.report.batches_failed += local.batches_failed;
  shared.report.queries += local.queries;
  shared.report.query_errors += local.query_errors;
  LoadTestReport& r = shared.report;
  r.slow_batches += local.slow_batches;
  r.slow_outside += local.slow_outside;
  r.slow_queue += local.slow_queue;
  r.slow_wait += local.slow_wait;
  r.slow_cold += local.slow_cold;
  r.slow_warm += local.slow_warm;
  if (local.slowest_ms > r.slowest_ms) {
    r.slowest_ms = local.slowest_ms;
    r.slowest_queue_ms = local.slowest_queue_ms;
    r.slowest_wait_ms = local.slowest_wait_ms;
    r.slowest_run_ms = local.slowest_run_ms;
    r.slowest_cache_builds = local.slowest_cache_builds;
  }
  shared.latencies_ms.insert(shared.latencies_ms.end(), latencies.begin(), latencies.end());
}

// Digs and builds small balls near the surface at a steady rate.
void RunEditor(const LoadTestOptions& o, const v1::Box& b, std::shared_ptr<grpc::Channel> channel,
               Clock::time_point end, Shared& shared) {
  auto stub = v1::EditService::NewStub(channel);
  std::mt19937 rng(uint32_t(o.seed));
  std::uniform_real_distribution<float> ux(b.min().x() + 8, b.max().x() - 8),
      uz(b.min().z() + 8, b.max().z() - 8), uy(b.min().y() * 0.3f, b.max().y() * 0.3f);
  auto period = std::chrono::duration<double>(1.0 / o.edits_per_second);
  Clock::time_point next = Clock::now();
  uint64_t ok = 0, failed = 0;
  while (Clock::now() < end) {
    v1::FillBallRequest request;
    SetVec(request.mutable_center(), ux(rng), uy(rng), uz(rng));
    request.set_radius(2 + float(rng() % 4));
    request.set_material(rng() % 2 ? 0 : 2);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::EditAck ack;
    grpc::Status status = stub->FillBall(&context, request, &ack);
    if (status.ok()) {
      ++ok;
    } else {
      ++failed;
      std::lock_guard<std::mutex> lock(shared.mu);
      shared.Error("edit: " + status.error_message());
    }
    next += std::chrono::duration_cast<Clock::duration>(period);
    std::this_thread::sleep_until(next);
  }
  std::lock_guard<std::mutex> lock(shared.mu);
  shared.report.edits_ok = ok;
  shared.report.edits_failed = failed;
}

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  size_t k = std::min(v.size() - 1, size_t(q * double(v.size())));
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return v[k];
}

// Calls o.progress once a second until `end`, with the interval's rate and latency.
void ReportProgress(const LoadTestOptions& o, Clock::time_point start, Clock::time_point end,
                    Live& live) {
  if (!o.progress) return;
  uint64_t last_queries = 0;
  uint64_t last_buckets[Live::kBuckets] = {};
  Clock::time_point last = start;
  while (Clock::now() < end) {
    std::this_thread::sleep_until(std::min(end, last + std::chrono::seconds(1)));
    const Clock::time_point now = Clock::now();
    LoadTestProgress p;
    p.elapsed_seconds = std::chrono::duration<double>(now - start).count();
    p.batches = live.batches.load(std::memory_order_relaxed);
    p.shed = live.shed.load(std::memory_order_relaxed);
    p.failed = live.failed.load(std::memory_order_relaxed);
    p.queries = live.queries.load(std::memory_order_relaxed);
    const double interval = std::chrono::duration<double>(now - last).count();
    p.queries_per_second = interval > 0 ? double(p.queries - last_queries) / interval : 0;
    uint64_t counts[Live::kBuckets], total = 0;
    for (int b = 0; b < Live::kBuckets; ++b) {
      const uint64_t c = live.buckets[b].load(std::memory_order_relaxed);
      counts[b] = c - last_buckets[b];
      last_buckets[b] = c;
      total += counts[b];
    }
    for (uint64_t seen = 0, b = 0; total > 0 && b < Live::kBuckets; ++b) {
      seen += counts[b];
      if (double(seen) >= 0.99 * double(total)) {
        p.p99_ms = double(uint64_t(2) << b) / 1e3;  // the bucket's upper bound
        break;
      }
    }
    p.max_ms = double(live.max_us.exchange(0, std::memory_order_relaxed)) / 1e3;
    last_queries = p.queries;
    last = now;
    o.progress(p);
  }
}

}  // namespace

// The world box, narrowed on X and Z to the play area around the origin.
v1::Box PlayArea(const v1::Box& world, float extent) {
  v1::Box b = world;
  if (extent <= 0) return b;
  b.mutable_min()->set_x(std::max(world.min().x(), -extent));
  b.mutable_min()->set_z(std::max(world.min().z(), -extent));
  b.mutable_max()->set_x(std::min(world.max().x(), extent));
  b.mutable_max()->set_z(std::min(world.max().z(), extent));
  return b;
}

LoadTestReport RunLoadTest(const LoadTestOptions& o) {
  auto channel = MakeChannel(o.server, o.security);
  Shared shared;
  v1::GetWorldInfoResponse info;
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status status = v1::WorldService::NewStub(channel)->GetWorldInfo(&context, {}, &info);
    if (!status.ok()) {
      shared.report.first_error = "info: " + status.error_message();
      shared.report.batches_failed = 1;
      return shared.report;
    }
  }
  const v1::Box area = PlayArea(info.bounds(), o.extent);
  Clock::time_point start = Clock::now();
  Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  // Four connections carry the streams, like several game servers sharing one service.
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int c = 0; c < 4; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("voxcol.connection", c);  // distinct arguments keep gRPC from sharing one socket
    channels.push_back(MakeChannel(o.server, o.security, args));
  }
  std::vector<std::thread> threads;
  for (int s = 0; s < o.streams; ++s) {
    threads.emplace_back(RunStream, std::cref(o), std::cref(area), channels[s % 4], s, end,
                         std::ref(shared));
  }
  if (o.edits_per_second > 0)
    threads.emplace_back(RunEditor, std::cref(o), std::cref(area), channel, end, std::ref(shared));
  ReportProgress(o, start, end, shared.live);
  for (std::thread& t : threads) t.join();
  shared.report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  shared.report.p50_ms = Percentile(shared.latencies_ms, 0.50);
  shared.report.p99_ms = Percentile(shared.latencies_ms, 0.99);
  shared.report.p999_ms = Percentile(shared.latencies_ms, 0.999);
  shared.report.max_ms =
      shared.latencies_ms.empty()
          ? 0
          : *std::max_element(shared.latencies_ms.begin(), shared.latencies_ms.end());
  return shared.report;
}

}  // namespace voxcol::client
