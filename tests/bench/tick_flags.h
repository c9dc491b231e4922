// --tick_seconds=S: how long each tick-rate benchmark (bench_tick_latency.cc) calls, in seconds of
// wall time. Default 30, as issue 35 measures; the test command's smoke pass uses 1.
#pragma once

namespace voxcol::bench {

// Removes --tick_seconds=S from argv (before benchmark::Initialize sees it) and remembers S.
// Returns false (and prints why) when S is not a positive number.
bool ParseTickFlags(int* argc, char** argv);

double TickSeconds();

}  // namespace voxcol::bench
