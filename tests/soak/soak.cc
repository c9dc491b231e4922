// voxcol_soak (issue 38): a primary and a read replica under mixed load while faults strike at
// random: kill -9 of either server (restarted on the same port and data directory), and through
// two fault proxies (replica -> primary, clients -> primary) partitions, delays, throttling and
// resets. At the end every acknowledged edit must be on the primary (after one more kill -9), the
// replica must hold exactly the primary's voxels at the same version, and no process may have
// grown by more than --rss_growth_mb. Prints one summary line; exit 0 when every check held.
//
// Usage: voxcol_soak --server=PATH [--seconds=60] [--seed=1] [--rss_growth_mb=300]
// (scripts/soak.sh --minutes=N runs it on the build.)
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/voxcol_client.h"
#include "tests/integration/fault_proxy.h"
#include "tests/integration/server_process.h"

namespace voxcol::soak {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using testing::FaultProxy;
using testing::ServerProcess;

constexpr int kSizeX = 192, kSizeY = 96, kSizeZ = 192;  // voxels; centred on the origin
constexpr int kSpacing = 6;
constexpr int kPerX = kSizeX / kSpacing - 1, kPerY = kSizeY / kSpacing - 1;
constexpr int kSpots = kPerX * kPerY * (kSizeZ / kSpacing - 1);

// Edit k: a ball of its own material at its own place (no two overlap), so that the voxel at its
// centre tells whether it is there.
struct Spot {
  int x, y, z;
};
Spot SpotOf(int k) {
  return {-kSizeX / 2 + kSpacing * (1 + k % kPerX),
          -kSizeY / 2 + kSpacing * (1 + (k / kPerX) % kPerY),
          -kSizeZ / 2 + kSpacing * (1 + k / (kPerX * kPerY))};
}
uint8_t MaterialOf(int k) { return uint8_t(10 + k % 240); }

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

uint64_t RssMiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  uint64_t kb = 0;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> kb;
      break;
    }
  }
  return kb >> 10;
}

