// WatchPaths against the real server (issue 41, path watching): a flat floor built by edits, a
// straight path found by FindPath along it, then edits. A wall across the path is heard as
// BLOCKED with the wall's version (the delay from the edit's acknowledgement to the event is
// measured: within 2 ticks at 60 Hz); an edit in a tile the path does not cross sends nothing
// and checks no watch; an unwatched path hears nothing; a hole dug through a wall the path goes
// around is heard as SHORTER; bad watches are refused naming the field.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/voxcol_client.h"
#include "tests/integration/http_get.h"
#include "tests/integration/proto_values.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::ProtoVec;
using Clock = std::chrono::steady_clock;
using testing::ServerProcess;
using testing::TempDir;

// The world: X in [-72, 72), Z in [-24, 24) voxels of 1 unit, navmesh tiles of 24: tile columns
// 0..5 start at X = -72, -48, -24, 0, 24, 48; tile rows 0, 1 at Z = -24, 0. The path runs along
// Z = -12 from X = -60 (tile 0) to X = -6 (tile 2).
constexpr float kPathZ = -12;

v1::EditPrimitive Box(int x0, int y0, int z0, int x1, int y1, int z1, uint32_t material) {
  v1::EditPrimitive p;
  v1::FillRegion* r = p.mutable_fill_region();
  v1::Int3* lo = r->mutable_region()->mutable_min();
  v1::Int3* hi = r->mutable_region()->mutable_max();
  lo->set_x(x0), lo->set_y(y0), lo->set_z(z0);
  hi->set_x(x1), hi->set_y(y1), hi->set_z(z1);
  r->set_material(material);
  r->set_mode(v1::EDIT_MODE_SET);
  return p;
}

// A wall 3 voxels high on the floor (material 2) or air where it was (material 0).
v1::EditPrimitive Wall(int x0, int z0, int x1, int z1, bool solid) {
  return Box(x0, 0, z0, x1, 3, z1, solid ? 2 : 0);
}

// One WatchPaths stream; a thread reads its events into a queue with their arrival times.
class WatchStream {
 public:
  explicit WatchStream(v1::QueryService::Stub& stub) : stream_(stub.WatchPaths(&context_)) {
    reader_ = std::thread([this] {
      v1::WatchPathsResponse r;
      while (stream_->Read(&r)) {
        std::lock_guard<std::mutex> lock(mu_);
        events_.push_back({r, Clock::now()});
        cv_.notify_all();
      }
    });
  }
  ~WatchStream() {
    context_.TryCancel();
    reader_.join();
  }

  bool Send(const v1::WatchPathsRequest& request) { return stream_->Write(request); }

  struct Event {
    v1::WatchPathsResponse response;
    Clock::time_point at;
  };
  // The next event, or nothing within `wait`.
  std::optional<Event> Next(std::chrono::milliseconds wait = std::chrono::milliseconds(5000)) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, wait, [&] { return !events_.empty(); })) return std::nullopt;
    Event e = events_.front();
    events_.pop_front();
    return e;
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::WatchPathsRequest, v1::WatchPathsResponse>> stream_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> events_;
  std::thread reader_;
};

class WatchPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(
        VOXCOL_SERVER_PATH,
        {"--data_dir=" + dir_.path() + "/data", "--world_size=144,32,48", "--store_sync=false",
         "--nav_profiles=walker:radius=0.5,height=2,max_climb=0.5", "--nav_default_profile=walker",
         "--max_path_distance=1000", "--metrics_listen=127.0.0.1:0"},
        dir_.path()))
        << server_.Log();
    client_ = std::make_unique<client::Client>(server_.address());
    stub_ = v1::QueryService::NewStub(
        grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials()));
    // The world emptied, then a rock floor under y = 0.
    Apply({Box(-72, -16, -24, 72, 16, 24, 0), Box(-72, -4, -24, 72, 0, 24, 2)});
  }

  uint64_t Apply(const std::vector<v1::EditPrimitive>& primitives) {
    v1::ApplyEditsRequest edits;
    for (const v1::EditPrimitive& p : primitives) *edits.add_primitives() = p;
    v1::EditAck ack;
    grpc::Status status = client_->ApplyEdits(edits, &ack);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return ack.version();
  }

  static v1::FindPathRequest Request() {
    v1::FindPathRequest request;
    *request.mutable_start() = ProtoVec(-60, 0, kPathZ);
    *request.mutable_goal() = ProtoVec(-6, 0, kPathZ);
    return request;
  }

  v1::FindPathResponse Path() {
    v1::FindPathResponse response;
    grpc::Status status = client_->FindPath(Request(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  // Registers `path` (FindPath's answer) as watch `id`; expects REGISTERED.
  void Watch(WatchStream& stream, uint64_t id, const v1::FindPathResponse& path,
             float shorter_margin = 0) {
    v1::WatchPathsRequest request;
    v1::PathWatch* watch = request.mutable_watch();
    watch->set_watch_id(id);
    *watch->mutable_path() = Request();
    *watch->mutable_waypoints() = path.waypoints();
    watch->set_version(path.version());
    watch->set_shorter_margin(shorter_margin);
    ASSERT_TRUE(stream.Send(request));
    std::optional<WatchStream::Event> e = stream.Next();
    ASSERT_TRUE(e.has_value());
    ASSERT_EQ(e->response.event(), v1::PATH_WATCH_EVENT_REGISTERED) << e->response.error_message();
    EXPECT_EQ(e->response.watch_id(), id);
    EXPECT_NEAR(e->response.watched_length(), path.length(), 1e-3);
  }

  double Metric(const std::string& name) {
    return testing::MetricValue(testing::HttpGet(server_.metrics_port(), "/metrics"), name);
  }

  TempDir dir_;
  ServerProcess server_;
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<v1::QueryService::Stub> stub_;
};

// A wall across the path, leaving a gap at Z >= 4: BLOCKED at the wall's version, naming the
// second waypoint, stopped before the wall, with a longer re-plan through the gap. Ten rounds
// (the wall removed and the path watched again between them) measure the delay from the edit's
// acknowledgement to the event.
TEST_F(WatchPathsTest, WallAcrossThePathIsHeardWithinTwoTicks) {
  WatchStream stream(*stub_);
  std::vector<double> delays_ms;
  for (int round = 0; round < 10; ++round) {
    const v1::FindPathResponse path = Path();
    ASSERT_EQ(path.status(), v1::PATH_STATUS_OK);
    ASSERT_EQ(path.waypoints_size(), 2);  // straight along the floor
    Watch(stream, 100 + round, path);
    const uint64_t version = Apply({Wall(-32, -24, -30, 4, true)});
    const Clock::time_point acked = Clock::now();
    std::optional<WatchStream::Event> e = stream.Next();
    ASSERT_TRUE(e.has_value()) << "no event for the wall at version " << version;
    const v1::WatchPathsResponse& r = e->response;
    ASSERT_EQ(r.event(), v1::PATH_WATCH_EVENT_BLOCKED);
    EXPECT_EQ(r.watch_id(), uint64_t(100 + round));
    EXPECT_EQ(r.version(), version);
    EXPECT_EQ(r.blocked_waypoint(), 1u);
    EXPECT_LT(r.stopped_at().x(), -32.f);  // walking +X, it stops before the wall
    EXPECT_GT(r.stopped_at().x(), -60.f);
    EXPECT_EQ(r.path().status(), v1::PATH_STATUS_OK);
    EXPECT_EQ(r.path().version(), version);
    EXPECT_GT(r.path().length(), path.length() + 1.f);  // around the wall through the gap
    delays_ms.push_back(
        std::max(0.0, std::chrono::duration<double, std::milli>(e->at - acked).count()));
    Apply({Wall(-32, -24, -30, 4, false)});
  }
  std::sort(delays_ms.begin(), delays_ms.end());
  const double median = 0.5 * (delays_ms[4] + delays_ms[5]), max = delays_ms.back();
  std::printf("WatchPaths ack -> BLOCKED delay over %zu rounds: median %.2f ms, max %.2f ms\n",
              delays_ms.size(), median, max);
  EXPECT_LE(median, 1000.0 / 30);  // 2 ticks at 60 Hz
  EXPECT_LE(max, 1000.0 / 30);
  EXPECT_EQ(Metric("voxcol_path_watches"), 0);  // every blocked watch ended
}

// A pillar in tile column 5 (far from tiles 0..2 the path crosses, and from their reach): the
// watcher looks (a sweep) but checks no watch and sends nothing. A wall across the path after it
// proves the stream is live: its BLOCKED is the next event.
TEST_F(WatchPathsTest, EditInAnotherTileSendsNothing) {
  WatchStream stream(*stub_);
  const v1::FindPathResponse path = Path();
  ASSERT_EQ(path.status(), v1::PATH_STATUS_OK);
  Watch(stream, 1, path);
  const double sweeps = Metric("voxcol_path_watch_sweeps_total");
  const double checks = Metric("voxcol_path_watch_checks_total");
  Apply({Box(50, 0, -14, 54, 3, -10, 2)});
  for (int i = 0; i < 200 && Metric("voxcol_path_watch_sweeps_total") <= sweeps; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GT(Metric("voxcol_path_watch_sweeps_total"), sweeps) << "the watcher never looked";
  EXPECT_EQ(Metric("voxcol_path_watch_checks_total"), checks) << "a watch was checked";
  EXPECT_FALSE(stream.Next(std::chrono::milliseconds(200)).has_value());
  // A wall in tile 0, near the start: the path's first tile.
  const uint64_t wall = Apply({Wall(-56, -24, -54, 4, true)});
  std::optional<WatchStream::Event> e = stream.Next();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->response.event(), v1::PATH_WATCH_EVENT_BLOCKED);
  EXPECT_EQ(e->response.version(), wall);
  EXPECT_EQ(Metric("voxcol_path_watch_checks_total"), checks + 1);
}

// After UNWATCHED, a wall across the path sends nothing; a second watch on the same stream (a
// path that the wall does not cross) proves the stream still hears edits.
TEST_F(WatchPathsTest, UnwatchedPathHearsNothing) {
  WatchStream stream(*stub_);
  const v1::FindPathResponse path = Path();
  Watch(stream, 5, path);
  v1::WatchPathsRequest unwatch;
  unwatch.set_unwatch(5);
  ASSERT_TRUE(stream.Send(unwatch));
  std::optional<WatchStream::Event> e = stream.Next();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->response.event(), v1::PATH_WATCH_EVENT_UNWATCHED);
  EXPECT_EQ(Metric("voxcol_path_watches"), 0);
  Apply({Wall(-32, -24, -30, 4, true)});
  EXPECT_FALSE(stream.Next(std::chrono::milliseconds(300)).has_value());
  ASSERT_TRUE(stream.Send(unwatch));  // unknown now
  e = stream.Next();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->response.event(), v1::PATH_WATCH_EVENT_REFUSED);
  EXPECT_EQ(e->response.error_code(), int(grpc::StatusCode::NOT_FOUND));
}

