// voxcol: command-line client for a voxcol server.
//
//   voxcol [--server=HOST:PORT] [--json] info
//   voxcol raycast --origin=X,Y,Z --direction=X,Y,Z [--max_distance=D] [--water=pass|stop]
//                  [--mode=smooth|blocky] [--all]
//   voxcol sweep SHAPE [--direction=X,Y,Z] --distance=D [--collection=closest|any|all]
//   voxcol overlap SHAPE [--penetration]                       (exact, posed shape)
//   voxcol contacts SHAPE [--margin=M] [--skip_water]
//   voxcol probe --center=X,Y,Z (--half_extents=X,Y,Z | --radius=R) [--voxels] [--max_voxels=N]
//                                                              (conservative broadphase probe)
//     SHAPE: --shape=sphere|capsule|box|hull --position=X,Y,Z [--rotation=W,X,Y,Z] with
//            sphere --radius=R; capsule --half_height=H --radius=R; box --half_extents=X,Y,Z;
//            hull --points="X,Y,Z;X,Y,Z;..."; box and hull take [--convex_radius=R]
//   voxcol fill-ball --center=X,Y,Z --radius=R [--material=rock|air|water|N]
//   [--mode=add|subtract|set] voxcol checkpoint --dir=/abs/path/on/server voxcol export-region
//   --min=X,Y,Z --max=X,Y,Z --file=PATH voxcol import-region --file=PATH voxcol
//   fill-block|fill-wedge --center=X,Y,Z --size=X,Y,Z [--rotation=W,X,Y,Z] [--material] [--mode]
//   voxcol fill-cylinder --center=X,Y,Z --height=H --radius=R [--rotation=W,X,Y,Z] [--material]
//   [--mode] voxcol fill-region|clear --min=X,Y,Z --max=X,Y,Z [--material] [--mode] voxcol
//   replace-material --min=X,Y,Z --max=X,Y,Z --source=M --target=M voxcol edit --batch=FILE (an
//   ApplyEditsRequest in protobuf JSON) voxcol read-voxels --min=X,Y,Z --max=X,Y,Z --out=FILE
//   voxcol write-voxels --in=FILE [--at=X,Y,Z]
//   voxcol subscribe [--min=X,Y,Z --max=X,Y,Z] [--from_version=V] [--include_voxels]
//   [--max_events=N]
// Edits go through ApplyEdits and accept --idempotency_key and --expected_version (fill-ball uses
// the FillBall RPC unless one of them is given).
//
// Exit codes: 0 success, 1 the server answered an error, 2 bad command line, 3 server unreachable.
#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
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
ABSL_FLAG(std::string, direction, "0,-1,0",
          "raycast, sweep: direction X,Y,Z (any non-zero length)");
ABSL_FLAG(float, max_distance, 1000.0f, "raycast: maximum distance, world units");
ABSL_FLAG(std::string, water, "pass", "raycast: 'pass' through water or 'stop' at its surface");
ABSL_FLAG(bool, stats, false,
          "raycast, sweep, overlap, contacts, probe: include query cost statistics");
ABSL_FLAG(std::string, center, "", "fill-ball, probe: centre X,Y,Z in world units");
ABSL_FLAG(float, radius, 0.0f,
          "fill-ball, probe (sphere), SHAPE sphere and capsule: radius, world units");
ABSL_FLAG(std::string, half_extents, "", "probe, SHAPE box: half extents X,Y,Z in world units");
ABSL_FLAG(std::string, shape, "",
          "sweep, overlap, contacts: sphere|capsule|box|hull, placed at --position and "
          "rotated by --rotation");
ABSL_FLAG(std::string, position, "",
          "sweep, overlap, contacts: the shape's centre X,Y,Z in world units");
ABSL_FLAG(float, half_height, 0.0f,
          "capsule shape: half length of its core segment along local Y, world units");
ABSL_FLAG(float, convex_radius, 0.0f, "box and hull shapes: rounding radius, world units");
ABSL_FLAG(std::string, points, "", "hull shape: local points \"X,Y,Z;X,Y,Z;...\" (1..64)");
ABSL_FLAG(float, distance, 0.0f, "sweep: how far to move the shape along --direction, world units");
ABSL_FLAG(std::string, collection, "closest", "sweep: closest|any|all hits");
ABSL_FLAG(float, margin, 0.0f,
          "contacts: also report points separated by up to this distance (negative depth)");
ABSL_FLAG(bool, skip_water, false, "contacts: skip the water contact (buoyancy)");
ABSL_FLAG(bool, penetration, false, "overlap: report the deepest penetration");
ABSL_FLAG(bool, voxels, false, "probe: also list the touched voxels");
ABSL_FLAG(uint32_t, max_voxels, 0, "probe: most voxels to list (0: the server's limit)");
ABSL_FLAG(std::string, material, "rock",
          "fill-ball: air|water|rock|dirt|grass|sand or a number 0..255");
ABSL_FLAG(std::string, mode, "",
          "raycast: smooth|blocky (default smooth); fill-ball: add|subtract|set (default add)");
ABSL_FLAG(bool, all, false, "raycast: report every surface crossing along the ray (smooth mode)");
ABSL_FLAG(int, streams, 32, "loadtest: concurrent Query streams");
ABSL_FLAG(double, seconds, 60, "loadtest: duration, seconds");
ABSL_FLAG(int, batch_size, 64, "loadtest: queries per batch");
ABSL_FLAG(double, edit_rate, 20,
          "loadtest: FillBall edits per second from a separate client (0: none)");
