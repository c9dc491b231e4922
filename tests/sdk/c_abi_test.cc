// The C ABI (clients/c/voxcol_c.h) against the real server: its answers are the C++ SDK's (the
// reference, through the CLI), a batch on the Query stream answers each ray as a single raycast
// does, an edit is read back through min_version, and bad use gets a code and a message naming the
// argument.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "clients/c/voxcol_c.h"
#include "tests/integration/server_process.h"

namespace voxcol {
namespace {

using testing::ServerProcess;
using testing::TempDir;

voxcol_ray DownRay(float x, float z) {
  return voxcol_ray{{x, 40.0f, z}, {0.0f, -1.0f, 0.0f}, 90.0f};
}

class CAbiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + dir_.path() + "/data", "--world_size=128,96,128"},
                              dir_.path()))
        << server_.Log();
    voxcol_options_init(&options_);
    address_ = server_.address();
    options_.target = address_.c_str();
    ASSERT_EQ(voxcol_connect(&options_, &client_), VOXCOL_OK) << voxcol_last_error();
  }
  void TearDown() override { voxcol_close(client_); }

  TempDir dir_;
  ServerProcess server_;
  std::string address_;
  voxcol_options options_;
  voxcol_client* client_ = nullptr;
};

// The reference answer: the voxcol CLI (the C++ SDK, in a process of its own: the C ABI carries
// its own copy of the generated proto code, which cannot be registered twice in one process).
std::string CliRaycast(const std::string& address, const voxcol_ray& ray) {
  const std::string command = std::string(VOXCOL_CLI_PATH) + " --server " + address +
                              " --json raycast --origin " + std::to_string(ray.origin.x) + "," +
                              std::to_string(ray.origin.y) + "," + std::to_string(ray.origin.z) +
                              " --max_distance " + std::to_string(ray.max_distance);
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    pclose(pipe);
  }
  return out;
}

// The number after "key": in the JSON text `json`, from `from` on (NaN if absent).
float JsonNumber(const std::string& json, const std::string& key, size_t from = 0) {
  const size_t at = json.find("\"" + key + "\":", from);
  if (at == std::string::npos) return std::nanf("");
  return std::stof(json.substr(at + key.size() + 3));
}

TEST_F(CAbiTest, RaycastAnswersAsTheCppSdk) {
  EXPECT_EQ(voxcol_abi_version(), VOXCOL_C_ABI_VERSION);
  int hits = 0;
  for (int i = 0; i < 8; ++i) {
    // Origins on a quarter grid, so that the CLI's decimal arguments are the same floats.
    const voxcol_ray ray = DownRay(-55.5f + 14.25f * float(i), 30.25f - 8.5f * float(i));
    voxcol_ray_hit hit;
    uint64_t version = 99;
    ASSERT_EQ(voxcol_raycast(client_, &ray, &hit, &version), VOXCOL_OK) << voxcol_last_error();
    EXPECT_EQ(version, 0u);
    const std::string expected = CliRaycast(address_, ray);
    ASSERT_NE(expected.find("\"hit\""), std::string::npos) << expected;
    ASSERT_EQ(hit.hit, expected.find("\"hit\":true") != std::string::npos ? 1 : 0) << expected;
    if (!hit.hit) continue;
    ++hits;
    EXPECT_EQ(hit.distance, JsonNumber(expected, "distance")) << expected;
    const size_t position = expected.find("\"position\"");
    EXPECT_EQ(hit.position.y, JsonNumber(expected, "y", position)) << expected;
    EXPECT_EQ(hit.normal.y, JsonNumber(expected, "y", expected.find("\"normal\""))) << expected;
    EXPECT_EQ(float(hit.material), JsonNumber(expected, "material")) << expected;
    const size_t voxel = expected.find("\"voxel\"");
    EXPECT_EQ(float(hit.voxel.x), JsonNumber(expected, "x", voxel)) << expected;
    EXPECT_EQ(float(hit.voxel.y), JsonNumber(expected, "y", voxel)) << expected;
    EXPECT_EQ(float(hit.voxel.z), JsonNumber(expected, "z", voxel)) << expected;
  }
  EXPECT_GT(hits, 4) << "downward rays should mostly hit the cave world";
}

TEST_F(CAbiTest, BatchAnswersEachRayAsASingleRaycast) {
  std::vector<voxcol_ray> rays;
  for (int i = 0; i < 300; ++i) {
    rays.push_back(DownRay(-60.5f + float((i * 37) % 120), -60.5f + float((i * 53) % 120)));
  }
  rays[7].origin.x = std::numeric_limits<float>::quiet_NaN();  // fails alone
  std::vector<voxcol_ray_hit> hits(rays.size());
  uint64_t version = 0;
  ASSERT_EQ(voxcol_raycasts(client_, rays.data(), rays.size(), 0, hits.data(), &version), VOXCOL_OK)
      << voxcol_last_error();
  EXPECT_EQ(hits[7].code, VOXCOL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(voxcol_last_error()).find("raycasts.origins[7]"), std::string::npos)
      << voxcol_last_error();
  for (size_t i = 0; i < rays.size(); i += 13) {
    if (i == 7) continue;
    voxcol_ray_hit single;
    uint64_t single_version = 0;
    ASSERT_EQ(voxcol_raycast(client_, &rays[i], &single, &single_version), VOXCOL_OK);
    EXPECT_EQ(single_version, version);
    EXPECT_EQ(hits[i].code, VOXCOL_OK) << i;
    ASSERT_EQ(hits[i].hit, single.hit) << i;
    EXPECT_EQ(hits[i].distance, single.distance) << i;
    EXPECT_EQ(hits[i].voxel.y, single.voxel.y) << i;
  }
}

