// voxcol: command-line client for a voxcol server.
//
//   voxcol [--server=HOST:PORT] [--json] <command> [flags]
//
// Commands by file: cli_queries.cc (raycast, sweep, overlap, contacts, probe, move-character),
// cli_edits.cc (fill-ball, the one-primitive edits, edit, read-voxels, write-voxels, export-region,
// import-region, checkpoint, subscribe), this file (info, health, loadtest and the dispatch).
// The flags are defined below; `voxcol --help` lists the commands with their flags.
//
// Exit codes: 0 success, 1 the server answered an error, 2 bad command line, 3 server unreachable.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "client/cli_common.h"
#include "client/cli_edits.h"
#include "client/cli_flags.h"
#include "client/cli_queries.h"
#include "client/loadtest.h"
#include "client/voxcol_client.h"
#include "grpc/health/v1/health.grpc.pb.h"

// The flags of every command (declared for the command files in cli_flags.h); defined here so
// that --helpfull lists them under this file.
ABSL_FLAG(std::string, server, "127.0.0.1:50051", "voxcol server address host:port");
ABSL_FLAG(bool, json, false, "Print responses as JSON (protobuf JSON mapping)");
ABSL_FLAG(int, timeout_ms, 10000, "Deadline for each call, milliseconds");
ABSL_FLAG(std::string, origin, "", "raycast: ray origin X,Y,Z in world units");
ABSL_FLAG(std::string, direction, "0,-1,0",
          "raycast, sweep: direction X,Y,Z (any non-zero length)");
ABSL_FLAG(float, max_distance, 1000.0f, "raycast: maximum distance, world units");
ABSL_FLAG(std::string, water, "pass", "raycast: 'pass' through water or 'stop' at its surface");
ABSL_FLAG(
    bool, stats, false,
    "raycast, sweep, overlap, contacts, probe, move-character: include query cost statistics");
ABSL_FLAG(std::string, center, "", "fill-ball, probe: centre X,Y,Z in world units");
ABSL_FLAG(
    float, radius, 0.0f,
    "fill-ball, probe (sphere), SHAPE sphere and capsule, move-character: radius, world units");
ABSL_FLAG(std::string, half_extents, "", "probe, SHAPE box: half extents X,Y,Z in world units");
ABSL_FLAG(std::string, shape, "",
          "sweep, overlap, contacts: sphere|capsule|box|hull, placed at --position and "
          "rotated by --rotation");
ABSL_FLAG(std::string, position, "",
          "sweep, overlap, contacts, move-character: the shape's centre X,Y,Z in world units");
ABSL_FLAG(float, half_height, 0.0f,
          "capsule shape, move-character: half length of the capsule's core segment along local "
          "Y, world units");
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
          "checkpoint: a new directory inside the server's --backup_root (name or absolute path)");
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
ABSL_FLAG(int64_t, from, -1,
          "subscribe: deliver batches after this version, e.g. the last one received before a "
          "disconnect or restart (-1: from now)");
ABSL_FLAG(int64_t, from_version, -1, "subscribe: the same as --from (kept for older scripts)");
ABSL_FLAG(bool, include_voxels, false, "subscribe: include the new voxels of each changed box");
ABSL_FLAG(int64_t, max_events, 0,
          "subscribe: stop after this many batches (0: run until interrupted)");
ABSL_FLAG(std::string, displacement, "",
          "move-character: wanted motion X,Y,Z per tick (walk + jump + gravity), world units");
ABSL_FLAG(int, ticks, 1, "move-character: ticks to run, each from the previous tick's result");
ABSL_FLAG(float, step_offset, 0.0f,
          "move-character: highest riser walked up, world units (0: the server's default)");
ABSL_FLAG(float, slope_limit, 0.0f,
          "move-character: steepest walkable ground, degrees (0: the server's default)");

