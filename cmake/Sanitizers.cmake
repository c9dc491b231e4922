# Sanitizer and fuzzing builds (docs/testing.md, "Fuzzing and sanitizers"). Both default off, so the
# default build is unchanged.
#
# VOXCOL_SANITIZE: empty/OFF, "address,undefined" (ON means this too) or "thread". Any UBSan report
# aborts (-fno-sanitize-recover), ASan halts on its first report by default, TSan is told to by
# scripts/test-sanitizers.sh (TSAN_OPTIONS halt_on_error=1).
# VOXCOL_FUZZ: the libFuzzer targets in tests/fuzz (clang only), built beside the tests in the same
# ASan+UBSan tree (one sanitizer build instead of two). Every file gets libFuzzer's edge counters
# (-fsanitize-coverage=inline-8bit-counters,pc-table: cheap, so the tests in that tree run at
# nearly plain ASan speed); the fuzz targets themselves are built with -fsanitize=fuzzer (also
# comparison tracing) and link libFuzzer's main.
set(VOXCOL_SANITIZE "" CACHE STRING "Sanitizers for every target: address,undefined | thread | empty")
option(VOXCOL_FUZZ "Build the libFuzzer targets in tests/fuzz (clang; implies address,undefined)" OFF)

if(VOXCOL_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "VOXCOL_FUZZ needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14)")
  endif()
  if(VOXCOL_SANITIZE STREQUAL "thread")
    message(FATAL_ERROR "VOXCOL_FUZZ builds with address,undefined, not thread")
  endif()
  set(VOXCOL_SANITIZE "address,undefined")
  add_compile_options(-fsanitize-coverage=inline-8bit-counters,pc-table)
endif()

if(VOXCOL_SANITIZE STREQUAL "ON")
  set(VOXCOL_SANITIZE "address,undefined")
endif()
if(VOXCOL_SANITIZE AND NOT VOXCOL_SANITIZE STREQUAL "OFF")
  if(NOT VOXCOL_SANITIZE MATCHES "^(address,undefined|address|undefined|thread)$")
    message(FATAL_ERROR "VOXCOL_SANITIZE=${VOXCOL_SANITIZE}: use address,undefined or thread")
  endif()
  message(STATUS "voxcol: building with -fsanitize=${VOXCOL_SANITIZE}")
  add_compile_options(-fsanitize=${VOXCOL_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${VOXCOL_SANITIZE})
endif()

# TSan: Debian's abseil is not instrumented, so every executable gets the absl::Mutex annotations
# of tests/sanitizers/tsan_absl_mutex.cc, exported (-rdynamic) so gRPC's calls reach them too.
if(VOXCOL_SANITIZE STREQUAL "thread")
  add_link_options(-rdynamic)
  add_library(voxcol_tsan_absl OBJECT ${PROJECT_SOURCE_DIR}/tests/sanitizers/tsan_absl_mutex.cc)
endif()

# Called once at the end of the top-level CMakeLists: links the TSan annotations into every
# executable defined so far.
function(voxcol_link_tsan_annotations)
  if(NOT VOXCOL_SANITIZE STREQUAL "thread")
    return()
  endif()
  set(dirs ${PROJECT_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "EXECUTABLE")
        target_link_libraries(${target} PRIVATE voxcol_tsan_absl)
      endif()
    endforeach()
  endwhile()
endfunction()
