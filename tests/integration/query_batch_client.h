// Sends one Query batch on a fresh stream and returns its response (integration tests).
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>

#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol::testing {

inline v1::QueryBatchResponse RunOneBatch(v1::QueryService::Stub& stub,
                                          const v1::QueryBatchRequest& batch) {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::QueryBatchRequest, v1::QueryBatchResponse>> stream =
      stub.Query(&context);
  v1::QueryBatchResponse response;
  EXPECT_TRUE(stream->Write(batch));
  stream->WritesDone();
  EXPECT_TRUE(stream->Read(&response));
  grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

}  // namespace voxcol::testing
