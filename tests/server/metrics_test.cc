// The metrics registry's exposition (families together, exact numbers) and the CPU quota parsing
// behind --query_threads=0.
#include "server/telemetry/metrics.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <thread>

#include "server/app/cpu_quota.h"

namespace voxcol::server {
namespace {

TEST(MetricsTest, ValuesPrintAsTheShortestDecimalThatParsesBackExactly) {
  for (double v : {0.0, 1.0, 0.1, 2.5e-5, 1.0 / 3.0, 123456789.125, 1e-300, 0.025}) {
    const std::string text = FormatMetricValue(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
  }
  EXPECT_EQ(FormatMetricValue(0.025), "0.025");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(MetricsTest, HistogramBoundsAreIncreasingAndObservationsLandInTheirBucket) {
  for (int i = 1; i < Histogram::kBuckets; ++i) {
    EXPECT_LT(Histogram::UpperBound(i - 1), Histogram::UpperBound(i));
  }
  Histogram h;
  h.Observe(Histogram::UpperBound(3));         // on a bound: that bucket (le is inclusive)
  h.Observe(Histogram::UpperBound(3) * 1.01);  // just above: the next one
  h.Observe(1e9);                              // beyond every bound: +Inf
  EXPECT_EQ(h.bucket(3), 1u);
  EXPECT_EQ(h.bucket(4), 1u);
  EXPECT_EQ(h.bucket(Histogram::kBuckets), 1u);
  EXPECT_EQ(h.count(), 3u);
}

TEST(MetricsTest, LabelSetsAddedLaterJoinTheirFamily) {
  Metrics m;
  m.AddCounter("a_total", "first", "code=\"OK\"")->Add(2);
  m.AddGauge("b", "between", [] { return 0.5; });
  m.AddCounter("a_total", "first", "code=\"NOT_FOUND\"")->Add();
  EXPECT_EQ(m.Render(),
            "# HELP a_total first\n# TYPE a_total counter\n"
            "a_total{code=\"OK\"} 2\na_total{code=\"NOT_FOUND\"} 1\n"
            "# HELP b between\n# TYPE b gauge\nb 0.5\n");
}

TEST(CpuQuotaTest, CgroupV2CpuMax) {
  EXPECT_EQ(ParseCgroupV2CpuMax("150000 100000"), 1.5);
  EXPECT_EQ(ParseCgroupV2CpuMax("200000 100000"), 2.0);
  EXPECT_FALSE(ParseCgroupV2CpuMax("max 100000").has_value());
  EXPECT_FALSE(ParseCgroupV2CpuMax("").has_value());
  EXPECT_FALSE(ParseCgroupV2CpuMax("garbage").has_value());
  EXPECT_FALSE(ParseCgroupV2CpuMax("100000 0").has_value());
}

TEST(CpuQuotaTest, CgroupV1Quota) {
  EXPECT_EQ(ParseCgroupV1Quota("50000", "100000"), 0.5);
  EXPECT_FALSE(ParseCgroupV1Quota("-1", "100000").has_value());
  EXPECT_FALSE(ParseCgroupV1Quota("", "").has_value());
}

TEST(CpuQuotaTest, UsableCpusIsAtLeastOneAndAtMostTheCores) {
  const int cpus = UsableCpus();
  EXPECT_GE(cpus, 1);
  EXPECT_LE(cpus, int(std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace voxcol::server
