// Where the threads of the benchmarks in bench_query_stream.cc run. By default nowhere in
// particular: the server's threads and the benchmark's client share the machine's cores, as on a
// one-host setup. With `voxcol_bench --client_apart` each side's server work gets one core and the
// client another, as when the game server has its own host: the query threads and the gRPC server
// (or the in-process driver's pool) on the last core the process may use, the benchmark's client
// thread on the first. gRPC's poller is process-wide, so some transport work of either end may
// still run on the other's core; and gRPC's process-wide threads keep the core they started on,
// so run the flag with a filter that selects only bench_query_stream.cc's benchmarks.
#pragma once

#include <sched.h>

namespace voxcol::bench {

// Removes --client_apart from argv (before benchmark::Initialize sees it) and remembers it.
void ParseThreadPlacementFlags(int* argc, char** argv);

// Pins the calling thread to the server's core for as long as it lives (threads it starts inherit
// that), until ToClient(); restores the thread's mask when destroyed. Does nothing without
// --client_apart.
class ThreadPlacement {
 public:
  ThreadPlacement();
  ~ThreadPlacement();
  ThreadPlacement(const ThreadPlacement&) = delete;
  ThreadPlacement& operator=(const ThreadPlacement&) = delete;

  // Moves the calling thread to the client's core (nothing when !ok()).
  void ToClient();
  // False when --client_apart was given but the process may use fewer than two cores, or a mask
  // could not be read or set.
  bool ok() const { return ok_; }
  bool apart() const { return apart_; }

 private:
  bool apart_ = false;
  bool ok_ = true;
  cpu_set_t original_;
  int server_cpu_ = -1;
  int client_cpu_ = -1;
};

}  // namespace voxcol::bench