ABSL_FLAG(bool, shape_queries, false,
          "loadtest: mix capsule sweeps and contacts into the batches (1 in 8 queries each)");
ABSL_FLAG(float, extent, 64,
          "loadtest: play area |x|,|z| <= extent world units around the origin (0: whole world)");
ABSL_FLAG(std::string, dir, "",
          "checkpoint: absolute directory on the server host, must not exist");
ABSL_FLAG(std::string, file, "", "export-region / import-region: local packed region file");
ABSL_FLAG(std::string, size, "",
          "fill-block, fill-wedge: edge lengths X,Y,Z along the local axes, world units");
ABSL_FLAG(std::string, rotation, "1,0,0,0",
          "fill-block/-cylinder/-wedge, SHAPE of sweep/overlap/contacts: unit quaternion W,X,Y,Z "
          "(local -> world)");
ABSL_FLAG(float, height, 0.0f, "fill-cylinder: length along the local Y axis, world units");
ABSL_FLAG(std::string, min, "", "region commands: first voxel X,Y,Z (voxel indices)");
ABSL_FLAG(std::string, max, "", "region commands: voxel X,Y,Z one past the last (exclusive)");
ABSL_FLAG(std::string, source, "", "replace-material: material to replace (name or 0..255)");
ABSL_FLAG(std::string, target, "", "replace-material: material to put instead (name or 0..255)");
ABSL_FLAG(std::string, idempotency_key, "", "edits: a retry with the same key applies once");
ABSL_FLAG(int64_t, expected_version, -1,
          "edits: apply only if the world is at this version (-1: any)");
ABSL_FLAG(std::string, batch, "", "edit: file holding an ApplyEditsRequest in protobuf JSON");
ABSL_FLAG(std::string, out, "", "read-voxels: output file (a binary voxcol.v1.VoxelData message)");
ABSL_FLAG(std::string, in, "",
          "write-voxels: input file (a binary voxcol.v1.VoxelData message, as read-voxels writes)");
ABSL_FLAG(std::string, at, "",
          "write-voxels: write the file's voxels with their first voxel at X,Y,Z instead");
ABSL_FLAG(int64_t, from_version, -1,
          "subscribe: deliver batches after this version (-1: from now)");
ABSL_FLAG(bool, include_voxels, false, "subscribe: include the new voxels of each changed box");
ABSL_FLAG(int64_t, max_events, 0,
          "subscribe: stop after this many batches (0: run until interrupted)");

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

std::string Fmt(const v1::Vec3& v) {
  return absl::StrFormat("(%.3f, %.3f, %.3f)", v.x(), v.y(), v.z());
}
std::string Fmt(const v1::Int3& v) { return absl::StrFormat("(%d, %d, %d)", v.x(), v.y(), v.z()); }

// gRPC and absl share the canonical code numbering.
std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(absl::StatusCode(code));
}

int Fail(const char* command, const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    std::fprintf(stderr, "voxcol: cannot reach the server at %s (%s: %s)\n",
                 absl::GetFlag(FLAGS_server).c_str(), CodeName(status.error_code()).c_str(),
                 status.error_message().c_str());
    return kExitUnreachable;
  }
  std::fprintf(stderr, "voxcol: %s failed: %s: %s\n", command,
               CodeName(status.error_code()).c_str(), status.error_message().c_str());
  return kExitServerError;
}

void PrintJson(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  std::printf("%s\n", out.c_str());
}

// How a call's answer starts: a failure ends the command (its exit code), and so does --json
// (the response as JSON, exit 0); otherwise kPrintSummary and the caller prints its summary.
constexpr int kPrintSummary = -1;
int FailedOrJson(const char* command, const grpc::Status& status,
                 const google::protobuf::Message& response) {
  if (!status.ok()) return Fail(command, status);
  if (!absl::GetFlag(FLAGS_json)) return kPrintSummary;
  PrintJson(response);
  return kExitOk;
}

int RunInfo(Client& client) {
  v1::GetWorldInfoResponse r;
  if (int done = FailedOrJson("info", client.GetWorldInfo(&r), r); done != kPrintSummary) {
    return done;
  }
  std::printf("bounds       %s .. %s (world units)\n", Fmt(r.bounds().min()).c_str(),
              Fmt(r.bounds().max()).c_str());
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
    std::printf(
        "%s\n",
        grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()).c_str());
  }
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? kExitOk
                                                                             : kExitServerError;
}

