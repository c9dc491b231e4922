// Shared pieces of the voxcol CLI's commands: exit codes, command-line value parsing, output
// formatting and the common handling of a call's status.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "client/voxcol_client.h"
#include "google/protobuf/message.h"
#include "voxcol/v1/types.pb.h"

namespace voxcol::client {

constexpr int kExitOk = 0, kExitServerError = 1, kExitUsage = 2, kExitUnreachable = 3;

// Prints "voxcol: <message>" and a pointer to --help on stderr; returns kExitUsage.
int Usage(const std::string& message);

// Parse "X,Y,Z" (floats), "W,X,Y,Z" (floats) and "X,Y,Z" (integers). Range checks (finite, unit
// length, inside the world) are left to the server: strtof accepts nan and inf on purpose.
bool ParseVec3(const std::string& text, v1::Vec3* out);
bool ParseQuat(const std::string& text, v1::Quat* out);
bool ParseInt3(const std::string& text, v1::Int3* out);
// A material name (air|water|rock|dirt|grass|sand) or a number; the server range-checks numbers.
bool ParseMaterial(const std::string& text, uint32_t* out);
// The whole file at `path` into `out`; false if it cannot be read.
bool ReadFile(const std::string& path, std::string* out);

// "rock (2)" for a named material, "solid (N)" otherwise.
std::string MaterialLabel(uint32_t m);
std::string Fmt(const v1::Vec3& v);  // "(x, y, z)" with three decimals
std::string Fmt(const v1::Int3& v);
std::string Fmt(const v1::Penetration& p);  // "depth D along (normal) at (position)"

// Reports a failed call on stderr: kExitUnreachable for UNAVAILABLE ("cannot reach the server")
// and DEADLINE_EXCEEDED ("did not answer within --timeout_ms=N"), kExitServerError otherwise.
int Fail(const char* command, const grpc::Status& status);
// One line of protobuf JSON, primitive fields included.
void PrintJson(const google::protobuf::Message& message);

// How a call's answer starts: a failure ends the command (its exit code), and so does --json
// (the response as JSON, exit 0); otherwise kPrintSummary and the caller prints its summary.
constexpr int kPrintSummary = -1;
int FailedOrJson(const char* command, const grpc::Status& status,
                 const google::protobuf::Message& response);

// The channel's TLS and token from --tls, --tls_ca, --tls_cert, --tls_key, --tls_server_name,
// --token, --token_file or the VOXCOL_TOKEN environment variable; false (with `error`) if a file
// cannot be read or a flag pair is incomplete.
bool ChannelSecurityFromFlags(ChannelSecurity* out, std::string* error);

// Edit distance with adjacent transpositions counted as one edit (optimal string alignment):
// "raycats" is 1 from "raycast". For the suggestions of an unknown command.
size_t EditDistance(const std::string& a, const std::string& b);

}  // namespace voxcol::client