namespace voxcol::client {
namespace {

constexpr char kUsage[] =
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
    "  validate-hit --origin=X,Y,Z --direction=X,Y,Z (--claimed_hit=X,Y,Z | --target_point=X,Y,Z)\n"
    "              [--tolerance=T] [--at_version=V]   judge a shot at the version the client saw\n"
    "              (every query command takes --at_version=V to read a past version)\n"
    "  move-character --radius=R --half_height=H --position=X,Y,Z --displacement=X,Y,Z\n"
    "              [--ticks=N] [--step_offset=S] [--slope_limit=DEG]   character controller: the\n"
    "              same move N times, each from the last result; prints each tick's state\n"
    "  fill-ball   --center=X,Y,Z --radius=R [--material=NAME|N] [--mode=add|subtract|set]\n"
    "  loadtest    [--streams=32] [--seconds=60] [--batch_size=64] [--edit_rate=20] "
    "[--extent=64]\n"
    "              [--shape_queries]: bounded load from this\n"
    "              machine; only shedding (RESOURCE_EXHAUSTED) is tolerated, other errors exit "
    "1\n"
    "  checkpoint  --dir=NAME        online backup of the server's store into a new directory "
    "inside its --backup_root\n"
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
    "  subscribe   [--min=X,Y,Z --max=X,Y,Z] [--from=V] [--include_voxels] [--max_events=N]\n"
    "              one line per committed batch (one JSON object per line with --json)\n"
    "exit codes: 0 ok, 1 server error, 2 usage, 3 server unreachable";

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
        "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f,\"slow_batches\":%llu,"
        "\"edits_ok\":%llu,\"edits_failed\":%llu}"
        "\n",
        o.streams, o.batch_size, r.seconds, (unsigned long long)r.batches_ok,
        (unsigned long long)r.batches_shed, (unsigned long long)r.batches_failed,
        (unsigned long long)r.queries, (unsigned long long)r.query_errors, qps, r.p50_ms, r.p99_ms,
        r.p999_ms, r.max_ms, (unsigned long long)r.slow_batches, (unsigned long long)r.edits_ok,
        (unsigned long long)r.edits_failed);
  } else {
    std::printf("%d streams x %d queries/batch for %.1f s\n", o.streams, o.batch_size, r.seconds);
    std::printf("batches   %llu ok, %llu shed (RESOURCE_EXHAUSTED), %llu failed\n",
                (unsigned long long)r.batches_ok, (unsigned long long)r.batches_shed,
                (unsigned long long)r.batches_failed);
    std::printf("queries   %llu (%.0f/s), %llu with errors\n", (unsigned long long)r.queries, qps,
                (unsigned long long)r.query_errors);
    std::printf("latency   batch round trip p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms\n",
                r.p50_ms, r.p99_ms, r.p999_ms, r.max_ms);
    std::printf(
        "slow      %llu batches over %.0f ms, by what dominated: outside the server %llu, queue "
        "%llu, wait (min_version / snapshot) %llu, run with cold chunks %llu, run warm %llu\n",
        (unsigned long long)r.slow_batches, kSlowBatchMs, (unsigned long long)r.slow_outside,
        (unsigned long long)r.slow_queue, (unsigned long long)r.slow_wait,
        (unsigned long long)r.slow_cold, (unsigned long long)r.slow_warm);
    if (r.slowest_ms > 0) {
      std::printf(
          "slowest   %.2f ms: queue %.2f ms, wait %.2f ms, run %.2f ms (%u chunk builds), rest "
          "outside the server\n",
          r.slowest_ms, r.slowest_queue_ms, r.slowest_wait_ms, r.slowest_run_ms,
          r.slowest_cache_builds);
    }
    std::printf("edits     %llu ok, %llu failed\n", (unsigned long long)r.edits_ok,
                (unsigned long long)r.edits_failed);
  }
  if (!r.first_error.empty())
    std::fprintf(stderr, "voxcol: first error: %s\n", r.first_error.c_str());
  bool clean =
      r.batches_failed == 0 && r.query_errors == 0 && r.edits_failed == 0 && r.batches_ok > 0;
  return clean ? kExitOk : kExitServerError;
}

}  // namespace
}  // namespace voxcol::client

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(voxcol::client::kUsage);
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
  if (command == "move-character") return RunMoveCharacter(client);
  if (command == "validate-hit") return RunValidateHit(client);
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