int RunLoadTest() {
  LoadTestOptions o;
  o.server = absl::GetFlag(FLAGS_server);
  o.streams = absl::GetFlag(FLAGS_streams);
  o.seconds = absl::GetFlag(FLAGS_seconds);
  o.batch_size = absl::GetFlag(FLAGS_batch_size);
  o.edits_per_second = absl::GetFlag(FLAGS_edit_rate);
  o.extent = absl::GetFlag(FLAGS_extent);
  o.shape_queries = absl::GetFlag(FLAGS_shape_queries);
  if (o.streams < 1 || o.seconds <= 0 || o.batch_size < 1 || o.edits_per_second < 0 ||
      !(o.extent >= 0)) {
    return Usage(
        "loadtest needs --streams >= 1, --seconds > 0, --batch_size >= 1, --edit_rate >= 0");
  }
  LoadTestReport r = RunLoadTest(o);
  double qps = r.seconds > 0 ? double(r.queries) / r.seconds : 0;
  if (absl::GetFlag(FLAGS_json)) {
    std::printf(
        "{\"streams\":%d,\"batch\":%d,\"seconds\":%.2f,\"batches_ok\":%llu,\"batches_shed\":%llu,"
        "\"batches_failed\":%llu,\"queries\":%llu,\"query_errors\":%llu,\"queries_per_second\":%."
        "0f,"
        "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"edits_ok\":%llu,\"edits_failed\":%llu}"
        "\n",
        o.streams, o.batch_size, r.seconds, (unsigned long long)r.batches_ok,
        (unsigned long long)r.batches_shed, (unsigned long long)r.batches_failed,
        (unsigned long long)r.queries, (unsigned long long)r.query_errors, qps, r.p50_ms, r.p99_ms,
        r.max_ms, (unsigned long long)r.edits_ok, (unsigned long long)r.edits_failed);
  } else {
    std::printf("%d streams x %d queries/batch for %.1f s\n", o.streams, o.batch_size, r.seconds);
    std::printf("batches   %llu ok, %llu shed (RESOURCE_EXHAUSTED), %llu failed\n",
                (unsigned long long)r.batches_ok, (unsigned long long)r.batches_shed,
                (unsigned long long)r.batches_failed);
    std::printf("queries   %llu (%.0f/s), %llu with errors\n", (unsigned long long)r.queries, qps,
                (unsigned long long)r.query_errors);
    std::printf("latency   batch round trip p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", r.p50_ms,
                r.p99_ms, r.max_ms);
    std::printf("edits     %llu ok, %llu failed\n", (unsigned long long)r.edits_ok,
                (unsigned long long)r.edits_failed);
  }
  if (!r.first_error.empty())
    std::fprintf(stderr, "voxcol: first error: %s\n", r.first_error.c_str());
  bool clean =
      r.batches_failed == 0 && r.query_errors == 0 && r.edits_failed == 0 && r.batches_ok > 0;
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
  if (int done = FailedOrJson("raycast", client.Raycast(request, &r), r); done != kPrintSummary) {
    return done;
  }
  if (!r.hit()) {
    std::printf("miss (world version %llu)\n", (unsigned long long)r.version());
  } else {
    const v1::RaycastHit& f = r.first();
    std::printf("hit  distance %.3f at %s\n", f.distance(), Fmt(f.position()).c_str());
    std::printf("     normal %s, material %s, occupancy %u, voxel %s%s\n", Fmt(f.normal()).c_str(),
                MaterialLabel(f.material()).c_str(), f.occupancy(), Fmt(f.voxel()).c_str(),
                r.started_inside() ? ", started inside terrain" : "");
    if (f.triangle() >= 0) {
      std::printf("     chunk %s, triangle %d\n", Fmt(f.chunk()).c_str(), f.triangle());
    }
    std::printf("     world version %llu\n", (unsigned long long)r.version());
  }
  for (int i = 0; i < r.hits_size(); ++i) {
    const v1::RaycastHit& h = r.hits(i);
    std::printf("  #%d %s distance %.3f at %s normal %s, material %s\n", i,
                h.front_face() ? "enter" : "exit ", h.distance(), Fmt(h.position()).c_str(),
                Fmt(h.normal()).c_str(), MaterialLabel(h.material()).c_str());
  }
  if (r.has_stats()) {
    std::printf("     stats: %u voxels, %u chunks, %u tree nodes, %u triangles, %u chunk builds\n",
                r.stats().voxels_visited(), r.stats().chunks_visited(),
                r.stats().tree_nodes_visited(), r.stats().triangles_tested(),
                r.stats().cache_builds());
  }
  return kExitOk;
}

bool ParseQuat(const std::string& text, v1::Quat* out);

// The posed shape (SHAPE) of sweep, overlap and contacts from --shape, --position, --rotation and
// the size flags of the kind; an error message for Usage, empty on success. Sizes are checked by
// the server.
std::string ParsePosedShape(const char* command, v1::PosedShape* out) {
  const std::string kind = absl::GetFlag(FLAGS_shape);
  v1::Shape* shape = out->mutable_shape();
  if (kind == "sphere") {
    shape->mutable_sphere()->set_radius(absl::GetFlag(FLAGS_radius));
  } else if (kind == "capsule") {
    shape->mutable_capsule()->set_half_height(absl::GetFlag(FLAGS_half_height));
    shape->mutable_capsule()->set_radius(absl::GetFlag(FLAGS_radius));
  } else if (kind == "box") {
    v1::BoxShape* box = shape->mutable_box();
    if (!ParseVec3(absl::GetFlag(FLAGS_half_extents), box->mutable_half_extents())) {
      return "--shape=box needs --half_extents=X,Y,Z";
    }
    box->set_convex_radius(absl::GetFlag(FLAGS_convex_radius));
  } else if (kind == "hull") {
    v1::ConvexHullShape* hull = shape->mutable_hull();
    std::vector<std::string> points =
        absl::StrSplit(absl::GetFlag(FLAGS_points), ';', absl::SkipWhitespace());
    if (points.empty()) return "--shape=hull needs --points=\"X,Y,Z;X,Y,Z;...\"";
    for (const std::string& p : points) {
      if (!ParseVec3(std::string(absl::StripAsciiWhitespace(p)), hull->add_points())) {
        return "--points must be X,Y,Z triples separated by ';'";
      }
    }
    hull->set_convex_radius(absl::GetFlag(FLAGS_convex_radius));
  } else {
    return absl::StrCat(command, " needs --shape=sphere|capsule|box|hull");
  }
  if (absl::GetFlag(FLAGS_position).empty() ||
      !ParseVec3(absl::GetFlag(FLAGS_position), out->mutable_position())) {
    return absl::StrCat(command, " needs --position=X,Y,Z");
  }
  if (!ParseQuat(absl::GetFlag(FLAGS_rotation), out->mutable_rotation()))
    return "--rotation must be W,X,Y,Z";
  return "";
}

