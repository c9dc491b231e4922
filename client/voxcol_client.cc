#include "client/voxcol_client.h"

namespace voxcol::client {

namespace {

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // ReadVoxels answers up to 2 bytes x 4M voxels
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

}  // namespace

Client::Client(const std::string& target, std::chrono::milliseconds timeout)
    : channel_(MakeChannel(target)),
      timeout_(timeout),
      world_(v1::WorldService::NewStub(channel_)),
      query_(v1::QueryService::NewStub(channel_)),
      edit_(v1::EditService::NewStub(channel_)),
      admin_(v1::AdminService::NewStub(channel_)) {}

grpc::Status Client::GetWorldInfo(v1::GetWorldInfoResponse* response) {
  return Unary(*world_, &v1::WorldService::Stub::GetWorldInfo, v1::GetWorldInfoRequest(), response);
}

grpc::Status Client::Raycast(const v1::RaycastRequest& request, v1::RaycastResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::Raycast, request, response);
}

grpc::Status Client::Overlap(const v1::OverlapRequest& request, v1::OverlapResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::Overlap, request, response);
}

grpc::Status Client::Probe(const v1::ProbeRequest& request, v1::ProbeResponse* response) {
  return Unary(*query_, &v1::QueryService::Stub::Probe, request, response);
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
  return edit_->Subscribe(context, request);
}

}  // namespace voxcol::client
