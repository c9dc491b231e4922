// Queries shared by the read-replica tests (replica_test.cc, replica_worlds_test.cc): rays on the
// 128x96x128 test worlds and one Query batch on a stream of its own.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <random>

#include "client/voxcol_client.h"
#include "tests/integration/proto_values.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol::testing {

// A ray from anywhere in the middle of the world in a random, mostly downward direction.
inline v1::QueryRequest RandomRay(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-60, 60), d(-1, 1);
  v1::QueryRequest q;
  v1::RaycastRequest* r = q.mutable_raycast();
  SetVec(r->mutable_origin(), u(rng), u(rng) * 0.7, u(rng));
  SetVec(r->mutable_direction(), d(rng), d(rng) - 0.3, d(rng));
  r->set_max_distance(150);
  return q;
}

// Straight down from the top of the world at (x, z).
inline v1::QueryRequest DownRay(double x, double z) {
  v1::QueryRequest q;
  v1::RaycastRequest* r = q.mutable_raycast();
  SetVec(r->mutable_origin(), x, 47.5, z);
  SetVec(r->mutable_direction(), 0, -1, 0);
  r->set_max_distance(95);
  return q;
}

// One query batch on its own stream (a stream per call keeps the helper simple); code -1 when
// no response came.
inline v1::QueryBatchResponse RunBatch(client::Client& client,
                                       const v1::QueryBatchRequest& request) {
  auto stub = v1::QueryService::NewStub(client.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto stream = stub->Query(&context);
  v1::QueryBatchResponse response;
  stream->Write(request);
  stream->WritesDone();
  if (!stream->Read(&response)) response.set_code(-1);
  stream->Finish();
  return response;
}

}  // namespace voxcol::testing
