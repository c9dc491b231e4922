// Pictures of the world made with raycasts through the service: a top-down map or a perspective
// view, shaded by surface normal and material, water tinted over the ground below it, with
// optional overlays of a query (a ray, a sphere sweep, the contact points of a sphere), written as
// an RGB PNG.
//
// Every pixel is one RaycastRequest; the rays go to the server in QueryBatchRequests of
// RenderOptions::batch_rays over one Query stream with several batches in flight. A first pass
// stops rays at the water surface; the pixels that met water cast a second ray from there through
// the water to the ground, and the ground is drawn under a tint that deepens with the depth.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/voxcol_client.h"

namespace voxcol::client {

struct RenderVec3 {
  float x = 0, y = 0, z = 0;
};

enum class RenderMode { kTopDown, kPerspective };

// The colour of pixels whose ray met nothing (sky, or the void outside the world). No shaded
// surface is drawn in exactly this colour, so a picture's terrain share can be counted.
constexpr uint8_t kRenderSkyRgb[3] = {150, 190, 235};

// Colours of the overlays (render_view.cc draws them and lists them in the legend).
constexpr uint8_t kRenderRayRgb[3] = {255, 220, 0}, kRenderSweepRgb[3] = {235, 60, 225},
                  kRenderContactRgb[3] = {0, 235, 235}, kRenderHitRgb[3] = {235, 30, 30};
// The navmesh's polygon edges and a path over it (RenderOptions::navmesh, path).
constexpr uint8_t kRenderNavMeshRgb[3] = {40, 255, 60}, kRenderPathRgb[3] = {255, 130, 0};

// A picture at least this large gets a legend (bottom left), a scale bar (bottom right) and axis
// labels (top left) drawn over it, unless RenderOptions::annotate is false; smaller ones have no
// room for them. Their text is pure white, which no shaded surface is.
constexpr int kRenderAnnotateMinWidth = 160, kRenderAnnotateMinHeight = 120;

// The unshaded colours of the named materials 1..5 (water, rock, dirt, grass, sand; index 0,
// air, is never drawn), RGB in [0, 1]; surfaces are these times their light.
inline constexpr float kRenderMaterialColour[6][3] = {{0.50f, 0.50f, 0.50f}, {0.16f, 0.36f, 0.62f},
                                                      {0.50f, 0.49f, 0.47f}, {0.53f, 0.38f, 0.24f},
                                                      {0.36f, 0.60f, 0.25f}, {0.84f, 0.77f, 0.55f}};

// The legend's swatch of a named material (1..5): its colour unshaded.
inline void RenderMaterialRgb(uint32_t material, uint8_t rgb[3]) {
  for (int i = 0; i < 3; ++i) rgb[i] = uint8_t(kRenderMaterialColour[material % 6][i] * 255 + 0.5f);
}

// A query drawn over the picture (in front of the terrain; the parts behind terrain are drawn
// faded). The query runs on the server before the picture is made.
struct RenderOverlay {
  enum class Kind { kRay, kSweep, kContacts };
  Kind kind = Kind::kRay;
  RenderVec3 origin;     // ray and sweep: start; contacts: sphere centre
  RenderVec3 direction;  // ray and sweep (any non-zero length)
  float distance = 0;    // sweep: how far the sphere moves; ray: max distance (0: 1000)
  float radius = 0;      // sweep and contacts: the sphere's radius
};

struct RenderOptions {
  RenderMode mode = RenderMode::kTopDown;
  int width = 512, height = 512;  // pixels, each 1..8192
  // Perspective: the eye, the point it looks at (up is +Y) and the vertical field of view. An eye
  // outside the world sees it from outside (rays start where they enter the world box).
  RenderVec3 camera{0, 40, -120};
  RenderVec3 look_at{0, 0, 0};
  float fov_degrees = 60;
  // Top-down: the X,Z area drawn (min_x, min_z, max_x, max_z; all zero: the whole world), widened
  // to the image's aspect ratio, and the height the rays start at (NaN: the world's top). With a
  // height the map is a cut-away: rays starting inside rock show the first surface they enter
  // below it (a cave floor). Image columns run along +X, rows along +Z.
  float area[4] = {0, 0, 0, 0};
  float top_y = __builtin_nanf("");
  float max_distance = 0;  // longest ray, world units (0: across the world, capped at 4096)
  std::vector<RenderOverlay> overlays;
  // The navigation mesh of `nav_profile` (empty: the server's default) drawn over the picture:
  // the edges of the polygons in the picture's area (top-down; perspective: around look_at).
  bool navmesh = false;
  std::string nav_profile;
  // A path drawn over the picture (FindPath from path[0] to path[1], the agent's feet).
  bool has_path = false;
  RenderVec3 path[2];
  bool annotate = true;   // legend, scale bar and axis labels (see kRenderAnnotateMinWidth)
  int batch_rays = 4096;  // rays per QueryBatchRequest (at most the server's --max_batch_queries)
  int in_flight = 4;      // batches sent and not yet answered
};

struct RenderStats {
  uint64_t rays = 0;        // raycasts sent (both passes)
  uint64_t water_rays = 0;  // second-pass rays under water
  uint64_t batches = 0;
  uint64_t retried_batches = 0;  // shed with RESOURCE_EXHAUSTED and sent again
  double seconds = 0;            // wall time of the raycasts
  uint64_t version = 0;          // world version the first batch saw
  uint64_t terrain_pixels = 0;   // pixels whose ray hit something
  // The scale bar drawn: its length in world units (top-down: anywhere; perspective: at the
  // look-at distance, the picture's centre) and in pixels; 0 when none was drawn.
  float scale_bar_units = 0;
  int scale_bar_pixels = 0;
};

// Called now and then with the rays answered so far and the total (the total grows when the
// water pass starts).
using RenderProgressFn = std::function<void(uint64_t done, uint64_t total)>;

// OK, or INVALID_ARGUMENT naming the first bad option.
absl::Status ValidateRenderOptions(const RenderOptions& options);

// Renders the world `client` serves into an RGB PNG at `png_path`. Returns INVALID_ARGUMENT
// naming the option for bad options, the server's status when a query or batch fails, and
// INTERNAL when the file cannot be written. `progress` and `stats` may be null.
absl::Status Render(Client& client, const RenderOptions& options, const std::string& png_path,
                    const RenderProgressFn& progress, RenderStats* stats);

}  // namespace voxcol::client
