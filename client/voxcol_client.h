// C++ client library for the voxcol.v1 API: a thin typed wrapper over the generated stubs.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "voxcol/v1/admin_service.grpc.pb.h"
#include "voxcol/v1/body_service.grpc.pb.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"
#include "voxcol/v1/replica_service.grpc.pb.h"
#include "voxcol/v1/world_service.grpc.pb.h"

namespace voxcol::client {

// How a channel reaches the server: plaintext by default; TLS when `tls` is set or any PEM is
// given (server verified against `ca_pem`, else the system roots); mutual TLS with `cert_pem` and
// `key_pem`; `token` is sent as `authorization: Bearer <token>` on every call.
struct ChannelSecurity {
  bool tls = false;
  std::string ca_pem, cert_pem, key_pem;
  std::string server_name;  // expected name in the server certificate; empty: the target's host
  std::string token;
};

// A channel to `target` with unlimited message sizes and `security`.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           const ChannelSecurity& security = {},
                                           grpc::ChannelArguments args = {});

// Whether request type T has a `world` field (issue 22).
template <typename T, typename = void>
struct HasWorld : std::false_type {};
template <typename T>
struct HasWorld<T, std::void_t<decltype(std::declval<const T&>().world())>> : std::true_type {};

class Client {
 public:
  // `target` is a gRPC target such as "127.0.0.1:50051". Every call gets `timeout` as deadline.
  explicit Client(const std::string& target,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10),
                  const ChannelSecurity& security = {});

  // Names the world every later request of this client is about when the request names none
  // itself (issue 22); empty (the default) leaves requests as they are: the server's default world.
  void SetWorld(std::string world) { world_name_ = std::move(world); }
  const std::string& world() const { return world_name_; }

  grpc::Status GetWorldInfo(v1::GetWorldInfoResponse* response);
  grpc::Status GetWorldInfo(const v1::GetWorldInfoRequest& request,
                            v1::GetWorldInfoResponse* response);
  // Worlds on the server (WorldService): create (from settings or a template), delete, list.
  grpc::Status CreateWorld(const v1::CreateWorldRequest& request, v1::WorldSummary* response);
  grpc::Status DeleteWorld(const std::string& world);
  grpc::Status ListWorlds(v1::ListWorldsResponse* response);
  grpc::Status ListWorlds(const v1::ListWorldsRequest& request, v1::ListWorldsResponse* response);
  grpc::Status Raycast(const v1::RaycastRequest& request, v1::RaycastResponse* response);
  grpc::Status Sweep(const v1::SweepRequest& request, v1::SweepResponse* response);
  // Exact overlap of a posed shape.
  grpc::Status Overlap(const v1::OverlapRequest& request, v1::OverlapResponse* response);
  grpc::Status Contacts(const v1::ContactsRequest& request, v1::ContactsResponse* response);
  // Conservative box / sphere probe at broadphase precision.
  grpc::Status Probe(const v1::ProbeRequest& request, v1::ProbeResponse* response);
  // One tick of the character controller for every move of the request.
  grpc::Status MoveCharacters(const v1::MoveCharactersRequest& request,
                              v1::MoveCharactersResponse* response);
  // Lag-compensated hit validation (QueryService.ValidateHit).
  grpc::Status ValidateHit(const v1::ValidateHitRequest& request,
                           v1::ValidateHitResponse* response);
  // The shortest walkable path for an agent profile (QueryService.FindPath); the path's own
  // outcome (OK, NO_PATH, START_OFF_MESH, ...) is response->status().
  grpc::Status FindPath(const v1::FindPathRequest& request, v1::FindPathResponse* response);
  // The navmesh polygons of a box's tiles, for drawing (QueryService.GetNavMesh).
  grpc::Status GetNavMesh(const v1::GetNavMeshRequest& request, v1::GetNavMeshResponse* response);
  // One game tick's body changes, all or nothing (BodyService.UpdateBodies; session state).
  grpc::Status UpdateBodies(const v1::UpdateBodiesRequest& request,
                            v1::UpdateBodiesResponse* response);
  // The live bodies at the latest tick and the tick window (BodyService.ListBodies).
  grpc::Status ListBodies(const v1::ListBodiesRequest& request, v1::ListBodiesResponse* response);
  grpc::Status FillBall(const v1::FillBallRequest& request, v1::EditAck* response);
  grpc::Status CreateCheckpoint(const v1::CreateCheckpointRequest& request,
                                v1::CreateCheckpointResponse* response);
  grpc::Status ExportRegion(const v1::ExportRegionRequest& request,
                            v1::ExportRegionResponse* response);
  grpc::Status ImportRegion(const v1::ImportRegionRequest& request, v1::EditAck* response);
  grpc::Status ApplyEdits(const v1::ApplyEditsRequest& request, v1::EditAck* response);
  grpc::Status ReadVoxels(const v1::ReadVoxelsRequest& request, v1::ReadVoxelsResponse* response);
  grpc::Status WriteVoxels(const v1::WriteVoxelsRequest& request, v1::EditAck* response);
  // A read replica's lag and state (ReplicaService); FAILED_PRECONDITION from a primary.
  grpc::Status GetReplicaStatus(v1::GetReplicaStatusResponse* response);

  // Opens the change feed. Streams have no deadline: `context` (owned by the caller, alive until
  // the reader is finished) can cancel it with TryCancel(). Read() responses until it returns
  // false, then call Finish() for the status.
  std::unique_ptr<grpc::ClientReader<v1::SubscribeResponse>> Subscribe(
      grpc::ClientContext* context, const v1::SubscribeRequest& request);

  // Opens an EditStream (no deadline; `context` as for Subscribe). EditStreamSession wraps it.
  std::unique_ptr<grpc::ClientReaderWriter<v1::EditStreamRequest, v1::EditStreamResponse>>
  EditStream(grpc::ClientContext* context);

  // Opens a WatchPaths stream (no deadline; `context` as for Subscribe): Write() watch and
  // unwatch requests, Read() events (REGISTERED, BLOCKED, SHORTER, UNWATCHED, REFUSED) until it
  // returns false, then Finish(). Watches whose path.world is empty get this client's world.
  std::unique_ptr<grpc::ClientReaderWriter<v1::WatchPathsRequest, v1::WatchPathsResponse>>
  WatchPaths(grpc::ClientContext* context);
  // A watch request for the path `request` would find (the server plans it; the REGISTERED event
  // carries it), as watch `id`; `shorter_margin` > 0 also asks for SHORTER events (world units).
  v1::WatchPathsRequest WatchRequest(uint64_t id, const v1::FindPathRequest& request,
                                     float shorter_margin = 0) const;

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 private:
  // One unary call of `stub` with this client's deadline.
  template <typename Stub, typename Request, typename Response>
  grpc::Status Unary(Stub& stub,
                     grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                     const Request& request, Response* response) const {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout_);
    if constexpr (HasWorld<Request>::value) {
      if (!world_name_.empty() && request.world().empty()) {
        Request named = request;
        named.set_world(world_name_);
        return (stub.*method)(&context, named, response);
      }
    }
    return (stub.*method)(&context, request, response);
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::chrono::milliseconds timeout_;
  std::string world_name_;  // SetWorld
  std::unique_ptr<v1::WorldService::Stub> world_;
  std::unique_ptr<v1::QueryService::Stub> query_;
  std::unique_ptr<v1::EditService::Stub> edit_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
  std::unique_ptr<v1::ReplicaService::Stub> replica_;
  std::unique_ptr<v1::BodyService::Stub> bodies_;
};

