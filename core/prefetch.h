// Software prefetch the compiler keeps.
#pragma once

namespace voxcol {

// Starts loading the cache line holding `p` into all cache levels; never faults (p may be any
// address). GCC deletes a loop whose body is only __builtin_prefetch (it sees no side effect), so
// a loop over an array's lines would compile to nothing; an asm statement stays.
inline void PrefetchLine(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

// Starts loading `lines` consecutive cache lines from `p`.
inline void PrefetchLines(const void* p, int lines) {
  const char* bytes = static_cast<const char*>(p);
  for (int i = 0; i < lines; ++i) PrefetchLine(bytes + 64 * i);
}

}  // namespace voxcol
