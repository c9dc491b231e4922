// `voxcol render` against the real server on a small default cave world: the PNGs decode, have the
// requested size, show terrain on a plausible share of pixels, are not uniform, and a carved ball
// changes the next picture where it was carved and nowhere far from it.
#include "client/render.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
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
  RgbImage image = Render("top.png", {"--mode=top", "--size=200x160", "--plain"});
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

// Pixels of `image` in the box [x0, x1) x [y0, y1) that are exactly `rgb`.
int CountRgb(const RgbImage& image, int x0, int y0, int x1, int y1, const uint8_t rgb[3]) {
  int n = 0;
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) n += std::equal(rgb, rgb + 3, image.At(x, y));
  }
  return n;
}

// The longest run of exactly `rgb` along one row in the box.
int LongestRun(const RgbImage& image, int x0, int y0, int x1, int y1, const uint8_t rgb[3]) {
  int best = 0;
  for (int y = y0; y < y1; ++y) {
    for (int x = x0, run = 0; x < x1; ++x) {
      run = std::equal(rgb, rgb + 3, image.At(x, y)) ? run + 1 : 0;
      best = std::max(best, run);
    }
  }
  return best;
}

// Whether the box holds a 7x7 square of exactly `rgb` with other colours left and right of it
// (a legend swatch, not a patch of terrain or sky).
bool HasSwatch(const RgbImage& image, int x0, int y0, int x1, int y1, const uint8_t rgb[3]) {
  auto is = [&](int x, int y) { return std::equal(rgb, rgb + 3, image.At(x, y)); };
  for (int y = y0; y + 7 <= y1; ++y) {
    for (int x = std::max(x0, 1); x + 8 <= x1; ++x) {
      bool square = !is(x - 1, y + 3) && !is(x + 7, y + 3);
      for (int k = 0; k < 49 && square; ++k) square = is(x + k % 7, y + k / 7);
      if (square) return true;
    }
  }
  return false;
}

TEST_F(RenderTest, LegendScaleBarAndAxesAreDrawn) {
  const std::vector<std::string> view = {"--mode=top", "--size=320x240",
                                         "--overlay_ray=0.5,47,0.5:1,0,0:30"};
  std::vector<std::string> plain_args = view;
  plain_args.push_back("--plain");
  RgbImage plain = Render("plain.png", plain_args);
  ASSERT_EQ(plain.width, 320);
  ASSERT_EQ(plain.height, 240);
  const std::string path = dir_.path() + "/annotated.png";
  std::vector<std::string> args = {"--json", "render", "--out=" + path};
  args.insert(args.end(), view.begin(), view.end());
  CommandResult r = Cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RgbImage image;
  std::string error;
  ASSERT_TRUE(ReadPng(path, &image, &error)) << error;
  ASSERT_EQ(image.width, 320);
  ASSERT_EQ(image.height, 240);
  const uint8_t white[3] = {255, 255, 255};
  EXPECT_EQ(CountRgb(plain, 0, 0, 320, 240, white), 0);  // no surface is pure white
  // Legend, bottom left: a 7x7 swatch of each named material and of the sky, and white names.
  for (uint32_t material : {1u, 2u, 3u, 4u, 5u}) {
    uint8_t rgb[3];
    client::RenderMaterialRgb(material, rgb);
    EXPECT_TRUE(HasSwatch(image, 0, 140, 100, 240, rgb)) << "material " << material;
    EXPECT_FALSE(HasSwatch(plain, 0, 140, 100, 240, rgb)) << "material " << material;
  }
  EXPECT_TRUE(HasSwatch(image, 0, 140, 100, 240, client::kRenderSkyRgb));
  EXPECT_TRUE(HasSwatch(image, 0, 140, 100, 240, client::kRenderRayRgb));  // the overlay's entry
  EXPECT_TRUE(HasSwatch(image, 0, 140, 100, 240, client::kRenderHitRgb));
  EXPECT_GT(CountRgb(image, 0, 140, 100, 240, white), 150);  // the names
  // Scale bar, bottom right: a round length, drawn as a white bar of that many pixels. The
  // 128-unit world in 320x240 pixels: 128 / 240 world units per pixel.
  const std::smatch m = [&] {
    std::smatch found;
    std::regex_search(r.out, found,
                      std::regex(R"re("scale_bar_units":([0-9.]+),"scale_bar_pixels":([0-9]+))re"));
    return found;
  }();
  ASSERT_EQ(m.size(), 3u) << r.out;
  const double units = std::stod(m[1]);
  const int pixels = std::stoi(m[2]);
  const double mantissa = units / std::pow(10.0, std::floor(std::log10(units)));
  EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-6 || std::fabs(mantissa - 2) < 1e-6 ||
              std::fabs(mantissa - 5) < 1e-6)
      << units;
  EXPECT_NEAR(pixels * 128.0 / 240.0, units, 128.0 / 240.0) << pixels << " px";
  EXPECT_GT(pixels, 320 / 10);
  EXPECT_NEAR(LongestRun(image, 160, 200, 320, 240, white), pixels, 1);
  // Axes, top left: the +X arrow along a row, the +Z arrow down a column, and their labels.
  EXPECT_GE(LongestRun(image, 0, 0, 60, 40, white), 22);
  int column = 0;
  for (int x = 0; x < 20; ++x) {
    for (int y = 0, run = 0; y < 40; ++y) {
      run = std::equal(white, white + 3, image.At(x, y)) ? run + 1 : 0;
      column = std::max(column, run);
    }
  }
  EXPECT_GE(column, 22);
  EXPECT_GT(CountRgb(image, 0, 0, 160, 40, white), 80);  // "X", "Z" and the extents
  // The middle of the map is left alone.
  int changed = 0;
  for (int y = 60; y < 180; ++y) {
    for (int x = 100; x < 220; ++x)
      changed += !std::equal(image.At(x, y), image.At(x, y) + 3, plain.At(x, y));
  }
  EXPECT_EQ(changed, 0);
  // A perspective view has them too: the legend and the axes as the camera sees them.
  RgbImage persp = Render("persp-annotated.png", {"--mode=perspective", "--size=320x200",
                                                  "--camera=0,30,-110", "--look_at=0,-5,0"});
  ASSERT_EQ(persp.width, 320);
  ASSERT_EQ(persp.height, 200);
  EXPECT_GT(CountRgb(persp, 0, 100, 100, 200, white), 150);
  const uint8_t x_axis[3] = {240, 90, 90};
  EXPECT_GT(CountRgb(persp, 0, 0, 60, 60, x_axis), 8);
}

