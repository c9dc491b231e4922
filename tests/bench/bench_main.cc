#include <benchmark/benchmark.h>

#include "absl/synchronization/mutex.h"

int main(int argc, char** argv) {
  // Debian's abseil enables mutex deadlock detection, which costs every lock a graph update;
  // release binaries (the server too) turn it off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
