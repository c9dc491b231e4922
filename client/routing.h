// Routing over primaries and read replicas (issue 22, docs/operations.md "Read replicas and
// placement on Kubernetes").
//
// Placement: worlds are placed on the primaries of a StatefulSet by rendezvous (highest random
// weight) hashing of the world id over the pod ordinals 0..n-1: the owner is the ordinal with the
// highest RendezvousWeight(world, ordinal). Every client computes the same owner without a
// directory; scaling the set from n to n+1 moves only the worlds whose new weight wins (about
// 1/(n+1) of them, all to the new ordinal), and scaling down moves only the removed ordinal's.
//
// RoutedClient sends edits to one world's primary and spreads queries over its replicas (round
// robin), with read-your-writes: every Query batch carries min_version >= the version of the last
// edit this client had acknowledged in the batch's world (versions are per world, so the floor is
// kept per world), so a replica answers only once it has applied that edit (it waits up to the
// server's --max_min_version_wait_ms). Replicas follow every world of their primary. A replica that
// cannot answer (unreachable, or still behind: FAILED_PRECONDITION for min_version) is skipped and
// the batch goes to the next replica, finally to the primary.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "voxcol_client.h"  // relative: resolves in the tree and in <prefix>/include/voxcol/client

namespace voxcol::client {

// The weight of `world_id` on primary `ordinal`: FNV-1a 64 over the id's bytes, a zero byte and
// the ordinal's 4 little-endian bytes, finished with splitmix64's mixer. Stable across processes,
// platforms and releases (other languages reimplement it from this definition).
uint64_t RendezvousWeight(std::string_view world_id, int ordinal);
// The ordinal in [0, primaries) that owns `world_id` (highest weight, ties to the lower
// ordinal). Precondition: primaries >= 1.
int RendezvousOwner(std::string_view world_id, int primaries);

// The stable DNS name of pod `ordinal` of a StatefulSet behind its headless Service:
// "<statefulset>-<ordinal>.<service>:<port>" (add ".<namespace>.svc" outside the namespace).
std::string StatefulPodAddress(const std::string& statefulset, int ordinal,
                               const std::string& service, int port);

struct RoutingTargets {
  std::string primary;                // host:port of the world's primary
  std::vector<std::string> replicas;  // host:port of its replicas; empty: queries go to the primary
  ChannelSecurity security;
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
};

class RoutedClient {
 public:
  explicit RoutedClient(const RoutingTargets& targets);

  // Edits through the primary; an ack raises the read-your-writes floor of the request's world
  // (empty = "default") to its version.
  grpc::Status ApplyEdits(const v1::ApplyEditsRequest& request, v1::EditAck* ack);
  grpc::Status FillBall(const v1::FillBallRequest& request, v1::EditAck* ack);
  // One Query batch on a replica (round robin), min_version raised to the floor of its world;
  // falls back to the next replica and then the primary as described above. A batch with edits
  // goes to the primary.
  grpc::Status Query(v1::QueryBatchRequest request, v1::QueryBatchResponse* response);

  // The version of the newest edit this client had acknowledged in `world` (empty = "default";
  // 0: none).
  uint64_t read_floor(const std::string& world = "") const;
  // Raises the floor of `world`, e.g. to a version another client reported.
  void RaiseFloor(uint64_t version, const std::string& world = "");
  Client& primary() { return *primary_; }
  size_t replica_count() const { return replicas_.size(); }

 private:
  std::unique_ptr<Client> primary_;
  std::vector<std::unique_ptr<Client>> replicas_;
  std::chrono::milliseconds timeout_;
  mutable std::mutex floor_mu_;
  std::map<std::string, uint64_t, std::less<>> floors_;  // by world id ("default" for empty)
  std::atomic<uint64_t> next_replica_{0};
};

}  // namespace voxcol::client