// Edit batches over one EditStream with many in flight. Send() queues a batch, Next() returns the
// responses in send order. Every batch carries an idempotency key (the caller's, or
// "<key_prefix><batch id>"), so after the stream breaks (Next() returns false, e.g. the server
// restarted) Reconnect() resends the unacknowledged batches in order and batches the server had
// already applied come back as replays instead of being applied twice. Not thread-safe: one
// thread sends and receives; keep at most a few hundred batches unacknowledged.
class EditStreamSession {
 public:
  // `client` must outlive the session. `key_prefix` must be unique per session (e.g. a UUID) and
  // at most 100 bytes; empty = a random one.
  explicit EditStreamSession(Client& client, std::string key_prefix = "");
  ~EditStreamSession();

  // Sends a batch and returns its batch id (1, 2, ... per session). False if the stream is broken
  // (the batch is still kept and sent by Reconnect()).
  bool Send(v1::ApplyEditsRequest edits, uint64_t* batch_id = nullptr);
  // The response to the oldest unacknowledged batch; blocks. False when the stream ended first:
  // call Reconnect(), or Finish() for the reason.
  bool Next(v1::EditStreamResponse* response);
  // Opens a new stream once the channel connects (waiting at most `timeout`) and resends every
  // unacknowledged batch in order. False if the channel did not connect or a resend failed.
  bool Reconnect(std::chrono::milliseconds timeout);
  // Half-closes the stream and returns its status (OK once every batch was answered).
  grpc::Status Finish();

  size_t unacknowledged() const { return unacked_.size(); }
  const std::string& key_prefix() const { return key_prefix_; }

 private:
  struct Sent {
    uint64_t batch_id;
    v1::EditStreamRequest request;
  };
  void Open();

  Client& client_;
  std::string key_prefix_;
  uint64_t next_batch_id_ = 1;
  std::deque<Sent> unacked_;  // in send order
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::EditStreamRequest, v1::EditStreamResponse>> stream_;
  bool broken_ = false;  // a write or read failed on stream_
};

}  // namespace voxcol::client
