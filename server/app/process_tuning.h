// Process-wide settings of a serving process: the server's main calls TuneProcessForServing()
// first thing, and so does every executable that hosts the services to measure them (the
// benchmarks), so that they measure what the server runs.
#pragma once

namespace voxcol::server {

// - Turns off abseil's mutex deadlock detection, which Debian's abseil enables: it costs every
//   lock a graph update.
// - Keeps up to 16 MiB of freed memory at the top of each malloc heap instead of returning it to
//   the kernel. By default glibc trims a thread's heap (madvise) as soon as ~128 KiB at its top is
//   free. A Query stream batch's arena (16-64 KiB blocks) is freed on another thread than the one
//   that allocated it, so nearly every batch trimmed a heap, and each trim's TLB shootdown
//   interrupts every core the process runs on (docs/benchmarks.md, "Heap trimming").
void TuneProcessForServing();

}  // namespace voxcol::server
