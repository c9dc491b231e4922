// voxcol: command-line client for a voxcol server.
//
//   voxcol [--server=HOST:PORT] [--json] info
//   voxcol raycast --origin=X,Y,Z --direction=X,Y,Z [--max_distance=D] [--water=pass|stop]
//                  [--mode=smooth|blocky] [--all]
//   voxcol overlap --center=X,Y,Z (--half_extents=X,Y,Z | --radius=R) [--voxels] [--max_voxels=N]
//   voxcol fill-ball --center=X,Y,Z --radius=R [--material=rock|air|water|N] [--mode=add|subtract|set]
//   voxcol checkpoint --dir=/abs/path/on/server
//   voxcol export-region --min=X,Y,Z --max=X,Y,Z --file=PATH
//   voxcol import-region --file=PATH
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
#include "client/loadtest.h"
#include "client/voxcol_client.h"
#include "grpc/health/v1/health.grpc.pb.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "voxcol server address host:port");
ABSL_FLAG(bool, json, false, "Print responses as JSON (protobuf JSON mapping)");
ABSL_FLAG(int, timeout_ms, 10000, "Deadline for each call, milliseconds");
ABSL_FLAG(std::string, origin, "", "raycast: ray origin X,Y,Z in world units");
ABSL_FLAG(std::string, direction, "0,-1,0", "raycast: ray direction X,Y,Z (any non-zero length)");
ABSL_FLAG(float, max_distance, 1000.0f, "raycast: maximum distance, world units");
ABSL_FLAG(std::string, water, "pass", "raycast: 'pass' through water or 'stop' at its surface");
ABSL_FLAG(bool, stats, false, "raycast, overlap: include query cost statistics");
ABSL_FLAG(std::string, center, "", "fill-ball, overlap: centre X,Y,Z in world units");
ABSL_FLAG(float, radius, 0.0f, "fill-ball, overlap (sphere): radius, world units");
ABSL_FLAG(std::string, half_extents, "", "overlap (box): half extents X,Y,Z in world units");
ABSL_FLAG(bool, voxels, false, "overlap: also list the touched voxels");
ABSL_FLAG(uint32_t, max_voxels, 0, "overlap: most voxels to list (0: the server's limit)");
ABSL_FLAG(std::string, material, "rock", "fill-ball: air|water|rock|dirt|grass|sand or a number 0..255");
ABSL_FLAG(std::string, mode, "",
          "raycast: smooth|blocky (default smooth); fill-ball: add|subtract|set (default add)");
ABSL_FLAG(bool, all, false, "raycast: report every surface crossing along the ray (smooth mode)");
ABSL_FLAG(int, streams, 32, "loadtest: concurrent Query streams");
ABSL_FLAG(double, seconds, 60, "loadtest: duration, seconds");
ABSL_FLAG(int, batch, 64, "loadtest: queries per batch");
ABSL_FLAG(double, edit_rate, 20, "loadtest: FillBall edits per second from a separate client (0: none)");
ABSL_FLAG(std::string, dir, "", "checkpoint: absolute directory on the server host, must not exist");
ABSL_FLAG(std::string, min, "", "export-region: first voxel X,Y,Z (integer voxel indices)");
ABSL_FLAG(std::string, max, "", "export-region: end voxel X,Y,Z, exclusive");
ABSL_FLAG(std::string, file, "", "export-region / import-region: local packed region file");

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

// Exits 0 only when the server reports SERVING (usable as a container health check).
int RunHealth(Client& client) {
  auto stub = grpc::health::v1::Health::NewStub(client.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(absl::GetFlag(FLAGS_timeout_ms)));
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  if (!status.ok()) return Fail("health", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(response);
  } else {
    std::printf("%s\n", grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()).c_str());
  }
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? kExitOk : kExitServerError;
}

