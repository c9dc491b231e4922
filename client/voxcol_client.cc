#include "client/voxcol_client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/support/client_interceptor.h>

#include <random>
#include <utility>

namespace voxcol::client {

namespace {

// Adds the bearer token to every call of the channel.
class TokenInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace("authorization", *header_);
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class TokenInterceptorFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(const std::string& token) : header_("Bearer " + token) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new TokenInterceptor(&header_);
  }

 private:
  const std::string header_;  // lives as long as the channel, which owns the factory
};

}  // namespace

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           const ChannelSecurity& security,
                                           grpc::ChannelArguments args) {
  args.SetMaxReceiveMessageSize(-1);  // ReadVoxels answers up to 2 bytes x 4M voxels
  args.SetMaxSendMessageSize(-1);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (security.tls || !security.ca_pem.empty() || !security.cert_pem.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = security.ca_pem;
    ssl.pem_cert_chain = security.cert_pem;
    ssl.pem_private_key = security.key_pem;
    credentials = grpc::SslCredentials(ssl);
    if (!security.server_name.empty()) {
      args.SetSslTargetNameOverride(security.server_name);
    }
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  if (!security.token.empty()) {
    interceptors.push_back(std::make_unique<TokenInterceptorFactory>(security.token));
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials, args,
                                                                 std::move(interceptors));
}

Client::Client(const std::string& target, std::chrono::milliseconds timeout,
               const ChannelSecurity& security)
    : channel_(MakeChannel(target, security)),
      timeout_(timeout),
      world_(v1::WorldService::NewStub(channel_)),
      query_(v1::QueryService::NewStub(channel_)),
      edit_(v1::EditService::NewStub(channel_)),
      admin_(v1::AdminService::NewStub(channel_)),
      replica_(v1::ReplicaService::NewStub(channel_)),
      bodies_(v1::BodyService::NewStub(channel_)) {}

grpc::Status Client::GetWorldInfo(v1::GetWorldInfoResponse* response) {
  return GetWorldInfo(v1::GetWorldInfoRequest(), response);
}

grpc::Status Client::GetWorldInfo(const v1::GetWorldInfoRequest& request,
                                  v1::GetWorldInfoResponse* response) {
  return Unary(*world_, &v1::WorldService::Stub::GetWorldInfo, request, response);
}

grpc::Status Client::CreateWorld(const v1::CreateWorldRequest& request,
                                 v1::WorldSummary* response) {
  // The request's own `world` is the new world's id: never filled in from SetWorld.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout_);
  return world_->CreateWorld(&context, request, response);
}

grpc::Status Client::GetReplicaStatus(v1::GetReplicaStatusResponse* response) {
  return Unary(*replica_, &v1::ReplicaService::Stub::GetReplicaStatus,
               v1::GetReplicaStatusRequest(), response);
}

grpc::Status Client::DeleteWorld(const std::string& world) {
  v1::DeleteWorldRequest request;
  request.set_world(world);
  v1::DeleteWorldResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout_);
  return world_->DeleteWorld(&context, request, &response);
}

grpc::Status Client::ListWorlds(v1::ListWorldsResponse* response) {
  return ListWorlds(v1::ListWorldsRequest(), response);
}

grpc::Status Client::ListWorlds(const v1::ListWorldsRequest& request,
                                v1::ListWorldsResponse* response) {
  return Unary(*world_, &v1::WorldService::Stub::ListWorlds, request, response);
}

grpc::Status Client::Raycast(const v1::RaycastRequest& request, v1::RaycastResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::Raycast, request, response);
}

grpc::Status Client::ValidateHit(const v1::ValidateHitRequest& request,
                                 v1::ValidateHitResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::ValidateHit, request, response);
}

grpc::Status Client::Overlap(const v1::OverlapRequest& request, v1::OverlapResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::Overlap, request, response);
}

grpc::Status Client::Probe(const v1::ProbeRequest& request, v1::ProbeResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::Probe, request, response);
}

grpc::Status Client::MoveCharacters(const v1::MoveCharactersRequest& request,
                                    v1::MoveCharactersResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::MoveCharacters, request, response);
}

grpc::Status Client::FindPath(const v1::FindPathRequest& request, v1::FindPathResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::FindPath, request, response);
}

grpc::Status Client::GetNavMesh(const v1::GetNavMeshRequest& request,
                                v1::GetNavMeshResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::GetNavMesh, request, response);
}

grpc::Status Client::UpdateBodies(const v1::UpdateBodiesRequest& request,
                                  v1::UpdateBodiesResponse* response) {
  return Unary(*bodies_, &v1::BodyService::Stub::UpdateBodies, request, response);
}

grpc::Status Client::ListBodies(const v1::ListBodiesRequest& request,
                                v1::ListBodiesResponse* response) {
  return Unary(*bodies_, &v1::BodyService::Stub::ListBodies, request, response);
}

grpc::Status Client::Sweep(const v1::SweepRequest& request, v1::SweepResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::Sweep, request, response);
}

grpc::Status Client::Contacts(const v1::ContactsRequest& request, v1::ContactsResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::Contacts, request, response);
}

grpc::Status Client::FillBall(const v1::FillBallRequest& request, v1::EditAck* response) {
  return Unary(*edit_, &v1::EditService::Stub::FillBall, request, response);
}