TEST_F(RenderTest, UnwritableOutFailsBeforeAnyRayIsCast) {
  // The parent of --out is a file: no one, root included, can create the PNG there.
  const std::string parent = dir_.path() + "/not-a-dir";
  { std::ofstream(parent) << "x"; }
  const std::string out = parent + "/map.png";
  auto start = std::chrono::steady_clock::now();
  CommandResult r = Cli({"render", "--out=" + out, "--size=2048x2048"});  // 4M rays to cast
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot write --out=" + out), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("INTERNAL"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 3.0) << "cast the rays first";
  // Checked before any call: without a server the answer is the same, not "cannot reach".
  CommandResult offline =
      RunCommand({VOXCOL_CLI_PATH, "--server=127.0.0.1:1", "render", "--out=" + out}, dir_.path());
  EXPECT_EQ(offline.exit_code, 2) << offline.err;
  EXPECT_NE(offline.err.find("cannot write --out=" + out), std::string::npos) << offline.err;
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

// `render --navmesh --path` on a flat floor built by edits with a wall across its middle (x in
// [-1, 1), z in [-50, 30), 3 high): one pixel per world unit (column = x + 64, row = z + 64). The
// navmesh's edges are drawn on the floor (along the tile border at x = -40 among others) and not
// on the wall, which is too narrow to stand on; the path from x = -20 to x = 20 along z = 0 goes
// around the wall's nearer end at z = 30: drawn there and nowhere over the wall.
TEST_F(RenderTest, NavMeshAndPathAreDrawnAroundAWall) {
  ASSERT_EQ(
      Cli({"fill-block", "--center=0,0,0", "--size=128,96,128", "--material=air", "--mode=set"})
          .exit_code,
      0);
  ASSERT_EQ(
      Cli({"fill-block", "--center=0,-2,0", "--size=128,4,128", "--material=rock", "--mode=set"})
          .exit_code,
      0);
  ASSERT_EQ(
      Cli({"fill-block", "--center=0,1.5,-10", "--size=2,3,80", "--material=rock", "--mode=set"})
          .exit_code,
      0);
  RgbImage image = Render("nav.png", {"--mode=top", "--size=128x128", "--plain", "--navmesh",
                                      "--path=-20,0,0:20,0,0", "--area=-64,-64,64,64"});
  ASSERT_EQ(image.width, 128);
  auto is = [&](int x, int y, const uint8_t rgb[3]) {
    const uint8_t* p = image.At(x, y);
    return p[0] == rgb[0] && p[1] == rgb[1] && p[2] == rgb[2];
  };
  int mesh = 0, border = 0, on_wall = 0, path_over_wall = 0, path_past_end = 0, path = 0;
  for (int y = 0; y < 128; ++y) {
    for (int x = 0; x < 128; ++x) {
      mesh += is(x, y, client::kRenderNavMeshRgb);
      path += is(x, y, client::kRenderPathRgb);
    }
    border += is(23, y, client::kRenderNavMeshRgb) || is(24, y, client::kRenderNavMeshRgb);
    if (y >= 18 && y < 90) {  // z in [-46, 26): the wall but its ends
      on_wall += is(64, y, client::kRenderNavMeshRgb) || is(63, y, client::kRenderNavMeshRgb);
      path_over_wall += is(64, y, client::kRenderPathRgb) || is(63, y, client::kRenderPathRgb);
    }
    if (y >= 94)
      path_past_end += is(63, y, client::kRenderPathRgb) || is(64, y, client::kRenderPathRgb);
  }
  EXPECT_GT(mesh, 500);
  EXPECT_GT(border, 100);  // the tile border x = -40 runs the whole floor, bar the eroded rims
  EXPECT_EQ(on_wall, 0);
  EXPECT_GT(path, 80);  // two legs of ~45 units at least
  EXPECT_EQ(path_over_wall, 0);
  EXPECT_GT(path_past_end, 0);
}

}  // namespace
}  // namespace voxcol::testing
