// `voxcol render` against the real server on a small default cave world: the PNGs decode, have the
// requested size, show terrain on a plausible share of pixels, are not uniform, and a carved ball
// changes the next picture where it was carved and nowhere far from it.
#include "client/render.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/cli_fixture.h"
#include "tests/integration/png_reader.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::testing {
namespace {

bool IsSky(const uint8_t* p) {
  return p[0] == client::kRenderSkyRgb[0] && p[1] == client::kRenderSkyRgb[1] &&
         p[2] == client::kRenderSkyRgb[2];
}

double TerrainShare(const RgbImage& image) {
  size_t terrain = 0;
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) terrain += !IsSky(image.At(x, y));
  }
  return double(terrain) / (double(image.width) * image.height);
}

// Standard deviation of the pixels' luminance.
double LuminanceStddev(const RgbImage& image) {
  double sum = 0, sum2 = 0, n = double(image.width) * image.height;
  for (size_t i = 0; i < image.rgb.size(); i += 3) {
    double l = 0.299 * image.rgb[i] + 0.587 * image.rgb[i + 1] + 0.114 * image.rgb[i + 2];
    sum += l;
    sum2 += l * l;
  }
  return std::sqrt(std::max(0.0, sum2 / n - (sum / n) * (sum / n)));
}

class RenderTest : public CliFixture {
 protected:
  void SetUp() override {
    // World: x, z in [-64, 64), y in [-48, 48), sea level y = -4.
    ASSERT_TRUE(server_.Start(
        VOXCOL_SERVER_PATH,
        {"--data_dir=" + dir_.path() + "/data", "--seed=7", "--world_size=128,96,128"},
        dir_.path()));
  }

