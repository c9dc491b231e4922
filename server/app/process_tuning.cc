#include "server/app/process_tuning.h"

#include <malloc.h>

#include "absl/synchronization/mutex.h"

namespace voxcol::server {

void TuneProcessForServing() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Setting the trim threshold also freezes glibc's mmap threshold (normally raised as large
  // blocks are freed) at 128 KiB, which would map and unmap every larger block: raise it too.
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
}

}  // namespace voxcol::server
