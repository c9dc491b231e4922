// voxcol: command-line client for a voxcol server.
//
//   voxcol [--server=HOST:PORT] [--json] <command> [options]     ($VOXCOL_SERVER sets --server)
//
// The command line is declared in cli_app.cc (CLI11: every command has its own --help). Commands
// by file: cli_queries.cc (raycast, sweep, overlap, contacts, probe, move-character),
// cli_edits.cc (fill-ball, the one-primitive edits, edit, read-voxels, write-voxels, export-region,
// import-region, checkpoint, subscribe), this file (info, health, loadtest and the dispatch).
//
// Exit codes: 0 success, 1 the server answered an error, 2 bad command line (or a local output
// file that cannot be written), 3 server unreachable or no answer within --timeout_ms.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli_app.h"
#include "client/cli_common.h"
#include "client/cli_edits.h"
#include "client/cli_flags.h"
#include "client/cli_queries.h"
#include "client/cli_render.h"
#include "client/loadtest.h"
#include "client/voxcol_client.h"
#include "core/version/version.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace voxcol::client {
namespace {

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
                       std::chrono::milliseconds(Flags().timeout_ms));
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  if (!status.ok()) return Fail("health", status);
  if (Flags().json) {
    PrintJson(response);
  } else {
    std::printf(
        "%s\n",
        grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()).c_str());
  }
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? kExitOk
                                                                             : kExitServerError;
}

int RunLoadTest(const ChannelSecurity& security) {
  const CliOptions& f = Flags();
  LoadTestOptions o;
  o.server = f.server;
  o.security = security;
  o.streams = f.streams;  // ranges checked by the parser (cli_app.cc)
  o.seconds = f.seconds;
  o.batch_size = f.batch_size;
  o.edits_per_second = f.edit_rate;
  o.extent = f.extent;
  o.shape_queries = f.shape_queries;
  if (f.progress || isatty(STDERR_FILENO)) {
    o.progress = [](const LoadTestProgress& p) {
      std::fprintf(stderr,
                   "progress %5.1f s: %llu batches (%llu shed, %llu failed), %llu queries, %.0f "
                   "queries/s, last second p99 <= %.2f ms, max %.2f ms\n",
                   p.elapsed_seconds, (unsigned long long)p.batches, (unsigned long long)p.shed,
                   (unsigned long long)p.failed, (unsigned long long)p.queries,
                   p.queries_per_second, p.p99_ms, p.max_ms);
    };
  }
  LoadTestReport r = RunLoadTest(o);
  double qps = r.seconds > 0 ? double(r.queries) / r.seconds : 0;
  if (Flags().json) {
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
  using namespace voxcol::client;
  CliApp cli;
  ChannelSecurity security;
  BuildApp(
      cli, RunInfo, RunHealth, [&security](Client&) { return RunLoadTest(security); }, RunRender);
  cli.app.set_version_flag("--version", absl::StrCat("voxcol ", voxcol::VersionString(), " (",
                                                     voxcol::GitRevision(), ")"));
  try {
    cli.app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version: printed, exit 0
    return cli.app.exit(e);
  } catch (const CLI::ParseError& e) {  // the message and a pointer to --help, exit 2
    if (std::string unknown = UnknownCommandMessage(cli.app, argc, argv); !unknown.empty()) {
      return Usage(unknown);
    }
    cli.app.exit(e);
    return kExitUsage;
  }
  const CLI::App* command = cli.app.get_subcommands().front();
  if (command->get_name() == "completion") {
    std::fputs(BashCompletion(cli.app).c_str(), stdout);
    return kExitOk;
  }
  if (std::string error; !ChannelSecurityFromFlags(&security, &error)) {
    std::fprintf(stderr, "voxcol: %s\n", error.c_str());
    return kExitUsage;
  }
  Client client(Flags().server, std::chrono::milliseconds(Flags().timeout_ms), security);
  client.SetWorld(Flags().world);
  return cli.commands.at(command)(client);
}
