// ThreadSanitizer annotations for Debian's uninstrumented absl::Mutex and absl::call_once (TSan
// build only).
//
// Debian's libabsl_synchronization is not built with -fsanitize=thread, so TSan sees neither its
// lock nor its unlock: every piece of state our code guards with an absl::Mutex would be reported
// as a race. Linked into every executable of the TSan build (exported with -rdynamic, so gRPC's
// calls resolve here too), these definitions of the Mutex and CondVar entry points call the real
// ones (dlsym RTLD_NEXT) wrapped in TSan's mutex annotations, as abseil's own TSan build does.
// Conditions (Await, LockWhen, CondVar waits) are evaluated inside absl by whichever thread holds
// the mutex; their reads are ignored during the wait, the state they read is checked everywhere
// else. Every function passes its register arguments through unchanged (x86-64 SysV: at most four
// integer registers after `this`; Duration and Time travel in registers or by pointer), so one
// signature serves them all.
#include <dlfcn.h>
#include <link.h>
#include <sanitizer/tsan_interface.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
extern "C" void AnnotateIgnoreWritesBegin(const char* file, int line);
extern "C" void AnnotateIgnoreWritesEnd(const char* file, int line);

namespace {

using Fn = uint64_t (*)(void*, uint64_t, uint64_t, uint64_t, uint64_t);

Fn Real(const char* symbol) {
  void* f = dlsym(RTLD_NEXT, symbol);
  if (f == nullptr) {
    std::fprintf(stderr, "tsan_absl_mutex: %s not found (another abseil build?)\n", symbol);
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

struct IgnoreAccesses {
  IgnoreAccesses() {
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
  }
  ~IgnoreAccesses() {
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  }
};

constexpr unsigned kRead = __tsan_mutex_read_lock;

// The address range of the main executable (our code and the abseil and gRPC++ header code
// compiled into it). Only its calls are annotated: gRPC's own mutexes guard gRPC's uninstrumented
// state, and annotating them only produces reports about gRPC's internal lifetimes.
struct Range {
  uintptr_t begin = UINTPTR_MAX, end = 0;
};
Range MainExecutable() {
  Range range;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* r = static_cast<Range*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
          if (begin < r->begin) r->begin = begin;
          if (begin + ph.p_memsz > r->end) r->end = begin + ph.p_memsz;
        }
        return 1;  // the first object is the main executable
      },
      &range);
  return range;
}
bool FromMainExecutable(void* return_address) {
  static const Range range = MainExecutable();
  auto a = reinterpret_cast<uintptr_t>(return_address);
  return a >= range.begin && a < range.end;
}

// Some entry points call others through the PLT (AwaitWithTimeout calls AwaitWithDeadline):
// only the outermost call of a thread is annotated.
thread_local int g_depth = 0;
struct Outermost {
  explicit Outermost(void* caller) : outer(g_depth++ == 0 && FromMainExecutable(caller)) {}
  ~Outermost() { --g_depth; }
  const bool outer;
};

}  // namespace

#define VOXCOL_SYMBOL(name, mangled) \
  extern "C" uint64_t name(void*, uint64_t, uint64_t, uint64_t, uint64_t) __asm__(mangled)

// Plain lock and unlock, writer and reader.
#define VOXCOL_LOCK(name, mangled, flags)                                   \
  VOXCOL_SYMBOL(name, mangled);                                             \
  uint64_t name(void* mu, uint64_t a, uint64_t b, uint64_t c, uint64_t d) { \
    static Fn real = Real(mangled);                                         \
    Outermost call(__builtin_return_address(0));                            \
    if (!call.outer) return real(mu, a, b, c, d);                           \
    __tsan_mutex_pre_lock(mu, flags);                                       \
    uint64_t r = real(mu, a, b, c, d);                                      \
    __tsan_mutex_post_lock(mu, flags, 0);                                   \
    return r;                                                               \
  }
#define VOXCOL_TRYLOCK(name, mangled, flags)                                               \
  VOXCOL_SYMBOL(name, mangled);                                                            \
  uint64_t name(void* mu, uint64_t a, uint64_t b, uint64_t c, uint64_t d) {                \
    static Fn real = Real(mangled);                                                        \
    Outermost call(__builtin_return_address(0));                                           \
    if (!call.outer) return real(mu, a, b, c, d);                                          \
    __tsan_mutex_pre_lock(mu, (flags) | __tsan_mutex_try_lock);                            \
    uint64_t r = real(mu, a, b, c, d);                                                     \
    bool ok = (r & 0xff) != 0;                                                             \
    __tsan_mutex_post_lock(                                                                \
        mu, (flags) | __tsan_mutex_try_lock | (ok ? 0 : __tsan_mutex_try_lock_failed), 0); \
    return r;                                                                              \
  }
#define VOXCOL_UNLOCK(name, mangled, flags)                                 \
  VOXCOL_SYMBOL(name, mangled);                                             \
  uint64_t name(void* mu, uint64_t a, uint64_t b, uint64_t c, uint64_t d) { \
    static Fn real = Real(mangled);                                         \
    Outermost call(__builtin_return_address(0));                            \
    if (!call.outer) return real(mu, a, b, c, d);                           \
    __tsan_mutex_pre_unlock(mu, flags);                                     \
    uint64_t r = real(mu, a, b, c, d);                                      \
    __tsan_mutex_post_unlock(mu, flags);                                    \
    return r;                                                               \
  }