TEST_F(CAbiTest, AnEditIsReadBackThroughMinVersion) {
  // Carve a ball around a ground point, then ask for at least the edit's version: the ray that
  // hit the ground now passes the carved ball and hits deeper.
  const voxcol_ray ray = DownRay(10.5f, -20.5f);
  voxcol_ray_hit before;
  ASSERT_EQ(voxcol_raycast(client_, &ray, &before, nullptr), VOXCOL_OK) << voxcol_last_error();
  ASSERT_EQ(before.hit, 1);
  ASSERT_EQ(before.started_inside, 0);
  uint64_t edit_version = 0;
  ASSERT_EQ(voxcol_fill_ball(client_, before.position, 3.0f, 0, &edit_version), VOXCOL_OK)
      << voxcol_last_error();
  uint64_t world_version = 0;
  voxcol_vec3 lo, hi;
  ASSERT_EQ(voxcol_world_info(client_, &world_version, &lo, &hi), VOXCOL_OK);
  EXPECT_EQ(world_version, edit_version);
  EXPECT_EQ(lo.x, -64.0f);
  EXPECT_EQ(hi.y, 48.0f);
  voxcol_ray_hit after;
  uint64_t read_version = 0;
  ASSERT_EQ(voxcol_raycasts(client_, &ray, 1, edit_version, &after, &read_version), VOXCOL_OK)
      << voxcol_last_error();
  EXPECT_GE(read_version, edit_version);
  EXPECT_TRUE(after.hit == 0 || after.distance > before.distance + 2.0f)
      << "before " << before.distance << ", after " << after.distance;
}

TEST_F(CAbiTest, BadUseGetsACodeAndAMessage) {
  voxcol_ray_hit hit;
  const voxcol_ray ray = DownRay(0.5f, 0.5f);
  EXPECT_EQ(voxcol_raycast(nullptr, &ray, &hit, nullptr), VOXCOL_INVALID_ARGUMENT);
  EXPECT_STREQ(voxcol_last_error(), "client: must not be NULL");
  EXPECT_EQ(voxcol_raycast(client_, nullptr, &hit, nullptr), VOXCOL_INVALID_ARGUMENT);
  EXPECT_STREQ(voxcol_last_error(), "ray: must not be NULL");
  EXPECT_EQ(voxcol_raycasts(client_, &ray, 70000, 0, &hit, nullptr), VOXCOL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(voxcol_last_error()).find("count"), std::string::npos);
  // The server's own validation comes through with its field name.
  const voxcol_ray zero = {{0.5f, 0.5f, 0.5f}, {0, 0, 0}, 10};
  EXPECT_EQ(voxcol_raycast(client_, &zero, &hit, nullptr), VOXCOL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(voxcol_last_error()).find("direction"), std::string::npos)
      << voxcol_last_error();
  EXPECT_EQ(voxcol_fill_ball(client_, {1e9f, 0, 0}, 2, 1, nullptr), VOXCOL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(voxcol_last_error()).find("center"), std::string::npos)
      << voxcol_last_error();
  // A success clears the message.
  EXPECT_EQ(voxcol_raycast(client_, &ray, &hit, nullptr), VOXCOL_OK);
  EXPECT_STREQ(voxcol_last_error(), "");

  voxcol_client* other = nullptr;
  voxcol_options options;
  voxcol_options_init(&options);
  EXPECT_EQ(voxcol_connect(&options, &other), VOXCOL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(voxcol_last_error()).find("options.target"), std::string::npos);
  options.struct_size = 8;  // a caller built against an older, smaller struct
  options.target = address_.c_str();
  EXPECT_EQ(voxcol_connect(&options, &other), VOXCOL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(voxcol_last_error()).find("struct_size"), std::string::npos);
  // Nobody listens on port 1; the connect fails within its timeout and names the target.
  voxcol_options_init(&options);
  options.target = "127.0.0.1:1";
  options.timeout_ms = 500;
  EXPECT_EQ(voxcol_connect(&options, &other), VOXCOL_UNAVAILABLE);
  EXPECT_NE(std::string(voxcol_last_error()).find("127.0.0.1:1"), std::string::npos)
      << voxcol_last_error();
  EXPECT_EQ(other, nullptr);
  // An unknown world fails at connect, not at the first query.
  voxcol_options_init(&options);
  options.target = address_.c_str();
  options.world = "no-such-world";
  EXPECT_EQ(voxcol_connect(&options, &other), VOXCOL_NOT_FOUND) << voxcol_last_error();
  voxcol_close(nullptr);  // allowed
}

}  // namespace
}  // namespace voxcol