void PrintStats(const v1::QueryStats& s) {
  std::printf("     stats: %u voxels, %u chunks, %u tree nodes, %u triangles, %u chunk builds\n",
              s.voxels_visited(), s.chunks_visited(), s.tree_nodes_visited(), s.triangles_tested(),
              s.cache_builds());
}

std::string TouchLabel(const v1::TouchedChunk& t) {
  return absl::StrCat(Fmt(t.chunk()), t.solid() ? " solid" : "", t.water() ? " water" : "");
}
std::string TouchLabel(const v1::TouchedVoxel& t) {
  return absl::StrCat(Fmt(t.voxel()), t.solid() ? " solid" : "", t.water() ? " water" : "");
}

std::string Fmt(const v1::Penetration& p) {
  return absl::StrFormat("depth %.3f along %s at %s", p.depth(), Fmt(p.normal()),
                         Fmt(p.position()));
}

int RunOverlap(Client& client) {
  v1::OverlapRequest request;
  std::string error = ParsePosedShape("overlap", request.mutable_shape());
  if (!error.empty()) return Usage(error);
  request.set_include_penetration(absl::GetFlag(FLAGS_penetration));
  request.set_include_stats(absl::GetFlag(FLAGS_stats));
  v1::OverlapResponse r;
  if (int done = FailedOrJson("overlap", client.Overlap(request, &r), r); done != kPrintSummary) {
    return done;
  }
  std::printf("solid %s, water %s (exact, world version %llu)\n", r.touches_solid() ? "yes" : "no",
              r.touches_water() ? "yes" : "no", (unsigned long long)r.version());
  if (r.has_penetration())
    std::printf("     deepest penetration %s\n", Fmt(r.penetration()).c_str());
  for (const v1::TouchedChunk& c : r.chunks()) {
    std::printf("     chunk %s\n", TouchLabel(c).c_str());
  }
  if (r.has_stats()) PrintStats(r.stats());
  return kExitOk;
}

void PrintSweepHit(const char* lead, const v1::SweepHit& h) {
  std::printf("%s distance %.3f at %s, shape at %s\n", lead, h.distance(),
              Fmt(h.position()).c_str(), Fmt(h.shape_position()).c_str());
  std::printf("     normal %s, material %s", Fmt(h.normal()).c_str(),
              MaterialLabel(h.material()).c_str());
  if (h.triangle() >= 0)
    std::printf(", chunk %s, triangle %d", Fmt(h.chunk()).c_str(), h.triangle());
  std::printf("\n");
}

int RunSweep(Client& client) {
  v1::SweepRequest request;
  std::string error = ParsePosedShape("sweep", request.mutable_shape());
  if (!error.empty()) return Usage(error);
  if (!ParseVec3(absl::GetFlag(FLAGS_direction), request.mutable_direction())) {
    return Usage("--direction must be X,Y,Z");
  }
  request.set_distance(absl::GetFlag(FLAGS_distance));
  const std::string collection = absl::GetFlag(FLAGS_collection);
  if (collection == "closest") {
    request.set_collection(v1::HIT_COLLECTION_CLOSEST);
  } else if (collection == "any") {
    request.set_collection(v1::HIT_COLLECTION_ANY);
  } else if (collection == "all") {
    request.set_collection(v1::HIT_COLLECTION_ALL);
  } else {
    return Usage("--collection must be closest, any or all");
  }
  request.set_include_stats(absl::GetFlag(FLAGS_stats));
  v1::SweepResponse r;
  if (int done = FailedOrJson("sweep", client.Sweep(request, &r), r); done != kPrintSummary) {
    return done;
  }
  if (!r.hit()) {
    std::printf("miss (world version %llu)\n", (unsigned long long)r.version());
  } else if (r.initial_overlap()) {
    std::printf("initial overlap: the start pose penetrates the terrain, %s\n",
                Fmt(r.penetration()).c_str());
    std::printf("     world version %llu\n", (unsigned long long)r.version());
  } else {
    PrintSweepHit("hit ", r.first());
    std::printf("     world version %llu\n", (unsigned long long)r.version());
  }
  if (r.initial_overlap() || r.hits_size() > 1) {
    for (int i = 0; i < r.hits_size(); ++i)
      PrintSweepHit(absl::StrCat("  #", i).c_str(), r.hits(i));
  }
  if (r.hits_truncated()) std::printf("     (more hits than the server returns)\n");
  if (r.has_stats()) PrintStats(r.stats());
  return kExitOk;
}

