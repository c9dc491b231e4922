// voxcol: command-line client for a voxcol server.
//
//   voxcol [--server=HOST:PORT] [--json] info
//   voxcol raycast --origin=X,Y,Z --direction=X,Y,Z [--max_distance=D] [--water=pass|stop]
//                  [--mode=smooth|blocky] [--all]
//   voxcol fill-ball --center=X,Y,Z --radius=R [--material=rock|air|water|N] [--mode=add|subtract|set]
//
// Exit codes: 0 success, 1 the server answered an error, 2 bad command line, 3 server unreachable.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <google/protobuf/util/json_util.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/voxcol_client.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "voxcol server address host:port");
ABSL_FLAG(bool, json, false, "Print responses as JSON (protobuf JSON mapping)");
ABSL_FLAG(int, timeout_ms, 10000, "Deadline for each call, milliseconds");
ABSL_FLAG(std::string, origin, "", "raycast: ray origin X,Y,Z in world units");
ABSL_FLAG(std::string, direction, "0,-1,0", "raycast: ray direction X,Y,Z (any non-zero length)");
ABSL_FLAG(float, max_distance, 1000.0f, "raycast: maximum distance, world units");
ABSL_FLAG(std::string, water, "pass", "raycast: 'pass' through water or 'stop' at its surface");
ABSL_FLAG(bool, stats, false, "raycast: include query cost statistics");
ABSL_FLAG(std::string, center, "", "fill-ball: centre X,Y,Z in world units");
ABSL_FLAG(float, radius, 0.0f, "fill-ball: radius, world units");
ABSL_FLAG(std::string, material, "rock", "fill-ball: air|water|rock|dirt|grass|sand or a number 0..255");
ABSL_FLAG(std::string, mode, "",
          "raycast: smooth|blocky (default smooth); fill-ball: add|subtract|set (default add)");
ABSL_FLAG(bool, all, false, "raycast: report every surface crossing along the ray (smooth mode)");

namespace voxcol::client {
namespace {

constexpr int kExitOk = 0, kExitServerError = 1, kExitUsage = 2, kExitUnreachable = 3;
const char* kMaterialNames[] = {"air", "water", "rock", "dirt", "grass", "sand"};

int Usage(const std::string& message) {
  std::fprintf(stderr, "voxcol: %s\nRun 'voxcol --help' for usage.\n", message.c_str());
  return kExitUsage;
}

// Parses "X,Y,Z"; strtof accepts nan and inf so that bad values reach the server's validation.
bool ParseVec3(const std::string& text, v1::Vec3* out) {
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  if (parts.size() != 3) return false;
  float v[3];
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    v[i] = std::strtof(parts[i].c_str(), &end);
    if (parts[i].empty() || *end != '\0') return false;
  }
  out->set_x(v[0]);
  out->set_y(v[1]);
  out->set_z(v[2]);
  return true;
}

std::string MaterialLabel(uint32_t m) {
  return m < 6 ? absl::StrCat(kMaterialNames[m], " (", m, ")") : absl::StrCat("solid (", m, ")");
}

std::string Fmt(const v1::Vec3& v) { return absl::StrFormat("(%.3f, %.3f, %.3f)", v.x(), v.y(), v.z()); }
std::string Fmt(const v1::Int3& v) { return absl::StrFormat("(%d, %d, %d)", v.x(), v.y(), v.z()); }

const char* CodeName(grpc::StatusCode code) {
  static const char* names[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
                                "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  int i = int(code);
  return i >= 0 && i < 17 ? names[i] : "UNKNOWN";
}

int Fail(const char* command, const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    std::fprintf(stderr, "voxcol: cannot reach the server at %s (%s: %s)\n",
                 absl::GetFlag(FLAGS_server).c_str(), CodeName(status.error_code()),
                 status.error_message().c_str());
    return kExitUnreachable;
  }
  std::fprintf(stderr, "voxcol: %s failed: %s: %s\n", command, CodeName(status.error_code()),
               status.error_message().c_str());
  return kExitServerError;
}

void PrintJson(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  std::printf("%s\n", out.c_str());
}

int RunInfo(Client& client) {
  v1::GetWorldInfoResponse r;
  grpc::Status status = client.GetWorldInfo(&r);
  if (!status.ok()) return Fail("info", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(r);
    return kExitOk;
  }
  std::printf("bounds       %s .. %s (world units)\n", Fmt(r.bounds().min()).c_str(), Fmt(r.bounds().max()).c_str());
  std::printf("voxels       %s .. %s, voxel size %g\n", Fmt(r.voxel_bounds().min()).c_str(),
              Fmt(r.voxel_bounds().max()).c_str(), r.voxel_size());
  std::printf("generator    caves v%u, seed %llu, sea level y=%d\n", r.generator_version(),
              (unsigned long long)r.seed(), r.sea_level());
  std::printf("version      %llu\n", (unsigned long long)r.version());
  std::printf("resident     %llu chunks\n", (unsigned long long)r.resident_chunks());
  return kExitOk;
}

int RunRaycast(Client& client) {
  v1::RaycastRequest request;
  if (absl::GetFlag(FLAGS_origin).empty()) return Usage("raycast needs --origin=X,Y,Z");
  if (!ParseVec3(absl::GetFlag(FLAGS_origin), request.mutable_origin())) {
    return Usage("--origin must be X,Y,Z");
  }
  if (!ParseVec3(absl::GetFlag(FLAGS_direction), request.mutable_direction())) {
    return Usage("--direction must be X,Y,Z");
  }
  request.set_max_distance(absl::GetFlag(FLAGS_max_distance));
  const std::string water = absl::GetFlag(FLAGS_water);
  if (water == "pass") {
    request.set_water_mode(v1::WATER_MODE_PASS_THROUGH);
  } else if (water == "stop") {
    request.set_water_mode(v1::WATER_MODE_STOP_AT_SURFACE);
  } else {
    return Usage("--water must be 'pass' or 'stop'");
  }
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode.empty() || mode == "smooth") {
    request.set_mode(v1::RAYCAST_MODE_SMOOTH);
  } else if (mode == "blocky") {
    request.set_mode(v1::RAYCAST_MODE_BLOCKY);
  } else {
    return Usage("raycast --mode must be 'smooth' or 'blocky'");
  }
  request.set_all_hits(absl::GetFlag(FLAGS_all));
  request.set_include_stats(absl::GetFlag(FLAGS_stats));
  v1::RaycastResponse r;
  grpc::Status status = client.Raycast(request, &r);
  if (!status.ok()) return Fail("raycast", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(r);
    return kExitOk;
  }
  if (!r.hit()) {
    std::printf("miss (world version %llu)\n", (unsigned long long)r.version());
  } else {
    std::printf("hit  distance %.3f at %s\n", r.distance(), Fmt(r.position()).c_str());
    std::printf("     normal %s, material %s, occupancy %u, voxel %s%s\n", Fmt(r.normal()).c_str(),
                MaterialLabel(r.material()).c_str(), r.occupancy(), Fmt(r.voxel()).c_str(),
                r.started_inside() ? ", started inside terrain" : "");
    if (r.triangle() >= 0) {
      std::printf("     chunk %s, triangle %d\n", Fmt(r.chunk()).c_str(), r.triangle());
    }
    std::printf("     world version %llu\n", (unsigned long long)r.version());
  }
  for (int i = 0; i < r.hits_size(); ++i) {
    const v1::RaycastHit& h = r.hits(i);
    std::printf("  #%d %s distance %.3f at %s normal %s, material %s\n", i, h.front_face() ? "enter" : "exit ",
                h.distance(), Fmt(h.position()).c_str(), Fmt(h.normal()).c_str(), MaterialLabel(h.material()).c_str());
  }
  if (r.has_stats()) {
    std::printf("     stats: %u voxels, %u chunks, %u tree nodes, %u triangles, %u chunk builds\n",
                r.stats().voxels_visited(), r.stats().chunks_visited(), r.stats().tree_nodes_visited(),
                r.stats().triangles_tested(), r.stats().cache_builds());
  }
  return kExitOk;
}

