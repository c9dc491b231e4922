#include "server/telemetry/metrics.h"

#include <civetweb.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace voxcol::server {

namespace {

constexpr double kUpperBounds[Histogram::kBuckets] = {
    1e-5,  2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01,
    0.025, 0.05,   0.1,  0.25, 0.5,    1,    2.5,  5,      10,   25};

}  // namespace

double Histogram::UpperBound(int bucket) { return kUpperBounds[bucket]; }

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return error == std::errc() ? std::string(buffer, end) : absl::StrFormat("%.17g", value);
}

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
      {name, help, labels, "counter", std::make_unique<Counter>(), nullptr, nullptr, nullptr});
  return entries_.back().counter.get();
}

Histogram* Metrics::AddHistogram(const std::string& name, const std::string& help,
                                 const std::string& labels) {
  absl::MutexLock lock(&mu_);
  entries_.push_back(
      {name, help, labels, "histogram", nullptr, std::make_unique<Histogram>(), nullptr, nullptr});
  return entries_.back().histogram.get();
}

void Metrics::AddGauge(const std::string& name, const std::string& help,
                       std::function<double()> read, const std::string& labels) {
  absl::MutexLock lock(&mu_);
  entries_.push_back({name, help, labels, "gauge", nullptr, nullptr, std::move(read), nullptr});
}

void Metrics::AddCounterCallback(const std::string& name, const std::string& help,
                                 std::function<double()> read) {
  absl::MutexLock lock(&mu_);
  entries_.push_back({name, help, "", "counter", nullptr, nullptr, std::move(read), nullptr});
}

void Metrics::AddFamilyCallback(const std::string& name, const std::string& help,
                                const std::string& type, std::function<Samples()> read) {
  absl::MutexLock lock(&mu_);
  entries_.push_back({name, help, "", type, nullptr, nullptr, nullptr, std::move(read)});
}

std::string Metrics::Render() const {
  absl::MutexLock lock(&mu_);
  // Families in order of first registration; a label set added later joins its family.
  std::vector<const std::string*> families;
  std::map<std::string, std::vector<const Entry*>> by_name;
  for (const Entry& e : entries_) {
    std::vector<const Entry*>& members = by_name[e.name];
    if (members.empty()) families.push_back(&e.name);
    members.push_back(&e);
  }
  auto braces = [](const std::string& labels, const std::string& extra = "") {
    std::string all = labels.empty() ? extra : (extra.empty() ? labels : labels + "," + extra);
    return all.empty() ? std::string() : "{" + all + "}";
  };
  std::string out;
  for (const std::string* name : families) {
    const std::vector<const Entry*>& members = by_name[*name];
    absl::StrAppend(&out, "# HELP ", *name, " ", members.front()->help, "\n# TYPE ", *name, " ",
                    members.front()->type, "\n");
    for (const Entry* e : members) {
      if (e->samples) {
        for (const auto& [labels, value] : e->samples()) {
          absl::StrAppend(&out, e->name, braces(labels), " ", FormatMetricValue(value), "\n");
        }
      } else if (e->counter) {
        absl::StrAppend(&out, e->name, braces(e->labels), " ", e->counter->value(), "\n");
      } else if (e->gauge) {
        absl::StrAppend(&out, e->name, braces(e->labels), " ", FormatMetricValue(e->gauge()), "\n");
      } else {
        uint64_t cumulative = 0;
        for (int i = 0; i <= Histogram::kBuckets; ++i) {
          cumulative += e->histogram->bucket(i);
          std::string le =
              i < Histogram::kBuckets ? FormatMetricValue(Histogram::UpperBound(i)) : "+Inf";
          absl::StrAppend(&out, e->name, "_bucket", braces(e->labels, "le=\"" + le + "\""), " ",
                          cumulative, "\n");
        }
        absl::StrAppend(&out, e->name, "_sum", braces(e->labels), " ",
                        FormatMetricValue(e->histogram->sum_seconds()), "\n", e->name, "_count",
                        braces(e->labels), " ", e->histogram->count(), "\n");
      }
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
