// Process-wide metrics in the Prometheus text exposition format, served over HTTP (civetweb).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

struct mg_context;

namespace voxcol::server {

class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// Fixed buckets from 10 µs to 25 s in 1-2.5-5 steps (the bounds are decimal literals, so the
// exposition prints them exactly and a scraper parses back the same doubles); lock-free
// observation.
class Histogram {
 public:
  static constexpr int kBuckets = 20;  // finite upper bounds, plus +Inf
  void Observe(double seconds);
  static double UpperBound(int bucket);  // seconds; bucket in [0, kBuckets)
  uint64_t bucket(int i) const { return counts_[i].load(std::memory_order_relaxed); }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum_seconds() const { return double(sum_ns_.load(std::memory_order_relaxed)) * 1e-9; }
  // Approximate quantile (0..1) from the buckets: the upper bound of the bucket holding it.
  double Quantile(double q) const;

 private:
  std::atomic<uint64_t> counts_[kBuckets + 1] = {};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

// A number as Prometheus' text format reads it: the shortest decimal that parses back to exactly
// `value` ("+Inf", "-Inf", "NaN" for the special values).
std::string FormatMetricValue(double value);

class Metrics {
 public:
  // Registers a metric; `labels` is the Prometheus label set without braces, e.g. `kind="raycast"`.
  // The returned pointer lives as long as this Metrics object. Safe at any time (a label set seen
  // only at run time, e.g. a status code, may be added when it first occurs).
  Counter* AddCounter(const std::string& name, const std::string& help,
                      const std::string& labels = "");
  Histogram* AddHistogram(const std::string& name, const std::string& help,
                          const std::string& labels = "");
  void AddGauge(const std::string& name, const std::string& help, std::function<double()> read,
                const std::string& labels = "");
  // A counter kept elsewhere (monotonic), read at scrape time.
  void AddCounterCallback(const std::string& name, const std::string& help,
                          std::function<double()> read);
  // A family whose label sets are only known at scrape time (e.g. one per world): `read` returns
  // (label set without braces, value) pairs. `type` is "gauge" or "counter".
  using Samples = std::vector<std::pair<std::string, double>>;
  void AddFamilyCallback(const std::string& name, const std::string& help, const std::string& type,
                         std::function<Samples()> read);

  // The whole registry in Prometheus text format 0.0.4: each family's samples together, under one
  // HELP and TYPE line, families in the order they were first registered.
  std::string Render() const;

 private:
  struct Entry {
    std::string name, help, labels, type;
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Histogram> histogram;
    std::function<double()> gauge;
    std::function<Samples()> samples;
  };
  mutable absl::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// Serves GET /metrics from `metrics` on `address` ("host:port"; port 0 picks one).
class MetricsHttpServer {
 public:
  ~MetricsHttpServer();
  // Returns false if the address cannot be bound.
  bool Start(const Metrics* metrics, const std::string& address);
  int port() const { return port_; }

 private:
  mg_context* context_ = nullptr;
  int port_ = 0;
};

// Resident set size of this process in bytes (from /proc/self/statm); 0 if unknown.
double ProcessResidentBytes();

}  // namespace voxcol::server
