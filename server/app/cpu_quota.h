// How many CPUs this process may use: the cores it may run on, capped by a container's CPU quota
// (cgroup v2 cpu.max or v1 cpu.cfs_quota_us / cpu.cfs_period_us). Used for --query_threads=0.
#pragma once

#include <optional>
#include <string>

namespace voxcol::server {

// The quota of a cgroup v2 `cpu.max` text ("150000 100000" -> 1.5 CPUs); nullopt for "max"
// (no limit) or unparsable text.
std::optional<double> ParseCgroupV2CpuMax(const std::string& text);
// The quota of cgroup v1 files' texts (quota -1 means no limit).
std::optional<double> ParseCgroupV1Quota(const std::string& quota_us, const std::string& period_us);

// CPUs usable by this process: the affinity mask's count, lowered to ceil(quota) when the
// process's cgroup (v2 under /sys/fs/cgroup, else v1 under /sys/fs/cgroup/cpu) has a quota;
// at least 1.
int UsableCpus();

}  // namespace voxcol::server