// One server process that is killed and restarted on the same port and data directory.
class Node {
 public:
  Node(std::string binary, std::string dir, std::vector<std::string> args)
      : binary_(std::move(binary)), dir_(std::move(dir)), port_(FreePort()) {
    args_ = std::move(args);
    args_.push_back("--listen=127.0.0.1:" + std::to_string(port_));
    args_.push_back("--data_dir=" + dir_ + "/data");
  }
  bool Start() {
    server_ = std::make_unique<ServerProcess>();
    const bool ok = server_->Start(binary_, args_, dir_);
    if (!ok)
      std::fprintf(stderr, "soak: %s did not start:\n%s\n", dir_.c_str(), server_->Log().c_str());
    started_ = Clock::now();
    rss_start_ = 0;
    return ok;
  }
  void Kill() {
    EndIncarnation();
    server_->Stop(SIGKILL);
    ++kills_;
  }
  // Records the RSS 20 s after each start (warm) and at its end.
  void SampleRss() {
    if (rss_start_ == 0 && Clock::now() - started_ > std::chrono::seconds(20)) {
      rss_start_ = RssMiB(server_->pid());
    }
  }
  void EndIncarnation() {
    if (rss_start_ == 0) return;  // too short-lived to judge
    const uint64_t end = RssMiB(server_->pid());
    if (end > rss_start_ && end - rss_start_ > max_growth_) max_growth_ = end - rss_start_;
    last_ = {rss_start_, end};
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int kills() const { return kills_; }
  uint64_t max_growth() const { return max_growth_; }
  std::pair<uint64_t, uint64_t> last_rss() const { return last_; }

 private:
  std::string binary_, dir_;
  int port_;
  std::vector<std::string> args_;
  std::unique_ptr<ServerProcess> server_;
  Clock::time_point started_;
  uint64_t rss_start_ = 0, max_growth_ = 0;
  std::pair<uint64_t, uint64_t> last_{0, 0};
  int kills_ = 0;
};

struct Counters {
  std::atomic<uint64_t> acked{0}, edit_retries{0}, queries_ok{0}, queries_failed{0};
  std::atomic<uint64_t> unexpected{0}, feed_batches{0}, feed_gaps{0}, feed_reconnects{0};
};

// A code a client may see while the network or a server fails; anything else is a wrong answer.
bool Expected(grpc::StatusCode code) {
  return code == grpc::StatusCode::OK || code == grpc::StatusCode::UNAVAILABLE ||
         code == grpc::StatusCode::DEADLINE_EXCEEDED || code == grpc::StatusCode::CANCELLED ||
         code == grpc::StatusCode::RESOURCE_EXHAUSTED || code == grpc::StatusCode::ABORTED;
}

void Note(Counters& c, const grpc::Status& s, const char* what) {
  if (Expected(s.error_code())) return;
  ++c.unexpected;
  std::fprintf(stderr, "soak: %s answered %d: %s\n", what, int(s.error_code()),
               s.error_message().c_str());
}

// Edits one spot after another through `address`, each retried with its idempotency key until
// acknowledged. `acked` ends with every acknowledged k.
void Writer(const std::string& address, const std::atomic<bool>& stop, Counters& c,
            std::vector<int>* acked) {
  client::Client client(address, milliseconds(2000));
  for (int k = 0; k < kSpots && !stop.load(); ++k) {
    v1::ApplyEditsRequest request;
    request.set_idempotency_key("soak-" + std::to_string(k));
    v1::FillBallRequest* ball = request.add_primitives()->mutable_fill_ball();
    const Spot s = SpotOf(k);
    ball->mutable_center()->set_x(float(s.x)), ball->mutable_center()->set_y(float(s.y));
    ball->mutable_center()->set_z(float(s.z));
    ball->set_radius(2.0f);
    ball->set_material(MaterialOf(k));
    ball->set_mode(v1::EDIT_MODE_SET);
    for (;;) {
      v1::EditAck ack;
      grpc::Status status = client.ApplyEdits(request, &ack);
      Note(c, status, "ApplyEdits");
      if (status.ok()) {
        acked->push_back(k);
        ++c.acked;
        break;
      }
      if (stop.load()) return;  // k's outcome unknown: not checked
      ++c.edit_retries;
      std::this_thread::sleep_for(milliseconds(50));
    }
    std::this_thread::sleep_for(milliseconds(40));
  }
}

// Rays on both servers: any answer but a transport failure's must be OK.
void Reader(const std::string& primary, const std::string& replica, const std::atomic<bool>& stop,
            Counters& c, uint32_t seed) {
  client::Client clients[2] = {client::Client(primary, milliseconds(1000)),
                               client::Client(replica, milliseconds(1000))};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> xz(-90, 90);
  while (!stop.load()) {
    for (client::Client& client : clients) {
      v1::RaycastRequest ray;
      ray.mutable_origin()->set_x(xz(rng)), ray.mutable_origin()->set_y(44);
      ray.mutable_origin()->set_z(xz(rng)), ray.mutable_direction()->set_y(-1);
      ray.set_max_distance(100);
      v1::RaycastResponse hit;
      grpc::Status status = client.Raycast(ray, &hit);
      Note(c, status, "Raycast");
      (status.ok() ? c.queries_ok : c.queries_failed)++;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
}

// Follows the primary's feed, resubscribing after every end from the last version it saw; the
// versions must increase by one (every batch is one version) within and across streams.
void Subscriber(const std::string& address, const std::atomic<bool>& stop, Counters& c) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = v1::EditService::NewStub(channel);
  uint64_t last = 0;
  while (!stop.load()) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::SubscribeRequest request;
    request.set_from_version(last);
    auto reader = stub->Subscribe(&context, request);
    v1::SubscribeResponse batch;
    while (reader->Read(&batch)) {
      ++c.feed_batches;
      if (last != 0 && batch.version() != last + 1) ++c.feed_gaps;
      last = batch.version();
    }
    Note(c, reader->Finish(), "Subscribe");
    ++c.feed_reconnects;
    std::this_thread::sleep_for(milliseconds(100));
  }
}

// The world's voxels as two ReadVoxels boxes (each under --max_region_voxels), and its version;
// empty on any failure.
struct Voxels {
  uint64_t version = 0;
  std::string materials, occupancies;
};
Voxels ReadWorld(const std::string& address) {
  client::Client client(address, milliseconds(30000));
  Voxels out;
  for (int half = 0; half < 2; ++half) {
    v1::ReadVoxelsRequest request;
    v1::VoxelBox* box = request.mutable_region();
    box->mutable_min()->set_x(-kSizeX / 2), box->mutable_min()->set_z(-kSizeZ / 2);
    box->mutable_min()->set_y(half == 0 ? -kSizeY / 2 : 0);
    box->mutable_max()->set_x(kSizeX / 2), box->mutable_max()->set_z(kSizeZ / 2);
    box->mutable_max()->set_y(half == 0 ? 0 : kSizeY / 2);
    v1::ReadVoxelsResponse response;
    if (!client.ReadVoxels(request, &response).ok()) return {};
    if (half == 1 && response.version() != out.version) return {};  // moved between the reads
    out.version = response.version();
    out.materials += response.voxels().materials();
    out.occupancies += response.voxels().occupancies();
  }
  return out;
}

// The material at edit k's centre in `world`. ReadVoxels orders a box's voxels x fastest, then z,
// then y, so the two boxes (split along y) concatenate into the whole world's order.
uint8_t MaterialAt(const Voxels& world, int k) {
  const Spot s = SpotOf(k);
  const size_t index =
      size_t(s.x + kSizeX / 2) +
      size_t(kSizeX) * (size_t(s.z + kSizeZ / 2) + size_t(kSizeZ) * size_t(s.y + kSizeY / 2));
  return index < world.materials.size() ? uint8_t(world.materials[index]) : 0;
}

struct Chaos {
  int primary_kills = 0, replica_kills = 0, partitions = 0, delays = 0, throttles = 0, resets = 0;
};

// Fault `kind` (0-7), held for a few seconds, then healed.
void Strike(int kind, std::mt19937& rng, Node& primary, Node& replica, FaultProxy& to_primary,
            FaultProxy& clients, Chaos& chaos) {
  auto hold = [&](int lo_ms, int hi_ms) {
    std::this_thread::sleep_for(
        milliseconds(std::uniform_int_distribution<int>(lo_ms, hi_ms)(rng)));
  };
  switch (kind) {
    case 0:
      primary.Kill(), hold(200, 1500), primary.Start(), ++chaos.primary_kills;
      break;
    case 1:
      replica.Kill(), hold(200, 1500), replica.Start(), ++chaos.replica_kills;
      break;
    case 2:
      to_primary.Partition(true), hold(2000, 5000), to_primary.Heal(), ++chaos.partitions;
      break;
    case 3:
      to_primary.SetDelay(milliseconds(200)), hold(2000, 4000), to_primary.Heal(), ++chaos.delays;
      break;
    case 4:
      to_primary.SetThrottle(64 << 10), hold(2000, 4000), to_primary.Heal(), ++chaos.throttles;
      break;
    case 5:
      to_primary.ResetAll(), ++chaos.resets;
      break;
    case 6:
      clients.Partition(true), hold(1000, 3000), clients.Heal(), ++chaos.partitions;
      break;
    default:
      clients.ResetAll(), ++chaos.resets;
      break;
  }
}

int Run(const std::string& binary, int seconds, uint32_t seed, uint64_t rss_bound) {
  testing::TempDir dir;
  const std::vector<std::string> world = {"--world_size=" + std::to_string(kSizeX) + "," +
                                              std::to_string(kSizeY) + "," + std::to_string(kSizeZ),
                                          "--seed=9", "--store_cache_mb=32",
                                          "--chunk_collision_cache_mb=32"};
  Node primary(binary, dir.path() + "/primary", world);
  std::filesystem::create_directories(dir.path() + "/primary");
  std::filesystem::create_directories(dir.path() + "/replica");
  if (!primary.Start()) return 2;
  FaultProxy to_primary(primary.address()), clients(primary.address());
  std::vector<std::string> replica_args = world;
  replica_args.push_back("--replica_of=" + to_primary.address());
  Node replica(binary, dir.path() + "/replica", replica_args);
  if (!to_primary.ok() || !clients.ok() || !replica.Start()) return 2;

  Counters c;
  std::atomic<bool> stop_writer{false}, stop{false};
  std::vector<int> acked;
  std::thread writer(Writer, clients.address(), std::cref(stop_writer), std::ref(c), &acked);
  std::thread reader(Reader, clients.address(), replica.address(), std::cref(stop), std::ref(c),
                     seed);
  std::thread feed(Subscriber, clients.address(), std::cref(stop), std::ref(c));
  std::mt19937 rng(seed);
  Chaos chaos;
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  std::vector<int> kinds;  // every kind once in a random order, then again: short runs see all
  while (Clock::now() < end) {
    if (kinds.empty()) {
      kinds = {0, 1, 2, 3, 4, 5, 6, 7};
      std::shuffle(kinds.begin(), kinds.end(), rng);
    }
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(1000, 4000)(rng)));
    primary.SampleRss(), replica.SampleRss();
    Strike(kinds.back(), rng, primary, replica, to_primary, clients, chaos);
    kinds.pop_back();
  }
  stop_writer = true;
  writer.join();
  stop = true;
  reader.join();
  feed.join();
  primary.SampleRss(), replica.SampleRss();
  primary.Kill();  // acknowledged means durable: one more kill -9 before the check
  if (!primary.Start()) return 2;
  replica.EndIncarnation();

  // The replica catches up; then both must hold the same voxels at the same version.
  Voxels p, r;
  const auto catch_up = Clock::now() + std::chrono::seconds(120);
  do {
    p = ReadWorld(primary.address()), r = ReadWorld(replica.address());
    if (p.version != 0 && p.version == r.version) break;
    std::this_thread::sleep_for(milliseconds(500));
  } while (Clock::now() < catch_up);
  int lost = 0;
  for (int k : acked) lost += MaterialAt(p, k) == MaterialOf(k) ? 0 : 1;
  const bool equal = p.version != 0 && p.version == r.version && p.materials == r.materials &&
                     p.occupancies == r.occupancies;
  const uint64_t growth = std::max(primary.max_growth(), replica.max_growth());
  std::printf(
      "soak: %d s, seed %u: %zu acknowledged edits (%llu retries), lost %d; replica %s at version "
      "%llu (primary %llu); faults: %d primary kills, %d replica kills, %d partitions, %d delays, "
      "%d throttles, %d resets; queries %llu ok, %llu failed in transit, %llu unexpected answers; "
      "feed %llu batches, %llu gaps, %llu resubscribes; RSS growth max %llu MiB (bound %llu; "
      "replica %llu -> %llu MiB)\n",
      seconds, seed, acked.size(), (unsigned long long)c.edit_retries.load(), lost,
      equal ? "equal" : "DIFFERENT", (unsigned long long)r.version, (unsigned long long)p.version,
      chaos.primary_kills, chaos.replica_kills, chaos.partitions, chaos.delays, chaos.throttles,
      chaos.resets, (unsigned long long)c.queries_ok.load(),
      (unsigned long long)c.queries_failed.load(), (unsigned long long)c.unexpected.load(),
      (unsigned long long)c.feed_batches.load(), (unsigned long long)c.feed_gaps.load(),
      (unsigned long long)c.feed_reconnects.load(), (unsigned long long)growth,
      (unsigned long long)rss_bound, (unsigned long long)replica.last_rss().first,
      (unsigned long long)replica.last_rss().second);
  const bool passed = lost == 0 && equal && c.unexpected == 0 && c.feed_gaps == 0 &&
                      growth <= rss_bound && !acked.empty();
  return passed ? 0 : 1;
}

}  // namespace
}  // namespace voxcol::soak

int main(int argc, char** argv) {
  std::string server;
  int seconds = 60;
  uint32_t seed = 1;
  uint64_t rss_bound = 300;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      const size_t n = std::strlen(name);
      return arg.compare(0, n, name) == 0 ? arg.c_str() + n : nullptr;
    };
    if (const char* v = value("--server="))
      server = v;
    else if (const char* v = value("--seconds="))
      seconds = std::atoi(v);
    else if (const char* v = value("--seed="))
      seed = uint32_t(std::atoll(v));
    else if (const char* v = value("--rss_growth_mb="))
      rss_bound = uint64_t(std::atoll(v));
    else {
      std::fprintf(stderr,
                   "usage: voxcol_soak --server=PATH [--seconds=60] [--seed=1] "
                   "[--rss_growth_mb=300]\n");
      return 2;
    }
  }
  if (server.empty() || seconds <= 0) {
    std::fprintf(stderr, "voxcol_soak: --server and a positive --seconds are required\n");
    return 2;
  }
  return voxcol::soak::Run(server, seconds, seed, rss_bound);
}