grpc::Status Client::CreateCheckpoint(const v1::CreateCheckpointRequest& request,
                                      v1::CreateCheckpointResponse* response) {
  return Unary(*admin_, &v1::AdminService::Stub::CreateCheckpoint, request, response);
}

grpc::Status Client::ExportRegion(const v1::ExportRegionRequest& request,
                                  v1::ExportRegionResponse* response) {
  return Unary(*admin_, &v1::AdminService::Stub::ExportRegion, request, response);
}

grpc::Status Client::ImportRegion(const v1::ImportRegionRequest& request, v1::EditAck* response) {
  return Unary(*admin_, &v1::AdminService::Stub::ImportRegion, request, response);
}

grpc::Status Client::ApplyEdits(const v1::ApplyEditsRequest& request, v1::EditAck* response) {
  return Unary(*edit_, &v1::EditService::Stub::ApplyEdits, request, response);
}

grpc::Status Client::ReadVoxels(const v1::ReadVoxelsRequest& request,
                                v1::ReadVoxelsResponse* response) {
  return Unary(*edit_, &v1::EditService::Stub::ReadVoxels, request, response);
}

grpc::Status Client::WriteVoxels(const v1::WriteVoxelsRequest& request, v1::EditAck* response) {
  return Unary(*edit_, &v1::EditService::Stub::WriteVoxels, request, response);
}

std::unique_ptr<grpc::ClientReader<v1::SubscribeResponse>> Client::Subscribe(
    grpc::ClientContext* context, const v1::SubscribeRequest& request) {
  if (!world_name_.empty() && request.world().empty()) {
    v1::SubscribeRequest named = request;
    named.set_world(world_name_);
    return edit_->Subscribe(context, named);
  }
  return edit_->Subscribe(context, request);
}

std::unique_ptr<grpc::ClientReaderWriter<v1::EditStreamRequest, v1::EditStreamResponse>>
Client::EditStream(grpc::ClientContext* context) {
  return edit_->EditStream(context);
}

std::unique_ptr<grpc::ClientReaderWriter<v1::WatchPathsRequest, v1::WatchPathsResponse>>
Client::WatchPaths(grpc::ClientContext* context) {
  return query_->WatchPaths(context);
}

v1::WatchPathsRequest Client::WatchRequest(uint64_t id, const v1::FindPathRequest& request,
                                           float shorter_margin) const {
  v1::WatchPathsRequest out;
  v1::PathWatch* watch = out.mutable_watch();
  watch->set_watch_id(id);
  *watch->mutable_path() = request;
  if (request.world().empty()) watch->mutable_path()->set_world(world_name_);
  watch->set_shorter_margin(shorter_margin);
  return out;
}

namespace {

std::string RandomKeyPrefix() {
  std::random_device random;
  std::mt19937_64 bits((uint64_t(random()) << 32) ^ random());
  char text[40];
  snprintf(text, sizeof(text), "es-%016llx%016llx-", (unsigned long long)bits(),
           (unsigned long long)bits());
  return text;
}

}  // namespace

EditStreamSession::EditStreamSession(Client& client, std::string key_prefix)
    : client_(client), key_prefix_(key_prefix.empty() ? RandomKeyPrefix() : std::move(key_prefix)) {
  Open();
}

EditStreamSession::~EditStreamSession() {
  if (context_) context_->TryCancel();
  if (stream_) stream_->Finish();
}

void EditStreamSession::Open() {
  context_ = std::make_unique<grpc::ClientContext>();
  stream_ = client_.EditStream(context_.get());
  broken_ = false;
}

bool EditStreamSession::Send(v1::ApplyEditsRequest edits, uint64_t* batch_id) {
  Sent sent{next_batch_id_++, {}};
  if (edits.idempotency_key().empty())
    edits.set_idempotency_key(key_prefix_ + std::to_string(sent.batch_id));
  sent.request.set_batch_id(sent.batch_id);
  sent.request.set_world(edits.world().empty() ? client_.world() : edits.world());
  *sent.request.mutable_edits() = std::move(edits);
  if (batch_id != nullptr) *batch_id = sent.batch_id;
  unacked_.push_back(std::move(sent));
  if (!broken_ && !stream_->Write(unacked_.back().request)) broken_ = true;
  return !broken_;
}

bool EditStreamSession::Next(v1::EditStreamResponse* response) {
  if (unacked_.empty() || broken_) return false;
  if (!stream_->Read(response)) {
    broken_ = true;
    return false;
  }
  // The server answers in send order; anything else is a protocol error.
  if (response->batch_id() != unacked_.front().batch_id) {
    broken_ = true;
    return false;
  }
  unacked_.pop_front();
  return true;
}

bool EditStreamSession::Reconnect(std::chrono::milliseconds timeout) {
  if (context_) context_->TryCancel();
  if (stream_) stream_->Finish();
  stream_.reset();
  if (!client_.channel()->WaitForConnected(std::chrono::system_clock::now() + timeout))
    return false;
  Open();
  for (const Sent& sent : unacked_) {
    if (!stream_->Write(sent.request)) {
      broken_ = true;
      return false;
    }
  }
  return true;
}

grpc::Status EditStreamSession::Finish() {
  if (!broken_) stream_->WritesDone();
  v1::EditStreamResponse extra;
  while (stream_->Read(&extra)) {
  }
  grpc::Status status = stream_->Finish();
  stream_.reset();
  context_.reset();
  return status;
}

}  // namespace voxcol::client