  // Renders with `args` into `name` under the test directory and decodes it.
  RgbImage Render(const std::string& name, std::vector<std::string> args) {
    std::string path = dir_.path() + "/" + name;
    args.insert(args.begin(), {"render", "--out=" + path});
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // stderr is a file here, not a terminal: no progress bar.
    EXPECT_EQ(r.err.find("rays/s"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("rays/s"), std::string::npos) << r.out;
    RgbImage image;
    std::string error;
    EXPECT_TRUE(ReadPng(path, &image, &error)) << error;
    return image;
  }
};

TEST_F(RenderTest, TopDownCoversTheGround) {
  RgbImage image = Render("top.png", {"--mode=top", "--size=200x160"});
  ASSERT_EQ(image.width, 200);
  ASSERT_EQ(image.height, 160);
  // Every ray of the top view starts inside the world above the ground (the cave world is solid
  // at its bottom), so only the margins of the 200x160 frame around the square world are sky:
  // the world fills 160 of 200 columns.
  double share = TerrainShare(image);
  EXPECT_GT(share, 0.95 * 160.0 / 200.0);
  EXPECT_LT(share, 1.02 * 160.0 / 200.0);
  for (int y = 0; y < image.height; ++y) {
    EXPECT_TRUE(IsSky(image.At(5, y)));  // left margin: outside the world
    EXPECT_FALSE(IsSky(image.At(100, y)));
  }
  EXPECT_GT(LuminanceStddev(image), 8.0);
}

TEST_F(RenderTest, PerspectiveShowsTerrainAndSky) {
  // From above the world's edge, looking at its centre: ground below the horizon, sky above.
  RgbImage image = Render("persp.png", {"--mode=perspective", "--size=320x200",
                                        "--camera=0,30,-110", "--look_at=0,-5,0", "--fov=60"});
  ASSERT_EQ(image.width, 320);
  ASSERT_EQ(image.height, 200);
  double share = TerrainShare(image);
  EXPECT_GT(share, 0.2);
  EXPECT_LT(share, 0.9);
  // Sky on top, terrain at the bottom centre (looking down at the world's middle).
  EXPECT_TRUE(IsSky(image.At(160, 0)));
  EXPECT_FALSE(IsSky(image.At(160, 199)));
  EXPECT_GT(LuminanceStddev(image), 8.0);
}

TEST_F(RenderTest, CarvedBallChangesOnlyTheEditedArea) {
  // A flat dry spot, found with raycasts straight down a grid of columns: a ball carved there
  // lowers the ground by at least sqrt(R^2 - r^2) within r of its centre.
  float cx = 0, cz = 0, ground = 0;
  bool found = false;
  for (int i = 0; i < 49 && !found; ++i) {
    cx = -30 + 10 * (i % 7) + 0.5f, cz = -30 + 10 * (i / 7) + 0.5f;
    auto ray = CliJson<v1::RaycastResponse>(
        {"raycast", "--origin=" + std::to_string(cx) + ",47," + std::to_string(cz),
         "--direction=0,-1,0", "--max_distance=95", "--water=stop"});
    found = ray.hit() && ray.first().material() != 1 && ray.first().normal().y() > 0.9f;
    ground = ray.first().position().y();
  }
  ASSERT_TRUE(found) << "no flat dry ground in the grid";
  // One pixel per world unit: column = x + 64, row = z + 64.
  const std::vector<std::string> top = {"--mode=top", "--size=128x128"};
  RgbImage before = Render("before.png", top);
  constexpr float kRadius = 8;
  CommandResult carve = Cli(
      {"fill-ball",
       "--center=" + std::to_string(cx) + "," + std::to_string(ground) + "," + std::to_string(cz),
       "--radius=8", "--mode=subtract"});
  ASSERT_EQ(carve.exit_code, 0) << carve.err;
  RgbImage after = Render("after.png", top);
  ASSERT_EQ(after.width, 128);
  ASSERT_EQ(after.height, 128);
  int inside = 0, inside_changed = 0, outside = 0, outside_changed = 0;
  double farthest_change = 0;
  for (int y = 0; y < 128; ++y) {
    for (int x = 0; x < 128; ++x) {
      double r = std::hypot(x + 0.5 - (cx + 64), y + 0.5 - (cz + 64));
      bool changed = !std::equal(before.At(x, y), before.At(x, y) + 3, after.At(x, y));
      if (changed) farthest_change = std::max(farthest_change, r);
      if (r < 5) {  // the ground drops by >= 6 world units here
        ++inside;
        inside_changed += changed;
      } else if (r > kRadius + 3) {
        // Past the ball's antialiased edge, the reach of the gradient normals and pixel size.
        ++outside;
        outside_changed += changed;
      }
    }
  }
  EXPECT_GT(inside_changed, inside * 9 / 10) << inside_changed << " of " << inside;
  EXPECT_EQ(outside_changed, 0) << outside_changed << " of " << outside << ", farthest change "
                                << farthest_change << " from the centre";
}

TEST_F(RenderTest, CutAwayMapShowsCavesUnderTheGround) {
  // Started at y = -20, inside the ground, the rays show the caves the worms carved below (their
  // floors) and the section through rock elsewhere, in one flat colour.
  RgbImage map = Render("map.png", {"--mode=top", "--size=128x128"});
  RgbImage cut = Render("cut.png", {"--mode=top", "--size=128x128", "--top_y=-20"});
  ASSERT_EQ(cut.width, 128);
  ASSERT_EQ(cut.height, 128);
  EXPECT_GT(TerrainShare(cut), 0.99);
  // The section colour is the most frequent one; count it and the pixels the cut changed.
  std::map<std::array<uint8_t, 3>, int> colours;
  int changed = 0;
  for (int y = 0; y < 128; ++y) {
    for (int x = 0; x < 128; ++x) {
      const uint8_t* p = cut.At(x, y);
      ++colours[{p[0], p[1], p[2]}];
      changed += !std::equal(p, p + 3, map.At(x, y));
    }
  }
  int section = 0;
  for (const auto& [colour, count] : colours) section = std::max(section, count);
  EXPECT_GT(changed, 128 * 128 * 9 / 10);
  EXPECT_GT(section, 128 * 128 / 5) << "rock section";
  EXPECT_LT(section, 128 * 128 * 99 / 100) << "no caves";
}

TEST_F(RenderTest, OverlayRayIsDrawn) {
  // A ray just under the world's top along +X from the centre: in the top view it is row 64 from
  // column 64 to the world's edge, in front of all terrain.
  RgbImage image =
      Render("ray.png", {"--mode=top", "--size=128x128", "--overlay_ray=0.5,47,0.5:1,0,0:60"});
  int drawn = 0;
  for (int x = 70; x < 120; ++x) {
    const uint8_t* p = image.At(x, 64);
    drawn += p[0] == 255 && p[1] == 220 && p[2] == 0;
  }
  EXPECT_GT(drawn, 45);
  EXPECT_FALSE(image.At(30, 64)[0] == 255 && image.At(30, 64)[1] == 220);  // not behind the origin
}

TEST_F(RenderTest, BadOptionsAreUsageErrors) {
  EXPECT_EQ(Cli({"render", "--out=" + dir_.path() + "/x.png", "--size=0x10"}).exit_code, 2);
  EXPECT_EQ(Cli({"render", "--out=" + dir_.path() + "/x.png", "--mode=sideways"}).exit_code, 2);
  EXPECT_EQ(Cli({"render", "--mode=top"}).exit_code, 2);  // no --out
  CommandResult r = Cli({"render", "--out=" + dir_.path() + "/x.png", "--mode=perspective",
                         "--camera=0,0,0", "--look_at=0,0,0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("look_at"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace voxcol::testing
