#include "server/app/cpu_quota.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

namespace voxcol::server {
namespace {

std::optional<double> Ratio(const std::string& quota, const std::string& period) {
  char* end = nullptr;
  const double q = std::strtod(quota.c_str(), &end);
  if (quota.empty() || *end != '\0' || !(q > 0)) return std::nullopt;
  const double p = std::strtod(period.c_str(), &end);
  if (period.empty() || *end != '\0' || !(p > 0)) return std::nullopt;
  return q / p;
}

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

// The cgroup v2 directory of this process ("0::/path" in /proc/self/cgroup), or the mount root
// (which a container's cgroup namespace makes its own cgroup).
std::string CgroupV2Dir() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  }
  return "/sys/fs/cgroup";
}

}  // namespace

std::optional<double> ParseCgroupV2CpuMax(const std::string& text) {
  std::istringstream in(text);
  std::string quota, period;
  if (!(in >> quota >> period) || quota == "max") return std::nullopt;
  return Ratio(quota, period);
}

std::optional<double> ParseCgroupV1Quota(const std::string& quota_us,
                                         const std::string& period_us) {
  return Ratio(quota_us, period_us);
}

int UsableCpus() {
  int cpus = int(std::thread::hardware_concurrency());
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  std::optional<double> quota = ParseCgroupV2CpuMax(ReadTrimmed(CgroupV2Dir() + "/cpu.max"));
  if (!quota) quota = ParseCgroupV2CpuMax(ReadTrimmed("/sys/fs/cgroup/cpu.max"));
  if (!quota) {
    quota = ParseCgroupV1Quota(ReadTrimmed("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
                               ReadTrimmed("/sys/fs/cgroup/cpu/cpu.cfs_period_us"));
  }
  if (quota) cpus = std::min(cpus, int(std::ceil(*quota)));
  return std::max(1, cpus);
}

}  // namespace voxcol::server
