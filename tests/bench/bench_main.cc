#include <benchmark/benchmark.h>

#include "server/app/process_tuning.h"
#include "tests/bench/thread_placement.h"

int main(int argc, char** argv) {
  // The benchmarks host the services and their query paths: tune the process as the server does.
  voxcol::server::TuneProcessForServing();
  voxcol::bench::ParseThreadPlacementFlags(&argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