bool ParseMaterial(const std::string& text, uint32_t* out) {
  for (uint32_t i = 0; i < 6; ++i) {
    if (text == kMaterialNames[i]) {
      *out = i;
      return true;
    }
  }
  return absl::SimpleAtoi(text, out);  // the server range-checks numbers
}

int RunFillBall(Client& client) {
  v1::FillBallRequest request;
  if (absl::GetFlag(FLAGS_center).empty()) return Usage("fill-ball needs --center=X,Y,Z");
  if (!ParseVec3(absl::GetFlag(FLAGS_center), request.mutable_center())) return Usage("--center must be X,Y,Z");
  request.set_radius(absl::GetFlag(FLAGS_radius));
  uint32_t material = 0;
  if (!ParseMaterial(absl::GetFlag(FLAGS_material), &material)) {
    return Usage("--material must be air|water|rock|dirt|grass|sand or a number");
  }
  request.set_material(material);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode.empty() || mode == "add") {
    request.set_mode(v1::EDIT_MODE_ADD);
  } else if (mode == "subtract") {
    request.set_mode(v1::EDIT_MODE_SUBTRACT);
  } else if (mode == "set") {
    request.set_mode(v1::EDIT_MODE_SET);
  } else {
    return Usage("--mode must be add, subtract or set");
  }
  v1::EditAck ack;
  grpc::Status status = client.FillBall(request, &ack);
  if (!status.ok()) return Fail("fill-ball", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(ack);
  } else {
    std::printf("ok   world version %llu, %u chunks changed\n", (unsigned long long)ack.version(), ack.changed_chunks());
  }
  return kExitOk;
}

}  // namespace
}  // namespace voxcol::client

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "voxcol [flags] <command>\n"
      "commands:\n"
      "  info        world bounds, voxel size, seed, version\n"
      "  raycast     --origin=X,Y,Z [--direction=X,Y,Z] [--max_distance=D] [--water=pass|stop]\n"
      "              [--mode=smooth|blocky] [--all]\n"
      "  fill-ball   --center=X,Y,Z --radius=R [--material=NAME|N] [--mode=add|subtract|set]\n"
      "exit codes: 0 ok, 1 server error, 2 usage, 3 server unreachable");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  using namespace voxcol::client;
  if (args.size() != 2) return Usage("expected exactly one command: info, raycast or fill-ball");
  const std::string command = args[1];
  Client client(absl::GetFlag(FLAGS_server), std::chrono::milliseconds(absl::GetFlag(FLAGS_timeout_ms)));
  if (command == "info") return RunInfo(client);
  if (command == "raycast") return RunRaycast(client);
  if (command == "fill-ball") return RunFillBall(client);
  return Usage("unknown command '" + command + "'");
}
