#include "client/render_rays.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol::client {
namespace {

RenderVec3 FromProto(const v1::Vec3& v) { return {v.x(), v.y(), v.z()}; }

// The hit a pixel shows: the first one, or with all_hits the first place the ray enters a surface
// (a ray that starts inside rock passes its exit); null for none.
const v1::RaycastHit* FirstEntry(const v1::RaycastResponse& response) {
  if (response.hits_size() == 0) return response.hit() ? &response.first() : nullptr;
  for (const v1::RaycastHit& h : response.hits()) {
    if (h.front_face()) return &h;
  }
  return nullptr;
}

// Shared between the thread that writes batches and the one that reads their answers.
struct StreamState {
  std::mutex mu;
  std::condition_variable cv;
  size_t next = 0;           // first batch never sent
  std::deque<size_t> retry;  // shed batches to send again
  int outstanding = 0;       // sent and not yet answered
  size_t completed = 0;      // answered successfully
  bool ended = false;        // the reader saw the end of the stream
  absl::Status error;        // the first failure
};

// Reads answers until the stream ends, storing hits and counting batches.
void ReadAnswers(grpc::ClientReaderWriter<v1::QueryBatchRequest, v1::QueryBatchResponse>* stream,
                 const std::vector<v1::RaycastRequest>& rays, StreamState* s,
                 const std::function<void(uint64_t)>& answered, std::vector<RayHit>* hits,
                 RenderStats* stats) {
  v1::QueryBatchResponse response;
  while (stream->Read(&response)) {
    absl::Status failed;
    if (response.code() == 0) {
      for (const v1::QueryResult& r : response.results()) {
        if (r.code() != 0) {
          failed = absl::Status(absl::StatusCode(r.code()), "raycast: " + r.message());
          break;
        }
        if (r.client_id() >= hits->size()) {
          failed = absl::InternalError("query batch: answer to an unknown query");
          break;
        }
        RayHit& h = (*hits)[r.client_id()];
        const v1::RaycastHit* found = FirstEntry(r.raycast());
        h.hit = found != nullptr;
        if (!h.hit) {
          // A cut-away ray that enters no surface: solid (the section through the rock).
          if (rays[r.client_id()].all_hits()) {
            h = {true, 0, FromProto(rays[r.client_id()].origin()), {0, 1, 0}, kSectionMaterial};
          }
          continue;
        }
        const v1::RaycastHit& first = *found;
        h.distance = first.distance();
        h.position = FromProto(first.position());
        h.normal = FromProto(first.normal());
        h.material = first.material();
      }
    }
    std::lock_guard<std::mutex> lock(s->mu);
    --s->outstanding;
    if (response.code() == int(grpc::StatusCode::RESOURCE_EXHAUSTED)) {
      s->retry.push_back(response.batch_id());
      ++stats->retried_batches;
    } else if (response.code() != 0 || !failed.ok()) {
      if (s->error.ok()) {
        s->error = failed.ok() ? absl::Status(absl::StatusCode(response.code()),
                                              "query batch: " + response.message())
                               : failed;
      }
    } else {
      if (s->completed++ == 0) stats->version = response.version();
      if (answered) answered(response.results_size());
    }
    s->cv.notify_all();
  }
  std::lock_guard<std::mutex> lock(s->mu);
  s->ended = true;
  s->cv.notify_all();
}

v1::QueryBatchRequest MakeBatch(const std::vector<v1::RaycastRequest>& rays, size_t batch,
                                int batch_rays) {
  v1::QueryBatchRequest request;
  request.set_batch_id(batch);
  size_t begin = batch * batch_rays, end = std::min(rays.size(), begin + batch_rays);
  for (size_t i = begin; i < end; ++i) {
    v1::QueryRequest* q = request.add_queries();
    q->set_client_id(i);
    *q->mutable_raycast() = rays[i];
  }
  return request;
}

}  // namespace

absl::Status CastRays(const std::shared_ptr<grpc::Channel>& channel,
                      const std::vector<v1::RaycastRequest>& rays, int batch_rays, int in_flight,
                      const std::function<void(uint64_t)>& answered, std::vector<RayHit>* hits,
                      RenderStats* stats) {
  hits->assign(rays.size(), RayHit());
  if (rays.empty()) return absl::OkStatus();
  const size_t batches = (rays.size() + batch_rays - 1) / batch_rays;
  auto stub = v1::QueryService::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Query(&context);
  StreamState s;
  std::thread reader(ReadAnswers, stream.get(), std::cref(rays), &s, std::cref(answered), hits,
                     stats);
  while (true) {
    size_t batch;
    bool resend = false;
    {
      std::unique_lock<std::mutex> lock(s.mu);
      s.cv.wait(lock, [&] {
        return !s.error.ok() || s.ended || s.completed == batches ||
               (s.outstanding < in_flight && (s.next < batches || !s.retry.empty()));
      });
      if (!s.error.ok() || s.ended || s.completed == batches) break;
      resend = !s.retry.empty();
      if (resend) {
        batch = s.retry.front();
        s.retry.pop_front();
      } else {
        batch = s.next++;
      }
      ++s.outstanding;
      ++stats->batches;
    }
    // A shed batch waits a little: the server's queue was full.
    if (resend) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!stream->Write(MakeBatch(rays, batch, batch_rays))) break;
  }
  stream->WritesDone();
  reader.join();
  grpc::Status finish = stream->Finish();
  stats->rays += rays.size();
  if (!s.error.ok()) return s.error;
  if (s.completed == batches) return absl::OkStatus();
  if (!finish.ok()) {
    return absl::Status(absl::StatusCode(finish.error_code()),
                        "query stream: " + finish.error_message());
  }
  return absl::UnavailableError("query stream ended before every batch was answered");
}

}  // namespace voxcol::client