int RunContacts(Client& client) {
  v1::ContactsRequest request;
  std::string error = ParsePosedShape("contacts", request.mutable_shape());
  if (!error.empty()) return Usage(error);
  request.set_margin(absl::GetFlag(FLAGS_margin));
  request.set_skip_water(absl::GetFlag(FLAGS_skip_water));
  request.set_include_stats(absl::GetFlag(FLAGS_stats));
  v1::ContactsResponse r;
  if (int done = FailedOrJson("contacts", client.Contacts(request, &r), r); done != kPrintSummary) {
    return done;
  }
  int points = 0;
  for (const v1::ChunkContacts& c : r.chunks()) points += c.points_size();
  std::printf("%d contact point%s in %d chunk%s (world version %llu)\n", points,
              points == 1 ? "" : "s", r.chunks_size(), r.chunks_size() == 1 ? "" : "s",
              (unsigned long long)r.version());
  for (const v1::ChunkContacts& c : r.chunks()) {
    std::printf("     chunk %s\n", Fmt(c.chunk()).c_str());
    for (const v1::Contact& p : c.points()) {
      std::printf("       depth %.3f at %s normal %s, material %s, triangle %d\n", p.depth(),
                  Fmt(p.position()).c_str(), Fmt(p.normal()).c_str(),
                  MaterialLabel(p.material()).c_str(), p.triangle());
    }
  }
  if (r.buried()) std::printf("     buried in solid: way out %s\n", Fmt(r.penetration()).c_str());
  if (r.has_water()) {
    const v1::WaterContact& w = r.water();
    if (w.in_water()) {
      std::printf(
          "     water: %.1f%% submerged (%.3f units^3), surface y=%.3f, centre of buoyancy %s\n",
          100.0 * w.submerged_fraction(), w.submerged_volume(), w.surface_height(),
          Fmt(w.center_of_buoyancy()).c_str());
    } else {
      std::printf("     water: none\n");
    }
  }
  if (r.has_stats()) PrintStats(r.stats());
  return kExitOk;
}