// The path goes around a wall through its gap; a hole dug through the wall on the straight
// line is heard as SHORTER with the new path, and digging it wider (a way no shorter by the
// margin) sends nothing more.
TEST_F(WatchPathsTest, HoleThroughTheWallOffersAShorterPath) {
  Apply({Wall(-32, -24, -30, 4, true)});
  const v1::FindPathResponse around = Path();
  ASSERT_EQ(around.status(), v1::PATH_STATUS_OK);
  ASSERT_GT(around.length(), 60.f);
  WatchStream stream(*stub_);
  Watch(stream, 9, around, /*shorter_margin=*/2);
  const uint64_t dug = Apply({Wall(-32, -18, -30, -6, false)});
  std::optional<WatchStream::Event> e = stream.Next();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->response.event(), v1::PATH_WATCH_EVENT_SHORTER);
  EXPECT_EQ(e->response.version(), dug);
  EXPECT_EQ(e->response.path().status(), v1::PATH_STATUS_OK);
  EXPECT_LT(e->response.path().length(), around.length() - 2);
  EXPECT_NEAR(e->response.path().length(), 54, 1);  // straight from X = -60 to -6
  Apply({Wall(-32, -20, -30, -18, false)});
  EXPECT_FALSE(stream.Next(std::chrono::milliseconds(300)).has_value());
}

