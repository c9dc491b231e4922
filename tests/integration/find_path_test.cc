// FindPath against the real server (issue 41): a flat maze built by edits through the EditService
// (the serpentine of tests/core/nav/nav_scenes.h), paths that go around its walls, edits that open
// a shorter way or close the maze at their version while read_at still answers the old path, every
// bad field INVALID_ARGUMENT naming it, the Query batch kind answering as the unary call, and the
// CLI's `path`.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/query_batcher.h"
#include "client/voxcol_client.h"
#include "tests/integration/http_get.h"
#include "tests/integration/proto_values.h"
#include "tests/integration/query_batch_client.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::ProtoVec;
using testing::RunCommand;
using testing::ServerProcess;
using testing::TempDir;

constexpr int kCell = 4;      // voxels per map character
constexpr int kOrigin = -28;  // voxel X and Z of the map's first character
constexpr int kWallHeight = 3;

// The serpentine: from S (top left) the only way runs right, left, right, ... to G (bottom left).
const std::vector<std::string>& Map() {
  static const std::vector<std::string> map = {
      "##############", "#S...........#", "###########..#", "#............#", "#..###########",
      "#............#", "###########..#", "#............#", "#..###########", "#............#",
      "###########..#", "#............#", "#G...........#", "##############",
  };
  return map;
}

// The centre of map character (row, col) on the ground (y = 0).
v1::Vec3 Cell(int row, int col) {
  return ProtoVec(float(kOrigin + col * kCell) + 0.5f * kCell, 0,
                  float(kOrigin + row * kCell) + 0.5f * kCell);
}

v1::EditPrimitive Region(int x0, int y0, int z0, int x1, int y1, int z1, uint32_t material,
                         v1::EditMode mode) {
  v1::EditPrimitive p;
  v1::FillRegion* r = p.mutable_fill_region();
  v1::Int3* lo = r->mutable_region()->mutable_min();
  v1::Int3* hi = r->mutable_region()->mutable_max();
  lo->set_x(x0), lo->set_y(y0), lo->set_z(z0);
  hi->set_x(x1), hi->set_y(y1), hi->set_z(z1);
  r->set_material(material);
  r->set_mode(mode);
  return p;
}

v1::EditPrimitive Wall(int row, int col, bool wall) {
  const int x = kOrigin + col * kCell, z = kOrigin + row * kCell;
  return Region(x, 0, z, x + kCell, kWallHeight, z + kCell, wall ? 2 : 0,
                wall ? v1::EDIT_MODE_SET : v1::EDIT_MODE_SUBTRACT);
}

class FindPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(
        VOXCOL_SERVER_PATH,
        {"--data_dir=" + dir_.path() + "/data", "--world_size=64,32,64", "--store_sync=false",
         "--nav_profiles=maze:radius=0.5,height=2,max_climb=0.5", "--nav_default_profile=maze",
         "--max_path_distance=1000", "--metrics_listen=127.0.0.1:0"},
        dir_.path()))
        << server_.Log();
    client_ = std::make_unique<client::Client>(server_.address());
    walls_ = Map();
    // The world emptied, a rock floor under y = 0, then the maze's walls one row per batch.
    v1::ApplyEditsRequest ground;
    *ground.add_primitives() = Region(-32, -16, -32, 32, 16, 32, 0, v1::EDIT_MODE_SET);
    *ground.add_primitives() = Region(-32, -4, -32, 32, 0, 32, 2, v1::EDIT_MODE_SET);
    Apply(ground);
    for (size_t row = 0; row < walls_.size(); ++row) {
      v1::ApplyEditsRequest edits;
      for (size_t col = 0; col < walls_[row].size(); ++col) {
        if (walls_[row][col] == '#') *edits.add_primitives() = Wall(int(row), int(col), true);
      }
      Apply(edits);
    }
  }

  uint64_t Apply(const v1::ApplyEditsRequest& edits) {
    v1::EditAck ack;
    grpc::Status status = client_->ApplyEdits(edits, &ack);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return ack.version();
  }

  // Makes the listed map characters walls (or floor) in one edit; returns its version.
  uint64_t SetWalls(const std::vector<std::pair<int, int>>& cells, bool wall) {
    v1::ApplyEditsRequest edits;
    for (auto [row, col] : cells) {
      *edits.add_primitives() = Wall(row, col, wall);
      walls_[size_t(row)][size_t(col)] = wall ? '#' : '.';
    }
    return Apply(edits);
  }

  static v1::FindPathRequest MazeRequest(int64_t at_version = -1) {
    v1::FindPathRequest request;
    *request.mutable_start() = Cell(1, 1);
    *request.mutable_goal() = Cell(12, 1);
    if (at_version >= 0) request.mutable_read_at()->set_at_version(uint64_t(at_version));
    return request;
  }

  v1::FindPathResponse Path(const v1::FindPathRequest& request) {
    v1::FindPathResponse response;
    grpc::Status status = client_->FindPath(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  bool IsWall(const std::vector<std::string>& walls, float x, float z) const {
    const int col = int(std::floor((x - kOrigin) / kCell)),
              row = int(std::floor((z - kOrigin) / kCell));
    if (row < 0 || col < 0 || row >= int(walls.size()) || col >= int(walls[0].size())) return true;
    return walls[size_t(row)][size_t(col)] == '#';
  }

  // Every leg of an OK path, sampled every 0.05 units, stays out of the wall cells of `walls`, and
  // the lengths add up.
  void ExpectAroundWalls(const v1::FindPathResponse& path,
                         const std::vector<std::string>& walls) const {
    ASSERT_EQ(path.status(), v1::PATH_STATUS_OK);
    ASSERT_GE(path.waypoints_size(), 2);
    float length = 0;
    for (int i = 1; i < path.waypoints_size(); ++i) {
      const v1::Vec3& a = path.waypoints(i - 1).position();
      const v1::Vec3& b = path.waypoints(i).position();
      EXPECT_EQ(path.waypoints(i).action(), v1::WAYPOINT_ACTION_WALK) << "waypoint " << i;
      const float dx = b.x() - a.x(), dz = b.z() - a.z();
      const float leg = std::sqrt(dx * dx + (b.y() - a.y()) * (b.y() - a.y()) + dz * dz);
      length += leg;
      const int steps = int(std::ceil(leg / 0.05f));
      for (int s = 0; s <= steps; ++s) {
        const float t = steps == 0 ? 0 : float(s) / float(steps);
        ASSERT_FALSE(IsWall(walls, a.x() + t * dx, a.z() + t * dz))
            << "leg " << i << " passes through a wall at t=" << t;
      }
    }
    EXPECT_NEAR(length, path.length(), 1e-2f * length);
  }

  TempDir dir_;
  ServerProcess server_;
  std::unique_ptr<client::Client> client_;
  std::vector<std::string> walls_;  // the map as edited now
};

// The serpentine's corridors are 11 cells (44 units) long, six of them: far longer than the 44
// units straight from S to G.
TEST_F(FindPathTest, MazePathGoesAroundEveryWall) {
  const v1::FindPathResponse path = Path(MazeRequest());
  ExpectAroundWalls(path, walls_);
  std::printf("maze path: %d waypoints, length %.2f, %u tiles built, version %llu\n",
              path.waypoints_size(), path.length(), path.tiles_built(),
              (unsigned long long)path.version());
  EXPECT_GT(path.length(), 5 * 40.0f);
  EXPECT_LT(path.length(), 6 * 48.0f);
  EXPECT_GT(path.version(), 0u);
  EXPECT_GT(path.tiles_built(), 0u);
  EXPECT_GT(path.corridor_polygons(), 0u);
  // The same path again builds nothing.
  const v1::FindPathResponse again = Path(MazeRequest());
  EXPECT_EQ(again.tiles_built(), 0u);
  EXPECT_FLOAT_EQ(again.length(), path.length());
}

// Digging through the first long wall opens a shorter way at the edit's version; walling the
// goal in closes the maze at the next; read_at answers each older version's own path.
TEST_F(FindPathTest, EditsChangeThePathAtTheirVersionAndReadAtKeepsTheOld) {
  const v1::FindPathResponse before = Path(MazeRequest());
  const std::vector<std::string> walls_before = walls_;
  ExpectAroundWalls(before, walls_before);

  const uint64_t opened = SetWalls({{2, 1}, {2, 2}}, false);
  const v1::FindPathResponse shorter = Path(MazeRequest());
  EXPECT_GE(shorter.version(), opened);
  ExpectAroundWalls(shorter, walls_);
  EXPECT_LT(shorter.length(), before.length() - 20) << "the dug shortcut is not used";
  const std::vector<std::string> walls_opened = walls_;

  const uint64_t closed = SetWalls({{11, 1}, {11, 2}, {12, 2}}, true);
  std::printf("before %.2f, after the shortcut %.2f\n", before.length(), shorter.length());
  const v1::FindPathResponse none = Path(MazeRequest());
  EXPECT_GE(none.version(), closed);
  EXPECT_EQ(none.status(), v1::PATH_STATUS_NO_PATH);
  EXPECT_EQ(none.waypoints_size(), 0);

  // The past versions, read after both edits.
  const v1::FindPathResponse old = Path(MazeRequest(int64_t(before.version())));
  EXPECT_EQ(old.version(), before.version());
  ExpectAroundWalls(old, walls_before);
  EXPECT_NEAR(old.length(), before.length(), 1e-3f);
  const v1::FindPathResponse mid = Path(MazeRequest(int64_t(opened)));
  EXPECT_EQ(mid.version(), opened);
  ExpectAroundWalls(mid, walls_opened);
  EXPECT_NEAR(mid.length(), shorter.length(), 1e-3f);
}

// An edit inside the reach of the path's tiles (a pit in the floor outside the maze's east wall)
// makes some stale; the background thread rebuilds them (the stale-tiles gauge returns to 0) and
// the next path at the edit's version builds nothing and is the same.
TEST_F(FindPathTest, BackgroundRebuildLeavesNothingForTheNextPath) {
  const v1::FindPathResponse before = Path(MazeRequest());
  ASSERT_EQ(before.status(), v1::PATH_STATUS_OK);
  auto metric = [&](const std::string& name) {
    return testing::MetricValue(testing::HttpGet(server_.metrics_port(), "/metrics"),
                                name + "{world=\"default\"}");
  };
  const double built = metric("voxcol_worlds_nav_tile_builds_total");
  v1::ApplyEditsRequest pit;
  *pit.add_primitives() = Region(29, -2, -2, 31, 0, 2, 0, v1::EDIT_MODE_SET);
  const uint64_t version = Apply(pit);
  double stale = -1;
  for (int i = 0; i < 200; ++i) {  // up to 2 s; the rebuild runs every 20 ms
    stale = metric("voxcol_worlds_nav_stale_tiles");
    if (stale == 0 && metric("voxcol_worlds_nav_tile_builds_total") > built) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(stale, 0);
  EXPECT_GT(metric("voxcol_worlds_nav_tile_builds_total"), built) << "nothing was rebuilt";
  const v1::FindPathResponse after = Path(MazeRequest());
  EXPECT_GE(after.version(), version);
  EXPECT_EQ(after.tiles_built(), 0u) << "the path paid for a rebuild";
  EXPECT_NEAR(after.length(), before.length(), 1e-3f);
  // The tiles' memory, far under the default --nav_max_tile_mb: held, nothing dropped.
  EXPECT_GT(metric("voxcol_worlds_nav_tile_bytes"), 0);
  EXPECT_EQ(metric("voxcol_worlds_nav_tiles_evicted_total"), 0);
}

TEST(FindPathFlagsTest, TileBoundOutOfRangeStopsTheServerNamingTheFlag) {
  TempDir dir;
  for (const std::string flag : {"--nav_max_tile_mb=-1", "--nav_max_tile_mb=2000000000"}) {
    testing::CommandResult r = testing::RunCommand(
        {VOXCOL_SERVER_PATH, "--data_dir=" + dir.path() + "/data", flag}, dir.path());
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find("--nav_max_tile_mb must be in [0, 2^30]"), std::string::npos) << r.err;
  }
}

TEST_F(FindPathTest, StatusesForOffMeshAndTooFar) {
  v1::FindPathRequest buried = MazeRequest();
  *buried.mutable_start() = Cell(0, 0);  // inside the corner wall
  buried.mutable_start()->set_y(1.0f);
  EXPECT_EQ(Path(buried).status(), v1::PATH_STATUS_START_OFF_MESH);
  v1::FindPathRequest in_wall = MazeRequest();
  *in_wall.mutable_goal() = Cell(2, 5);
  in_wall.mutable_goal()->set_y(1.0f);
  EXPECT_EQ(Path(in_wall).status(), v1::PATH_STATUS_GOAL_OFF_MESH);
  v1::FindPathRequest short_leash = MazeRequest();
  short_leash.set_max_distance(30);  // the straight line is 44
  EXPECT_EQ(Path(short_leash).status(), v1::PATH_STATUS_TOO_FAR);
}

TEST_F(FindPathTest, EveryBadFieldIsInvalidArgumentNamingIt) {
  const float nan = std::nanf("");
  const std::vector<std::pair<std::string, v1::FindPathRequest>> cases = [&] {
    std::vector<std::pair<std::string, v1::FindPathRequest>> out;
    auto add = [&](const std::string& field, auto change) {
      v1::FindPathRequest r = MazeRequest();
      change(&r);
      out.emplace_back(field, r);
    };
    add("start", [](v1::FindPathRequest* r) { r->clear_start(); });
    add("start", [&](v1::FindPathRequest* r) { r->mutable_start()->set_x(nan); });
    add("goal", [](v1::FindPathRequest* r) { r->mutable_goal()->set_y(1e9f); });
    add("goal", [](v1::FindPathRequest* r) { r->mutable_goal()->set_z(INFINITY); });
    add("profile", [](v1::FindPathRequest* r) { r->set_profile("no-such-agent"); });
    add("agent.radius", [](v1::FindPathRequest* r) { r->mutable_agent()->set_radius(-1); });
    add("agent.radius", [](v1::FindPathRequest* r) { r->mutable_agent()->set_radius(5); });
    add("agent.height", [&](v1::FindPathRequest* r) { r->mutable_agent()->set_height(nan); });
    add("agent.max_slope_degrees",
        [](v1::FindPathRequest* r) { r->mutable_agent()->set_max_slope_degrees(90); });
    add("agent.jump_height", [](v1::FindPathRequest* r) {
      r->mutable_agent()->set_can_jump(true);
      r->mutable_agent()->set_jump_height(0.1f);
    });
    add("material_costs[0].cost", [](v1::FindPathRequest* r) {
      v1::MaterialCost* c = r->add_material_costs();
      c->set_material(2);
      c->set_cost(-1);
    });
    add("material_costs[0].material", [](v1::FindPathRequest* r) {
      v1::MaterialCost* c = r->add_material_costs();
      c->set_material(0);
      c->set_cost(2);
    });
    add("material_costs[1].material", [](v1::FindPathRequest* r) {
      for (int i = 0; i < 2; ++i) {
        v1::MaterialCost* c = r->add_material_costs();
        c->set_material(3);
        c->set_cost(2);
      }
    });
    add("max_distance", [](v1::FindPathRequest* r) { r->set_max_distance(-1); });
    add("max_distance", [](v1::FindPathRequest* r) { r->set_max_distance(1001); });
    add("max_distance", [&](v1::FindPathRequest* r) { r->set_max_distance(nan); });
    return out;
  }();
  for (const auto& [field, request] : cases) {
    v1::FindPathResponse response;
    grpc::Status status = client_->FindPath(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << field;
    EXPECT_EQ(status.error_message().rfind(field, 0), 0u)
        << field << ": " << status.error_message();
  }
  // The server goes on serving.
  EXPECT_EQ(Path(MazeRequest()).status(), v1::PATH_STATUS_OK);
}

// A batch of a path, a bad path and a raycast: the path answers exactly as the unary call on the
// same version, the bad one fails alone.
TEST_F(FindPathTest, QueryBatchKindAnswersAsTheUnaryCall) {
  const v1::FindPathResponse unary = Path(MazeRequest());
  auto stub = v1::QueryService::NewStub(
      grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials()));
  v1::QueryBatchRequest batch;
  batch.set_batch_id(9);
  v1::QueryRequest* good = batch.add_queries();
  good->set_client_id(1);
  *good->mutable_find_path() = MazeRequest();
  v1::QueryRequest* bad = batch.add_queries();
  bad->set_client_id(2);
  *bad->mutable_find_path() = MazeRequest();
  bad->mutable_find_path()->set_profile("nope");
  const v1::QueryBatchResponse response = testing::RunOneBatch(*stub, batch);
  ASSERT_EQ(response.code(), 0) << response.message();
  ASSERT_EQ(response.results_size(), 2);
  EXPECT_EQ(response.version(), unary.version());
  const v1::QueryResult& r = response.results(0);
  ASSERT_EQ(r.code(), 0) << r.message();
  ASSERT_TRUE(r.has_find_path());
  v1::FindPathResponse batched = r.find_path();
  batched.set_tiles_built(unary.tiles_built());  // the unary call built the tiles
  EXPECT_EQ(batched.SerializeAsString(), unary.SerializeAsString());
  EXPECT_EQ(response.results(1).code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(response.results(1).message().rfind("profile", 0), 0u) << response.results(1).message();

  // The C++ client's QueryBatcher: the same answer.
  client::QueryBatcher batcher(*client_);
  std::future<client::QueryAnswer> answer = batcher.FindPath(MazeRequest());
  batcher.Flush();
  const client::QueryAnswer a = answer.get();
  ASSERT_TRUE(a.status.ok()) << a.status.error_message();
  EXPECT_EQ(a.version, unary.version());
  v1::FindPathResponse from_batcher = a.result.find_path();
  from_batcher.set_tiles_built(unary.tiles_built());
  EXPECT_EQ(from_batcher.SerializeAsString(), unary.SerializeAsString());
}

TEST_F(FindPathTest, CliPathPrintsStatusWaypointsAndVersion) {
  const v1::FindPathResponse unary = Path(MazeRequest());
  const v1::Vec3 s = Cell(1, 1), g = Cell(12, 1);
  auto vec = [](const v1::Vec3& v) {
    return std::to_string(v.x()) + "," + std::to_string(v.y()) + "," + std::to_string(v.z());
  };
  testing::CommandResult r = RunCommand({VOXCOL_CLI_PATH, "--server=" + server_.address(), "path",
                                         "--start=" + vec(s), "--goal=" + vec(g)},
                                        dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OK (world version " + std::to_string(unary.version()) +
                       "): " + std::to_string(unary.waypoints_size()) + " waypoints"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("walk"), std::string::npos) << r.out;
  // A bad profile: the server's message, exit code of a rejected request.
  r = RunCommand({VOXCOL_CLI_PATH, "--server=" + server_.address(), "path", "--start=" + vec(s),
                  "--goal=" + vec(g), "--profile=nope"},
                 dir_.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("unknown agent profile"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace voxcol