// Fills the shape of a probe request from --center and --half_extents (box) or --radius
// (sphere).
bool ParseProbeShape(v1::ProbeRequest* request, std::string* error) {
  const std::string half = absl::GetFlag(FLAGS_half_extents);
  if (!half.empty() && absl::GetFlag(FLAGS_radius) != 0.0f) {
    *error = "probe takes --half_extents (box) or --radius (sphere), not both";
    return false;
  }
  v1::Vec3* center = half.empty() ? request->mutable_sphere()->mutable_center()
                                  : request->mutable_box()->mutable_center();
  if (absl::GetFlag(FLAGS_center).empty() || !ParseVec3(absl::GetFlag(FLAGS_center), center)) {
    *error = "probe needs --center=X,Y,Z";
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

int RunProbe(Client& client) {
  v1::ProbeRequest request;
  std::string error;
  if (!ParseProbeShape(&request, &error)) return Usage(error);
  request.set_include_voxels(absl::GetFlag(FLAGS_voxels));
  request.set_max_voxels(absl::GetFlag(FLAGS_max_voxels));
  request.set_include_stats(absl::GetFlag(FLAGS_stats));
  v1::ProbeResponse r;
  if (int done = FailedOrJson("probe", client.Probe(request, &r), r); done != kPrintSummary) {
    return done;
  }
  std::printf("may touch: solid %s, water %s (broadphase precision, world version %llu)\n",
              r.may_touch_solid() ? "yes" : "no", r.may_touch_water() ? "yes" : "no",
              (unsigned long long)r.version());
  for (const v1::TouchedChunk& c : r.chunks())
    std::printf("     chunk %s\n", TouchLabel(c).c_str());
  for (const v1::TouchedVoxel& v : r.voxels())
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

bool ParseMode(v1::EditMode* out) {
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode.empty() || mode == "add") {  // --mode is shared with raycast, whose default is smooth
    *out = v1::EDIT_MODE_ADD;
  } else if (mode == "subtract") {
    *out = v1::EDIT_MODE_SUBTRACT;
  } else if (mode == "set") {
    *out = v1::EDIT_MODE_SET;
  } else {
    return false;
  }
  return true;
}

int PrintAck(const char* command, const grpc::Status& status, const v1::EditAck& ack) {
  if (int done = FailedOrJson(command, status, ack); done != kPrintSummary) return done;
  std::printf("ok   world version %llu, %u chunks changed%s\n", (unsigned long long)ack.version(),
              ack.changed_chunks(),
              ack.replayed() ? " (replayed: this key was already applied)" : "");
  return kExitOk;
}

int SendBatch(Client& client, const char* command, v1::ApplyEditsRequest request) {
  if (!absl::GetFlag(FLAGS_idempotency_key).empty())
    request.set_idempotency_key(absl::GetFlag(FLAGS_idempotency_key));
  if (absl::GetFlag(FLAGS_expected_version) >= 0)
    request.set_expected_version(absl::GetFlag(FLAGS_expected_version));
  v1::EditAck ack;
  grpc::Status status = client.ApplyEdits(request, &ack);
  return PrintAck(command, status, ack);
}

int RunFillBall(Client& client) {
  v1::FillBallRequest request;
  if (absl::GetFlag(FLAGS_center).empty()) return Usage("fill-ball needs --center=X,Y,Z");
  if (!ParseVec3(absl::GetFlag(FLAGS_center), request.mutable_center()))
    return Usage("--center must be X,Y,Z");
  request.set_radius(absl::GetFlag(FLAGS_radius));
  uint32_t material = 0;
  if (!ParseMaterial(absl::GetFlag(FLAGS_material), &material)) {
    return Usage("--material must be air|water|rock|dirt|grass|sand or a number");
  }
  request.set_material(material);
  v1::EditMode mode;
  if (!ParseMode(&mode)) return Usage("--mode must be add, subtract or set");
  request.set_mode(mode);
  if (!absl::GetFlag(FLAGS_idempotency_key).empty() || absl::GetFlag(FLAGS_expected_version) >= 0) {
    // Keys and preconditions belong to batches: send the ball as a one-primitive batch.
    v1::ApplyEditsRequest batch;
    *batch.add_primitives()->mutable_fill_ball() = request;
    return SendBatch(client, "fill-ball", batch);
  }
  v1::EditAck ack;
  return PrintAck("fill-ball", client.FillBall(request, &ack), ack);
}

int RunCheckpoint(Client& client) {
  v1::CreateCheckpointRequest request;
  request.set_dir(absl::GetFlag(FLAGS_dir));
  if (request.dir().empty()) return Usage("checkpoint needs --dir=/absolute/path/on/the/server");
  v1::CreateCheckpointResponse r;
  if (int done = FailedOrJson("checkpoint", client.CreateCheckpoint(request, &r), r);
      done != kPrintSummary) {
    return done;
  }
  std::printf("ok   checkpoint in %s holds world version %llu or later\n", r.dir().c_str(),
              (unsigned long long)r.version());
  return kExitOk;
}
// ---- Edits through ApplyEdits, region I/O and the change feed.

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
  bool written =
      out && std::fwrite(r.region().data(), 1, r.region().size(), out) == r.region().size();
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
  return PrintAck("import-region", client.ImportRegion(request, &ack), ack);
}

// Parses "W,X,Y,Z"; like ParseVec3, leaves range checks (unit length) to the server.
bool ParseQuat(const std::string& text, v1::Quat* out) {
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  if (parts.size() != 4) return false;
  float v[4];
  for (int i = 0; i < 4; ++i) {
    char* end = nullptr;
    v[i] = std::strtof(parts[i].c_str(), &end);
    if (parts[i].empty() || *end != '\0') return false;
  }
  out->set_w(v[0]);
  out->set_x(v[1]);
  out->set_y(v[2]);
  out->set_z(v[3]);
  return true;
}

// --min and --max into a region; returns an error message for Usage, empty on success.
std::string ParseRegion(const char* command, v1::VoxelBox* out) {
  if (absl::GetFlag(FLAGS_min).empty() || absl::GetFlag(FLAGS_max).empty()) {
    return absl::StrCat(command,
                        " needs --min=X,Y,Z and --max=X,Y,Z (voxel indices, max exclusive)");
  }
  if (!ParseInt3(absl::GetFlag(FLAGS_min), out->mutable_min()))
    return "--min must be X,Y,Z integers";
  if (!ParseInt3(absl::GetFlag(FLAGS_max), out->mutable_max()))
    return "--max must be X,Y,Z integers";
  return "";
}

// Centre, rotation, material and mode shared by the oriented shapes.
template <typename Shape>
std::string ParseOriented(const char* command, Shape* shape) {
  if (absl::GetFlag(FLAGS_center).empty()) return absl::StrCat(command, " needs --center=X,Y,Z");
  if (!ParseVec3(absl::GetFlag(FLAGS_center), shape->mutable_center()))
    return "--center must be X,Y,Z";
  if (!ParseQuat(absl::GetFlag(FLAGS_rotation), shape->mutable_rotation()))
    return "--rotation must be W,X,Y,Z";
  uint32_t material = 0;
  if (!ParseMaterial(absl::GetFlag(FLAGS_material), &material)) {
    return "--material must be air|water|rock|dirt|grass|sand or a number";
  }
  shape->set_material(material);
  v1::EditMode mode;
  if (!ParseMode(&mode)) return "--mode must be add, subtract or set";
  shape->set_mode(mode);
  return "";
}

// Builds the single primitive of a shape or region command; an error message for Usage or "".
std::string PrimitiveFromFlags(const std::string& command, v1::EditPrimitive* p) {
  if (command == "fill-block" || command == "fill-wedge") {
    bool block = command == "fill-block";
    v1::Vec3* size =
        block ? p->mutable_fill_block()->mutable_size() : p->mutable_fill_wedge()->mutable_size();
    if (absl::GetFlag(FLAGS_size).empty() || !ParseVec3(absl::GetFlag(FLAGS_size), size)) {
      return absl::StrCat(command, " needs --size=X,Y,Z");
    }
    return block ? ParseOriented(command.c_str(), p->mutable_fill_block())
                 : ParseOriented(command.c_str(), p->mutable_fill_wedge());
  }
  if (command == "fill-cylinder") {
    p->mutable_fill_cylinder()->set_height(absl::GetFlag(FLAGS_height));
    p->mutable_fill_cylinder()->set_radius(absl::GetFlag(FLAGS_radius));
    return ParseOriented(command.c_str(), p->mutable_fill_cylinder());
  }
  if (command == "fill-region") {
    v1::FillRegion* r = p->mutable_fill_region();
    uint32_t material = 0;
    if (!ParseMaterial(absl::GetFlag(FLAGS_material), &material))
      return "--material must be a name or a number";
    r->set_material(material);
    v1::EditMode mode;
    if (!ParseMode(&mode)) return "--mode must be add, subtract or set";
    r->set_mode(mode);
    return ParseRegion("fill-region", r->mutable_region());
  }
  if (command == "replace-material") {
    v1::ReplaceMaterial* r = p->mutable_replace_material();
    uint32_t source = 0, target = 0;
    if (!ParseMaterial(absl::GetFlag(FLAGS_source), &source) ||
        !ParseMaterial(absl::GetFlag(FLAGS_target), &target)) {
      return "replace-material needs --source=M and --target=M (names or numbers)";
    }
    r->set_source(source);
    r->set_target(target);
    return ParseRegion("replace-material", r->mutable_region());
  }
  return ParseRegion("clear", p->mutable_clear()->mutable_region());
}

int RunPrimitive(Client& client, const std::string& command) {
  v1::ApplyEditsRequest request;
  std::string error = PrimitiveFromFlags(command, request.add_primitives());
  if (!error.empty()) return Usage(error);
  return SendBatch(client, command.c_str(), request);
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

int RunEditBatch(Client& client) {
  std::string json;
  if (absl::GetFlag(FLAGS_batch).empty() || !ReadFile(absl::GetFlag(FLAGS_batch), &json)) {
    return Usage("edit needs --batch=FILE, a readable ApplyEditsRequest in protobuf JSON");
  }
  v1::ApplyEditsRequest request;
  auto parsed = google::protobuf::util::JsonStringToMessage(json, &request);
  if (!parsed.ok())
    return Usage(absl::StrCat("--batch: not an ApplyEditsRequest: ", parsed.ToString()));
  return SendBatch(client, "edit", request);
}

int RunReadVoxels(Client& client) {
  v1::ReadVoxelsRequest request;
  std::string error = ParseRegion("read-voxels", request.mutable_region());
  if (!error.empty()) return Usage(error);
  const std::string path = absl::GetFlag(FLAGS_out);
  if (path.empty()) return Usage("read-voxels needs --out=FILE");
  v1::ReadVoxelsResponse r;
  grpc::Status status = client.ReadVoxels(request, &r);
  if (!status.ok()) return Fail("read-voxels", status);
  std::ofstream out(path, std::ios::binary);
  if (!out || !r.voxels().SerializeToOstream(&out) || !out.flush()) {
    std::fprintf(stderr, "voxcol: cannot write %s\n", path.c_str());
    return kExitUsage;
  }
  size_t count = r.voxels().materials().size();
  if (absl::GetFlag(FLAGS_json)) {
    r.mutable_voxels()->clear_materials();  // the arrays are in the file
    r.mutable_voxels()->clear_occupancies();
    PrintJson(r);
  } else {
    std::printf("ok   %zu voxels at world version %llu written to %s\n", count,
                (unsigned long long)r.version(), path.c_str());
  }
  return kExitOk;
}

int RunWriteVoxels(Client& client) {
  std::string bytes;
  v1::WriteVoxelsRequest request;
  const std::string path = absl::GetFlag(FLAGS_in);
  if (path.empty() || !ReadFile(path, &bytes) ||
      !request.mutable_voxels()->ParseFromString(bytes)) {
    return Usage(
        "write-voxels needs --in=FILE holding a VoxelData message (as read-voxels writes)");
  }
  if (!absl::GetFlag(FLAGS_at).empty()) {
    // Move the box, keeping its size: a paste at another place.
    v1::Int3 at;
    if (!ParseInt3(absl::GetFlag(FLAGS_at), &at)) return Usage("--at must be X,Y,Z integers");
    v1::VoxelBox* box = request.mutable_voxels()->mutable_region();
    box->mutable_max()->set_x(box->max().x() - box->min().x() + at.x());
    box->mutable_max()->set_y(box->max().y() - box->min().y() + at.y());
    box->mutable_max()->set_z(box->max().z() - box->min().z() + at.z());
    *box->mutable_min() = at;
  }
  v1::EditAck ack;
  grpc::Status status = client.WriteVoxels(request, &ack);
  return PrintAck("write-voxels", status, ack);
}

void PrintEvent(const v1::SubscribeResponse& event) {
  if (absl::GetFlag(FLAGS_json)) {
    std::string out;
    (void)google::protobuf::util::MessageToJsonString(event, &out);  // one object per line
    std::printf("%s\n", out.c_str());
  } else {
    uint64_t voxels = 0;
    std::string boxes;
    for (const v1::ChunkChange& c : event.changes()) {
      const v1::VoxelBox& b = c.changed_voxels();
      voxels += uint64_t(b.max().x() - b.min().x()) * (b.max().y() - b.min().y()) *
                (b.max().z() - b.min().z());
      if (boxes.size() < 200) absl::StrAppend(&boxes, " ", Fmt(b.min()), "..", Fmt(b.max()));
    }
    std::printf("version %llu  %d chunks  %llu voxels in boxes:%s\n",
                (unsigned long long)event.version(), event.changes_size(),
                (unsigned long long)voxels, boxes.c_str());
  }
  std::fflush(stdout);  // a live tail: every line as it happens
}

int RunSubscribe(Client& client) {
  v1::SubscribeRequest request;
  if (!absl::GetFlag(FLAGS_min).empty() || !absl::GetFlag(FLAGS_max).empty()) {
    std::string error = ParseRegion("subscribe", request.mutable_region());
    if (!error.empty()) return Usage(error);
  }
  if (absl::GetFlag(FLAGS_from_version) >= 0)
    request.set_from_version(absl::GetFlag(FLAGS_from_version));
  request.set_include_voxels(absl::GetFlag(FLAGS_include_voxels));
  const int64_t max_events = absl::GetFlag(FLAGS_max_events);
  grpc::ClientContext context;  // no deadline: a live tail runs until stopped
  auto reader = client.Subscribe(&context, request);
  v1::SubscribeResponse event;
  int64_t seen = 0;
  while (reader->Read(&event)) {
    PrintEvent(event);
    if (max_events > 0 && ++seen >= max_events) {
      context.TryCancel();
      reader->Finish();
      return kExitOk;
    }
  }
  return Fail("subscribe", reader->Finish());
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
      "  sweep       SHAPE [--direction=X,Y,Z] --distance=D [--collection=closest|any|all]\n"
      "              first place the moving shape meets the terrain (or an initial overlap)\n"
      "  overlap     SHAPE [--penetration]   exact overlap of a posed shape with the smooth "
      "terrain and water\n"
      "  contacts    SHAPE [--margin=M] [--skip_water]   contact points (<= 4 per chunk) and water "
      "contact\n"
      "              SHAPE: --shape=sphere|capsule|box|hull --position=X,Y,Z [--rotation=W,X,Y,Z] "
      "and\n"
      "              sphere --radius=R | capsule --half_height=H --radius=R | box "
      "--half_extents=X,Y,Z\n"
      "              | hull --points=\"X,Y,Z;X,Y,Z;...\"; box and hull take [--convex_radius=R]\n"
      "  probe       --center=X,Y,Z (--half_extents=X,Y,Z | --radius=R) [--voxels] "
      "[--max_voxels=N]\n"
      "              conservative broadphase probe: may terrain be within reach?\n"
      "  fill-ball   --center=X,Y,Z --radius=R [--material=NAME|N] [--mode=add|subtract|set]\n"
      "  loadtest    [--streams=32] [--seconds=60] [--batch_size=64] [--edit_rate=20] "
      "[--extent=64]\n"
      "              [--shape_queries]: bounded load from this\n"
      "              machine; only shedding (RESOURCE_EXHAUSTED) is tolerated, other errors exit "
      "1\n"
      "  checkpoint  --dir=/abs/path   online backup of the server's store (path on the server "
      "host)\n"
      "  export-region --min=X,Y,Z --max=X,Y,Z --file=PATH   voxels of a box to a packed file\n"
      "  import-region --file=PATH     write a packed region back as one edit\n"
      "  fill-block  --center=X,Y,Z --size=X,Y,Z [--rotation=W,X,Y,Z] [--material] [--mode]\n"
      "  fill-wedge  --center=X,Y,Z --size=X,Y,Z [--rotation=W,X,Y,Z] [--material] [--mode]\n"
      "              (Roblox wedge: slope from the bottom-front (-Z) edge up to the top-back (+Z) "
      "edge)\n"
      "  fill-cylinder --center=X,Y,Z --height=H --radius=R [--rotation=W,X,Y,Z] [--material] "
      "[--mode]\n"
      "  fill-region --min=X,Y,Z --max=X,Y,Z [--material] [--mode]   (voxel indices, max "
      "exclusive)\n"
      "  replace-material --min=X,Y,Z --max=X,Y,Z --source=M --target=M\n"
      "  clear       --min=X,Y,Z --max=X,Y,Z\n"
      "  edit        --batch=FILE   (ApplyEditsRequest as protobuf JSON: one atomic batch)\n"
      "              edits above accept --idempotency_key=K and --expected_version=V\n"
      "  read-voxels --min=X,Y,Z --max=X,Y,Z --out=FILE   (file: binary voxcol.v1.VoxelData)\n"
      "  write-voxels --in=FILE [--at=X,Y,Z]\n"
      "  subscribe   [--min=X,Y,Z --max=X,Y,Z] [--from_version=V] [--include_voxels] "
      "[--max_events=N]\n"
      "              one line per committed batch (one JSON object per line with --json)\n"
      "exit codes: 0 ok, 1 server error, 2 usage, 3 server unreachable");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  using namespace voxcol::client;
  if (args.size() != 2) return Usage("expected exactly one command (see --help)");
  const std::string command = args[1];
  Client client(absl::GetFlag(FLAGS_server),
                std::chrono::milliseconds(absl::GetFlag(FLAGS_timeout_ms)));
  if (command == "info") return RunInfo(client);
  if (command == "health") return RunHealth(client);
  if (command == "loadtest") return RunLoadTest();
  if (command == "raycast") return RunRaycast(client);
  if (command == "sweep") return RunSweep(client);
  if (command == "overlap") return RunOverlap(client);
  if (command == "contacts") return RunContacts(client);
  if (command == "probe") return RunProbe(client);
  if (command == "fill-ball") return RunFillBall(client);
  if (command == "checkpoint") return RunCheckpoint(client);
  if (command == "export-region") return RunExportRegion(client);
  if (command == "import-region") return RunImportRegion(client);
  if (command == "fill-block" || command == "fill-cylinder" || command == "fill-wedge" ||
      command == "fill-region" || command == "replace-material" || command == "clear") {
    return RunPrimitive(client, command);
  }
  if (command == "edit") return RunEditBatch(client);
  if (command == "read-voxels") return RunReadVoxels(client);
  if (command == "write-voxels") return RunWriteVoxels(client);
  if (command == "subscribe") return RunSubscribe(client);
  return Usage("unknown command '" + command + "'");
}