int RunLoadTest() {
  LoadTestOptions o;
  o.server = absl::GetFlag(FLAGS_server);
  o.streams = absl::GetFlag(FLAGS_streams);
  o.seconds = absl::GetFlag(FLAGS_seconds);
  o.batch_size = absl::GetFlag(FLAGS_batch);
  o.edits_per_second = absl::GetFlag(FLAGS_edit_rate);
  if (o.streams < 1 || o.seconds <= 0 || o.batch_size < 1 || o.edits_per_second < 0) {
    return Usage("loadtest needs --streams >= 1, --seconds > 0, --batch >= 1, --edit_rate >= 0");
  }
  LoadTestReport r = RunLoadTest(o);
  double qps = r.seconds > 0 ? double(r.queries) / r.seconds : 0;
  if (absl::GetFlag(FLAGS_json)) {
    std::printf("{\"streams\":%d,\"batch\":%d,\"seconds\":%.2f,\"batches_ok\":%llu,\"batches_shed\":%llu,"
                "\"batches_failed\":%llu,\"queries\":%llu,\"query_errors\":%llu,\"queries_per_second\":%.0f,"
                "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"edits_ok\":%llu,\"edits_failed\":%llu}\n",
                o.streams, o.batch_size, r.seconds, (unsigned long long)r.batches_ok, (unsigned long long)r.batches_shed,
                (unsigned long long)r.batches_failed, (unsigned long long)r.queries,
                (unsigned long long)r.query_errors, qps, r.p50_ms, r.p99_ms, r.max_ms,
                (unsigned long long)r.edits_ok, (unsigned long long)r.edits_failed);
  } else {
    std::printf("%d streams x %d queries/batch for %.1f s\n", o.streams, o.batch_size, r.seconds);
    std::printf("batches   %llu ok, %llu shed (RESOURCE_EXHAUSTED), %llu failed\n", (unsigned long long)r.batches_ok,
                (unsigned long long)r.batches_shed, (unsigned long long)r.batches_failed);
    std::printf("queries   %llu (%.0f/s), %llu with errors\n", (unsigned long long)r.queries, qps,
                (unsigned long long)r.query_errors);
    std::printf("latency   batch round trip p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", r.p50_ms, r.p99_ms, r.max_ms);
    std::printf("edits     %llu ok, %llu failed\n", (unsigned long long)r.edits_ok, (unsigned long long)r.edits_failed);
  }
  if (!r.first_error.empty()) std::fprintf(stderr, "voxcol: first error: %s\n", r.first_error.c_str());
  bool clean = r.batches_failed == 0 && r.query_errors == 0 && r.edits_failed == 0 && r.batches_ok > 0;
  return clean ? kExitOk : kExitServerError;
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

// Fills the shape of an overlap request from --center and --half_extents (box) or --radius
// (sphere).
bool ParseOverlapShape(v1::OverlapRequest* request, std::string* error) {
  const std::string half = absl::GetFlag(FLAGS_half_extents);
  if (!half.empty() && absl::GetFlag(FLAGS_radius) != 0.0f) {
    *error = "overlap takes --half_extents (box) or --radius (sphere), not both";
    return false;
  }
  v1::Vec3* center = half.empty() ? request->mutable_sphere()->mutable_center()
                                  : request->mutable_box()->mutable_center();
  if (absl::GetFlag(FLAGS_center).empty() || !ParseVec3(absl::GetFlag(FLAGS_center), center)) {
    *error = "overlap needs --center=X,Y,Z";
    return false;
  }
  if (half.empty()) {
    request->mutable_sphere()->set_radius(absl::GetFlag(FLAGS_radius));
  } else if (!ParseVec3(half, request->mutable_box()->mutable_half_extents())) {
    *error = "--half_extents must be X,Y,Z";
    return false;
  }
  return true;
}

std::string TouchLabel(const v1::OverlapTouch& t) {
  return absl::StrCat(Fmt(t.key()), t.solid() ? " solid" : "", t.water() ? " water" : "");
}

int RunOverlap(Client& client) {
  v1::OverlapRequest request;
  std::string error;
  if (!ParseOverlapShape(&request, &error)) return Usage(error);
  request.set_include_voxels(absl::GetFlag(FLAGS_voxels));
  request.set_max_voxels(absl::GetFlag(FLAGS_max_voxels));
  request.set_include_stats(absl::GetFlag(FLAGS_stats));
  v1::OverlapResponse r;
  grpc::Status status = client.Overlap(request, &r);
  if (!status.ok()) return Fail("overlap", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(r);
    return kExitOk;
  }
  std::printf("solid %s, water %s (broadphase precision, world version %llu)\n",
              r.touches_solid() ? "yes" : "no", r.touches_water() ? "yes" : "no",
              (unsigned long long)r.version());
  for (const v1::OverlapTouch& c : r.chunks())
    std::printf("     chunk %s\n", TouchLabel(c).c_str());
  for (const v1::OverlapTouch& v : r.voxels())
    std::printf("     voxel %s\n", TouchLabel(v).c_str());
  if (r.voxels_truncated()) std::printf("     (more voxels touched than listed)\n");
  if (r.has_stats()) std::printf("     stats: %u chunks visited\n", r.stats().chunks_visited());
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

int RunCheckpoint(Client& client) {
  v1::CreateCheckpointRequest request;
  request.set_dir(absl::GetFlag(FLAGS_dir));
  if (request.dir().empty()) return Usage("checkpoint needs --dir=/absolute/path/on/the/server");
  v1::CreateCheckpointResponse r;
  grpc::Status status = client.CreateCheckpoint(request, &r);
  if (!status.ok()) return Fail("checkpoint", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(r);
  } else {
    std::printf("ok   checkpoint in %s holds world version %llu or later\n", r.dir().c_str(),
                (unsigned long long)r.version());
  }
  return kExitOk;
}

bool ParseInt3(const std::string& text, v1::Int3* out) {
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  int32_t v[3];
  if (parts.size() != 3) return false;
  for (int i = 0; i < 3; ++i) {
    if (!absl::SimpleAtoi(parts[i], &v[i])) return false;
  }
  out->set_x(v[0]);
  out->set_y(v[1]);
  out->set_z(v[2]);
  return true;
}

int RunExportRegion(Client& client) {
  v1::ExportRegionRequest request;
  if (!ParseInt3(absl::GetFlag(FLAGS_min), request.mutable_box()->mutable_min()) ||
      !ParseInt3(absl::GetFlag(FLAGS_max), request.mutable_box()->mutable_max())) {
    return Usage("export-region needs --min=X,Y,Z and --max=X,Y,Z (integer voxel indices)");
  }
  const std::string file = absl::GetFlag(FLAGS_file);
  if (file.empty()) return Usage("export-region needs --file=PATH");
  v1::ExportRegionResponse r;
  grpc::Status status = client.ExportRegion(request, &r);
  if (!status.ok()) return Fail("export-region", status);
  FILE* out = std::fopen(file.c_str(), "wb");
  bool written = out && std::fwrite(r.region().data(), 1, r.region().size(), out) == r.region().size();
  if (out && std::fclose(out) != 0) written = false;
  if (!written) {
    std::fprintf(stderr, "voxcol: cannot write %s\n", file.c_str());
    return kExitServerError;
  }
  std::printf("ok   %zu bytes to %s (world version %llu)\n", r.region().size(), file.c_str(),
              (unsigned long long)r.version());
  return kExitOk;
}

int RunImportRegion(Client& client) {
  const std::string file = absl::GetFlag(FLAGS_file);
  if (file.empty()) return Usage("import-region needs --file=PATH");
  FILE* in = std::fopen(file.c_str(), "rb");
  if (!in) return Usage("cannot read " + file);
  v1::ImportRegionRequest request;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) request.mutable_region()->append(buf, n);
  std::fclose(in);
  v1::EditAck ack;
  grpc::Status status = client.ImportRegion(request, &ack);
  if (!status.ok()) return Fail("import-region", status);
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
      "  health      SERVING / NOT_SERVING (exit 0 only when serving)\n"
      "  raycast     --origin=X,Y,Z [--direction=X,Y,Z] [--max_distance=D] [--water=pass|stop]\n"
      "              [--mode=smooth|blocky] [--all]\n"
      "  overlap     --center=X,Y,Z (--half_extents=X,Y,Z | --radius=R) [--voxels] "
      "[--max_voxels=N]\n"
      "  fill-ball   --center=X,Y,Z --radius=R [--material=NAME|N] [--mode=add|subtract|set]\n"
      "  loadtest    [--streams=32] [--seconds=60] [--batch=64] [--edit_rate=20]: bounded load from this\n"
      "              machine; only shedding (RESOURCE_EXHAUSTED) is tolerated, other errors exit 1\n"
      "  checkpoint  --dir=/abs/path   online backup of the server's store (path on the server host)\n"
      "  export-region --min=X,Y,Z --max=X,Y,Z --file=PATH   voxels of a box to a packed file\n"
      "  import-region --file=PATH     write a packed region back as one edit\n"
      "exit codes: 0 ok, 1 server error, 2 usage, 3 server unreachable");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  using namespace voxcol::client;
  if (args.size() != 2) return Usage("expected exactly one command (see the list in --help)");
  const std::string command = args[1];
  Client client(absl::GetFlag(FLAGS_server), std::chrono::milliseconds(absl::GetFlag(FLAGS_timeout_ms)));
  if (command == "info") return RunInfo(client);
  if (command == "health") return RunHealth(client);
  if (command == "loadtest") return RunLoadTest();
  if (command == "raycast") return RunRaycast(client);
  if (command == "overlap") return RunOverlap(client);
  if (command == "fill-ball") return RunFillBall(client);
  if (command == "checkpoint") return RunCheckpoint(client);
  if (command == "export-region") return RunExportRegion(client);
  if (command == "import-region") return RunImportRegion(client);
  return Usage("unknown command '" + command + "'");
}