// LockWhen*: not held before, held (also after a timeout) after.
#define VOXCOL_LOCK_WHEN(name, mangled, flags)                              \
  VOXCOL_SYMBOL(name, mangled);                                             \
  uint64_t name(void* mu, uint64_t a, uint64_t b, uint64_t c, uint64_t d) { \
    static Fn real = Real(mangled);                                         \
    Outermost call(__builtin_return_address(0));                            \
    if (!call.outer) return real(mu, a, b, c, d);                           \
    __tsan_mutex_pre_lock(mu, flags);                                       \
    uint64_t r;                                                             \
    {                                                                       \
      IgnoreAccesses ignore;                                                \
      r = real(mu, a, b, c, d);                                             \
    }                                                                       \
    __tsan_mutex_post_lock(mu, flags, 0);                                   \
    return r;                                                               \
  }
// Await* (self = the mutex) and CondVar::Wait* (self = the CondVar, a = the mutex): held before
// and after, released and re-acquired inside.
#define VOXCOL_WAIT(name, mangled, mutex_arg)                                 \
  VOXCOL_SYMBOL(name, mangled);                                               \
  uint64_t name(void* self, uint64_t a, uint64_t b, uint64_t c, uint64_t d) { \
    static Fn real = Real(mangled);                                           \
    Outermost call(__builtin_return_address(0));                              \
    if (!call.outer) return real(self, a, b, c, d);                           \
    void* mu = (mutex_arg);                                                   \
    __tsan_mutex_pre_unlock(mu, 0);                                           \
    __tsan_mutex_post_unlock(mu, 0);                                          \
    uint64_t r;                                                               \
    {                                                                         \
      IgnoreAccesses ignore;                                                  \
      r = real(self, a, b, c, d);                                             \
    }                                                                         \
    __tsan_mutex_pre_lock(mu, 0);                                             \
    __tsan_mutex_post_lock(mu, 0, 0);                                         \
    return r;                                                                 \
  }
#define VOXCOL_DESTROY(name, mangled)                                       \
  VOXCOL_SYMBOL(name, mangled);                                             \
  uint64_t name(void* mu, uint64_t a, uint64_t b, uint64_t c, uint64_t d) { \
    static Fn real = Real(mangled);                                         \
    Outermost call(__builtin_return_address(0));                            \
    if (!call.outer) return real(mu, a, b, c, d);                           \
    __tsan_mutex_destroy(mu, 0);                                            \
    return real(mu, a, b, c, d);                                            \
  }

#define M(s) "_ZN4absl7debian35Mutex" s
VOXCOL_LOCK(voxcol_tsan_lock, M("4LockEv"), 0)
VOXCOL_LOCK(voxcol_tsan_reader_lock, M("10ReaderLockEv"), kRead)
VOXCOL_TRYLOCK(voxcol_tsan_try_lock, M("7TryLockEv"), 0)
VOXCOL_TRYLOCK(voxcol_tsan_reader_try_lock, M("13ReaderTryLockEv"), kRead)
VOXCOL_UNLOCK(voxcol_tsan_unlock, M("6UnlockEv"), 0)
VOXCOL_UNLOCK(voxcol_tsan_reader_unlock, M("12ReaderUnlockEv"), kRead)
VOXCOL_LOCK_WHEN(voxcol_tsan_lock_when, M("8LockWhenERKNS0_9ConditionE"), 0)
VOXCOL_LOCK_WHEN(voxcol_tsan_lock_when_timeout,
                 M("19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE"), 0)
VOXCOL_LOCK_WHEN(voxcol_tsan_lock_when_deadline,
                 M("20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE"), 0)
VOXCOL_LOCK_WHEN(voxcol_tsan_reader_lock_when, M("14ReaderLockWhenERKNS0_9ConditionE"), kRead)
VOXCOL_LOCK_WHEN(voxcol_tsan_reader_lock_when_timeout,
                 M("25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE"), kRead)
VOXCOL_LOCK_WHEN(voxcol_tsan_reader_lock_when_deadline,
                 M("26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE"), kRead)
VOXCOL_WAIT(voxcol_tsan_await, M("5AwaitERKNS0_9ConditionE"), self)
VOXCOL_WAIT(voxcol_tsan_await_timeout, M("16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE"),
            self)
VOXCOL_WAIT(voxcol_tsan_await_deadline, M("17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE"), self)
VOXCOL_DESTROY(voxcol_tsan_mutex_d1, M("D1Ev"))
VOXCOL_DESTROY(voxcol_tsan_mutex_d2, M("D2Ev"))
#define C(s) "_ZN4absl7debian37CondVar" s
VOXCOL_WAIT(voxcol_tsan_cv_wait, C("4WaitEPNS0_5MutexE"), reinterpret_cast<void*>(a))
VOXCOL_WAIT(voxcol_tsan_cv_wait_timeout, C("15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE"),
            reinterpret_cast<void*>(a))
VOXCOL_WAIT(voxcol_tsan_cv_wait_deadline, C("16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE"),
            reinterpret_cast<void*>(a))

// absl::call_once: a thread that finds the function running waits in the uninstrumented
// SpinLockWait and reads the done state there; the runner's release store on the control word is
// instrumented (call_once.h), so acquiring it after the wait gives the happens-before edge.
VOXCOL_SYMBOL(voxcol_tsan_spin_lock_wait,
              "_ZN4absl7debian313base_internal12SpinLockWaitEPSt6atomicIjEiPKNS1_"
              "22SpinLockWaitTransitionENS1_14SchedulingModeE");
uint64_t voxcol_tsan_spin_lock_wait(void* word, uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  static Fn real = Real(
      "_ZN4absl7debian313base_internal12SpinLockWaitEPSt6atomicIjEiPKNS1_"
      "22SpinLockWaitTransitionENS1_14SchedulingModeE");
  uint64_t r = real(word, a, b, c, d);
  __tsan_acquire(word);
  return r;
}
