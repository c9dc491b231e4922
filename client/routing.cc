#include "client/routing.h"

#include <string_view>

namespace voxcol::client {

namespace {

uint64_t Mix(uint64_t z) {  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One Query batch on its own stream.
grpc::Status RunBatch(Client& client, const v1::QueryBatchRequest& request,
                      std::chrono::milliseconds timeout, v1::QueryBatchResponse* response) {
  auto stub = v1::QueryService::NewStub(client.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  auto stream = stub->Query(&context);
  stream->Write(request);
  stream->WritesDone();
  const bool answered = stream->Read(response);
  grpc::Status status = stream->Finish();
  if (!answered) {
    return status.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "no answer") : status;
  }
  return grpc::Status(grpc::StatusCode(response->code()), response->message());
}

// The floor's key: the default world under one name.
std::string WorldKey(const std::string& world) { return world.empty() ? "default" : world; }

// Whether another server may answer the batch: this one was unreachable or behind.
bool TryNext(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
          status.error_message().rfind("min_version", 0) == 0);
}

}  // namespace

uint64_t RendezvousWeight(std::string_view world_id, int ordinal) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  auto add = [&h](unsigned char c) { h = (h ^ c) * 0x100000001b3ULL; };
  for (char c : world_id) add(static_cast<unsigned char>(c));
  add(0);  // separates the id from the ordinal
  for (int i = 0; i < 4; ++i) add(static_cast<unsigned char>(uint32_t(ordinal) >> (8 * i)));
  return Mix(h);
}

int RendezvousOwner(std::string_view world_id, int primaries) {
  int owner = 0;
  uint64_t best = RendezvousWeight(world_id, 0);
  for (int ordinal = 1; ordinal < primaries; ++ordinal) {
    const uint64_t weight = RendezvousWeight(world_id, ordinal);
    if (weight > best) best = weight, owner = ordinal;
  }
  return owner;
}

std::string StatefulPodAddress(const std::string& statefulset, int ordinal,
                               const std::string& service, int port) {
  return statefulset + "-" + std::to_string(ordinal) + "." + service + ":" + std::to_string(port);
}

RoutedClient::RoutedClient(const RoutingTargets& targets)
    : primary_(std::make_unique<Client>(targets.primary, targets.timeout, targets.security)),
      timeout_(targets.timeout) {
  for (const std::string& replica : targets.replicas) {
    replicas_.push_back(std::make_unique<Client>(replica, targets.timeout, targets.security));
  }
}

uint64_t RoutedClient::read_floor(const std::string& world) const {
  const std::string_view key = world.empty() ? std::string_view("default") : world;
  std::lock_guard<std::mutex> lock(floor_mu_);
  auto it = floors_.find(key);  // heterogeneous: no string built per query
  return it == floors_.end() ? 0 : it->second;
}

void RoutedClient::RaiseFloor(uint64_t version, const std::string& world) {
  std::lock_guard<std::mutex> lock(floor_mu_);
  uint64_t& floor = floors_[WorldKey(world)];
  floor = std::max(floor, version);
}

grpc::Status RoutedClient::ApplyEdits(const v1::ApplyEditsRequest& request, v1::EditAck* ack) {
  grpc::Status status = primary_->ApplyEdits(request, ack);
  if (status.ok()) RaiseFloor(ack->version(), request.world());
  return status;
}

grpc::Status RoutedClient::FillBall(const v1::FillBallRequest& request, v1::EditAck* ack) {
  grpc::Status status = primary_->FillBall(request, ack);
  if (status.ok()) RaiseFloor(ack->version(), request.world());
  return status;
}

grpc::Status RoutedClient::Query(v1::QueryBatchRequest request, v1::QueryBatchResponse* response) {
  request.set_min_version(std::max(request.min_version(), read_floor(request.world())));
  // Replicas follow every world of their primary; a batch with edits goes to the primary.
  if (!request.has_edits()) {
    const size_t n = replicas_.size();
    const size_t first = size_t(next_replica_.fetch_add(1, std::memory_order_relaxed));
    for (size_t i = 0; i < n; ++i) {
      grpc::Status status = RunBatch(*replicas_[(first + i) % n], request, timeout_, response);
      if (!TryNext(status)) return status;
    }
  }
  grpc::Status status = RunBatch(*primary_, request, timeout_, response);
  if (status.ok() && response->has_edit_ack()) {
    RaiseFloor(response->edit_ack().version(), request.world());
  }
  return status;
}

}  // namespace voxcol::client
