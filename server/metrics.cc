#include "server/metrics.h"

#include <civetweb.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace voxcol::server {

double Histogram::UpperBound(int bucket) { return 10e-6 * std::ldexp(1.0, bucket); }

void Histogram::Observe(double seconds) {
  int i = 0;
  while (i < kBuckets && seconds > UpperBound(i)) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(uint64_t(std::max(0.0, seconds) * 1e9), std::memory_order_relaxed);
}

double Histogram::Quantile(double q) const {
  uint64_t total = count();
  if (total == 0) return 0;
  uint64_t rank = uint64_t(std::ceil(q * double(total))), seen = 0;
  for (int i = 0; i <= kBuckets; ++i) {
    seen += bucket(i);
    if (seen >= rank) return i < kBuckets ? UpperBound(i) : INFINITY;
  }
  return INFINITY;
}

Counter* Metrics::AddCounter(const std::string& name, const std::string& help,
                             const std::string& labels) {
  absl::MutexLock lock(&mu_);
  entries_.push_back(
      {name, help, labels, "counter", std::make_unique<Counter>(), nullptr, nullptr});
  return entries_.back().counter.get();
}

Histogram* Metrics::AddHistogram(const std::string& name, const std::string& help,
                                 const std::string& labels) {
  absl::MutexLock lock(&mu_);
  entries_.push_back(
      {name, help, labels, "histogram", nullptr, std::make_unique<Histogram>(), nullptr});
  return entries_.back().histogram.get();
}

void Metrics::AddGauge(const std::string& name, const std::string& help,
                       std::function<double()> read) {
  absl::MutexLock lock(&mu_);
  entries_.push_back({name, help, "", "gauge", nullptr, nullptr, std::move(read)});
}

void Metrics::AddCounterCallback(const std::string& name, const std::string& help,
                                 std::function<double()> read) {
  absl::MutexLock lock(&mu_);
  entries_.push_back({name, help, "", "counter", nullptr, nullptr, std::move(read)});
}

std::string Metrics::Render() const {
  absl::MutexLock lock(&mu_);
  std::string out;
  std::map<std::string, bool> described;  // HELP/TYPE once per metric family
  auto braces = [](const std::string& labels, const std::string& extra = "") {
    std::string all = labels.empty() ? extra : (extra.empty() ? labels : labels + "," + extra);
    return all.empty() ? std::string() : "{" + all + "}";
  };
  for (const Entry& e : entries_) {
    if (!described[e.name]) {
      described[e.name] = true;
      absl::StrAppend(&out, "# HELP ", e.name, " ", e.help, "\n# TYPE ", e.name, " ", e.type, "\n");
    }
    if (e.counter) {
      absl::StrAppend(&out, e.name, braces(e.labels), " ", e.counter->value(), "\n");
    } else if (e.gauge) {
      absl::StrAppend(&out, e.name, braces(e.labels), " ", absl::StrFormat("%.17g", e.gauge()),
                      "\n");
    } else {
      uint64_t cumulative = 0;
      for (int i = 0; i <= Histogram::kBuckets; ++i) {
        cumulative += e.histogram->bucket(i);
        std::string le =
            i < Histogram::kBuckets ? absl::StrFormat("%g", Histogram::UpperBound(i)) : "+Inf";
        absl::StrAppend(&out, e.name, "_bucket", braces(e.labels, "le=\"" + le + "\""), " ",
                        cumulative, "\n");
      }
      absl::StrAppend(&out, e.name, "_sum", braces(e.labels), " ",
                      absl::StrFormat("%.9f", e.histogram->sum_seconds()), "\n", e.name, "_count",
                      braces(e.labels), " ", e.histogram->count(), "\n");
    }
  }
  return out;
}

namespace {

int HandleMetrics(mg_connection* conn, void* data) {
  std::string body = static_cast<const Metrics*>(data)->Render();
  mg_printf(conn,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: %zu\r\n"
            "Connection: close\r\n\r\n",
            body.size());
  mg_write(conn, body.data(), body.size());
  return 200;
}

}  // namespace

bool MetricsHttpServer::Start(const Metrics* metrics, const std::string& address) {
  mg_init_library(0);
  const char* options[] = {"listening_ports", address.c_str(), "num_threads", "2", nullptr};
  mg_callbacks callbacks{};
  context_ = mg_start(&callbacks, nullptr, options);
  if (context_ == nullptr) return false;
  mg_set_request_handler(context_, "/metrics", HandleMetrics, const_cast<Metrics*>(metrics));
  mg_server_port ports[1];
  if (mg_get_server_ports(context_, 1, ports) > 0) port_ = ports[0].port;
  return true;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (context_ != nullptr) mg_stop(context_);
}

double ProcessResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long pages = 0, resident = 0;
  int n = std::fscanf(f, "%lu %lu", &pages, &resident);
  std::fclose(f);
  return n == 2 ? double(resident) * double(sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace voxcol::server