// Bad watches are refused naming the field; the stream goes on.
TEST_F(WatchPathsTest, BadWatchesAreRefusedNamingTheField) {
  WatchStream stream(*stub_);
  auto refused = [&](const v1::WatchPathsRequest& request) {
    EXPECT_TRUE(stream.Send(request));
    std::optional<WatchStream::Event> e = stream.Next();
    EXPECT_TRUE(e.has_value());
    if (!e.has_value()) return std::string();
    EXPECT_EQ(e->response.event(), v1::PATH_WATCH_EVENT_REFUSED);
    return std::to_string(e->response.error_code()) + " " + e->response.error_message();
  };
  v1::WatchPathsRequest request;
  request.mutable_watch()->set_watch_id(1);
  EXPECT_NE(refused(request).find("3 watch.path.start"), std::string::npos);
  *request.mutable_watch()->mutable_path() = Request();
  request.mutable_watch()->set_shorter_margin(-1);
  EXPECT_NE(refused(request).find("3 watch.shorter_margin"), std::string::npos);
  request.mutable_watch()->set_shorter_margin(0);
  request.mutable_watch()->set_version(1000000);
  EXPECT_NE(refused(request).find("3 watch.version"), std::string::npos);
  request.mutable_watch()->set_version(0);
  for (int i = 0; i < 1025; ++i) {
    *request.mutable_watch()->add_waypoints()->mutable_position() = ProtoVec(-60, 0, kPathZ);
  }
  EXPECT_NE(refused(request).find("3 watch.waypoints"), std::string::npos);
  request.mutable_watch()->clear_waypoints();
  // Without waypoints the server plans the path and sends it with REGISTERED.
  ASSERT_TRUE(stream.Send(request));
  std::optional<WatchStream::Event> e = stream.Next();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->response.event(), v1::PATH_WATCH_EVENT_REGISTERED);
  EXPECT_EQ(e->response.path().status(), v1::PATH_STATUS_OK);
  EXPECT_NEAR(e->response.watched_length(), 54, 1);
  EXPECT_NE(refused(request).find("3 watch.watch_id 1 is already watched"), std::string::npos);
  for (int id = 2; id <= 256; ++id) {
    request.mutable_watch()->set_watch_id(id);
    ASSERT_TRUE(stream.Send(request));
    ASSERT_EQ(stream.Next()->response.event(), v1::PATH_WATCH_EVENT_REGISTERED);
  }
  request.mutable_watch()->set_watch_id(257);
  EXPECT_NE(refused(request).find("8 watch.watch_id: at most 256"), std::string::npos);
  EXPECT_EQ(Metric("voxcol_path_watches"), 256);
}

// The CLI's `path --watch`: prints the planned path, then BLOCKED with the wall's version and the
// re-plan, and exits 0 by itself (a blocked watch ends).
TEST_F(WatchPathsTest, CliPathWatchPrintsBlockedAndExits) {
  const std::string command = std::string(VOXCOL_CLI_PATH) + " --server=" + server_.address() +
                              " path --start=-60,0,-12 --goal=-6,0,-12 --watch 2>&1";
  FILE* out = popen(command.c_str(), "r");
  ASSERT_NE(out, nullptr);
  std::vector<std::string> lines;
  char line[512];
  // WATCHING, the path's summary and its 2 waypoints.
  while (lines.size() < 4 && std::fgets(line, sizeof line, out) != nullptr) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("WATCHING world version", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("OK (world version", 0), 0u) << lines[1];
  const uint64_t wall = Apply({Wall(-32, -24, -30, 4, true)});
  while (std::fgets(line, sizeof line, out) != nullptr) lines.push_back(line);
  EXPECT_EQ(pclose(out), 0);
  ASSERT_GE(lines.size(), 6u);
  EXPECT_EQ(lines[4].rfind("BLOCKED world version " + std::to_string(wall) +
                               ": waypoint 1 unreachable, stopped at (",
                           0),
            0u)
      << lines[4];
  EXPECT_EQ(lines[5].rfind("OK (world version " + std::to_string(wall) + ")", 0), 0u) << lines[5];
}

}  // namespace
}  // namespace voxcol
