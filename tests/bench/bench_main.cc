#include <benchmark/benchmark.h>

#include "server/app/process_tuning.h"
#include "tests/bench/thread_placement.h"
#include "tests/bench/tick_flags.h"

int main(int argc, char** argv) {
  // The benchmarks host the services and their query paths: tune the process as the server does.
  voxcol::server::TuneProcessForServing();
  voxcol::bench::ParseThreadPlacementFlags(&argc, argv);
  if (!voxcol::bench::ParseTickFlags(&argc, argv)) return 1;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
