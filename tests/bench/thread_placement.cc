#include "tests/bench/thread_placement.h"

#include <pthread.h>

#include <cstring>

namespace voxcol::bench {
namespace {

bool client_apart = false;

bool PinCallingThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

}  // namespace

void ParseThreadPlacementFlags(int* argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp(argv[i], "--client_apart") == 0) {
      client_apart = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  argv[kept] = nullptr;
}

ThreadPlacement::ThreadPlacement() : apart_(client_apart) {
  CPU_ZERO(&original_);
  if (!apart_) return;
  ok_ = pthread_getaffinity_np(pthread_self(), sizeof(original_), &original_) == 0;
  for (int cpu = 0; ok_ && cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &original_)) continue;
    if (client_cpu_ < 0) client_cpu_ = cpu;
    server_cpu_ = cpu;
  }
  ok_ = ok_ && client_cpu_ >= 0 && server_cpu_ != client_cpu_ && PinCallingThread(server_cpu_);
}

ThreadPlacement::~ThreadPlacement() {
  if (apart_ && client_cpu_ >= 0) {
    pthread_setaffinity_np(pthread_self(), sizeof(original_), &original_);
  }
}

void ThreadPlacement::ToClient() {
  if (apart_ && ok_) ok_ = PinCallingThread(client_cpu_);
}

}  // namespace voxcol::bench
