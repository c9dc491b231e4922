#include "server/telemetry/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/version/version.h"

namespace voxcol::server {
namespace {

// Fields of /proc/self/stat after the command name (which may hold spaces): fields[0] is the
// state (field 3 of proc(5)), so field N of proc(5) is fields[N - 3].
std::vector<std::string> SelfStatFields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> fields;
  size_t close = line.rfind(')');
  if (close == std::string::npos) return fields;
  std::istringstream rest(line.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

double StatField(int proc5_field) {
  std::vector<std::string> fields = SelfStatFields();
  size_t i = size_t(proc5_field - 3);
  return i < fields.size() ? std::strtod(fields[i].c_str(), nullptr) : 0;
}

double CpuSeconds() {
  std::vector<std::string> fields = SelfStatFields();
  if (fields.size() < 13) return 0;
  const double ticks = std::strtod(fields[11].c_str(), nullptr) +  // utime (14)
                       std::strtod(fields[12].c_str(), nullptr);   // stime (15)
  return ticks / double(sysconf(_SC_CLK_TCK));
}

double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double value = 0;
      in >> value;
      return value;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

double OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  double n = 0;
  while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n - 1;  // the directory stream's own descriptor
}

double MaxFds() {
  rlimit limit{};
  return getrlimit(RLIMIT_NOFILE, &limit) == 0 ? double(limit.rlim_cur) : 0;
}

}  // namespace

void RegisterDiskMetrics(const std::string& data_dir, uint64_t reserve_bytes, Metrics& r) {
  r.AddGauge("voxcol_data_disk_free_bytes",
             "Bytes free for the server on the data directory's file system (statvfs f_bavail)",
             [data_dir] {
               struct statvfs fs {};
               if (statvfs(data_dir.c_str(), &fs) != 0) return -1.0;
               return double(fs.f_bavail) * double(fs.f_frsize);
             });
  r.AddGauge("voxcol_data_disk_reserve_bytes",
             "Free bytes below which edits are refused (--min_free_disk_mb)",
             [reserve_bytes] { return double(reserve_bytes); });
}

void RegisterProcessMetrics(Metrics& r) {
  r.AddCounterCallback("process_cpu_seconds_total", "Total user and system CPU time, seconds",
                       CpuSeconds);
  r.AddGauge("process_resident_memory_bytes", "Resident memory size in bytes",
             ProcessResidentBytes);
  r.AddGauge("process_virtual_memory_bytes", "Virtual memory size in bytes",
             [] { return StatField(23); });
  // Field 22 is the start time in clock ticks after boot.
  const double start = BootTimeSeconds() + StatField(22) / double(sysconf(_SC_CLK_TCK));
  r.AddGauge("process_start_time_seconds", "Start time of the process since the Unix epoch",
             [start] { return start; });
  r.AddGauge("process_open_fds", "Number of open file descriptors", OpenFds);
  r.AddGauge("process_max_fds", "Maximum number of open file descriptors", MaxFds);
  r.AddGauge("process_threads", "Number of OS threads in the process",
             [] { return StatField(20); });
  r.AddGauge(
      "voxcol_build_info", "Always 1; the labels say which build is running", [] { return 1.0; },
      absl::StrCat("version=\"", VersionString(), "\",revision=\"", GitRevision(), "\""));
}

}  // namespace voxcol::server
