// Cameras, shading and overlay drawing of `voxcol render` (render.h): the parts that need no
// server, kept apart from the orchestration in render.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "client/render.h"
#include "client/render_rays.h"

namespace voxcol::client {

inline RenderVec3 operator+(RenderVec3 a, RenderVec3 b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z};
}
inline RenderVec3 operator-(RenderVec3 a, RenderVec3 b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
inline RenderVec3 operator*(RenderVec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
float Dot(RenderVec3 a, RenderVec3 b);
RenderVec3 Cross(RenderVec3 a, RenderVec3 b);
RenderVec3 Normalized(RenderVec3 a);

// A ray of one pixel: start, unit direction and length; `valid` is false for pixels that see
// nothing of the world (outside its box). `offset` is the distance from the eye to `origin`.
struct PixelRay {
  bool valid = false;
  RenderVec3 origin, direction;
  float length = 0, offset = 0;
};

// Maps pixels to rays and world points back to pixels, for either mode.
class RenderView {
 public:
  // `world_min`/`world_max`: the world box. The options must have been validated.
  RenderView(const RenderOptions& options, RenderVec3 world_min, RenderVec3 world_max);
  PixelRay Ray(int column, int row) const;
  // The image position of `p` and its distance from the eye along the view; false when it is
  // behind the eye.
  bool Project(RenderVec3 p, float* column, float* row, float* depth) const;
  // Perspective: cuts the segment to the part in front of the eye; false if none is.
  bool ClipNear(RenderVec3* a, RenderVec3* b) const;
  // Top-down: the world X,Z at an image position (the inverse of Project).
  void Unproject(float column, float row, float* x, float* z) const;
  // World units per pixel at `depth` (for drawing spheres).
  float PixelSize(float depth) const;
  const RenderOptions& options() const { return o_; }
  RenderVec3 world_min() const { return min_; }
  RenderVec3 world_max() const { return max_; }

 private:
  RenderOptions o_;
  RenderVec3 min_, max_;
  float eps_;
  // Top-down: the world X,Z of pixel (0,0)'s corner and the world units per pixel.
  float x0_ = 0, z0_ = 0, scale_ = 1, top_ = 0;
  // Perspective: the eye's basis and the half-extents of the image plane at distance 1.
  RenderVec3 forward_, right_, up_;
  float half_w_ = 1, half_h_ = 1;
};

// An RGB image with the distance from the eye of each pixel's surface (infinity for sky).
struct RenderImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  std::vector<float> depth;
};

// The colour of one pixel: its first-pass hit (terrain or water surface), the ground under water
// (`under`, only when `first` is water) and the eye distance of the hit.
void ShadePixel(const RenderView& view, const RayHit* first, const RayHit* under,
                float eye_distance, uint8_t rgb[3]);

// Draws a world-space segment / a sphere outline / a dot over the image in `rgb`, faded where
// terrain is in front.
void DrawSegment(const RenderView& view, RenderVec3 a, RenderVec3 b, const uint8_t rgb[3],
                 RenderImage* image);
void DrawSphere(const RenderView& view, RenderVec3 center, float radius, const uint8_t rgb[3],
                RenderImage* image);
void DrawDot(const RenderView& view, RenderVec3 p, int pixels, const uint8_t rgb[3],
             RenderImage* image);

// The legend (the material colours, sky and the overlays drawn), a scale bar and axis labels
// over the picture, when it is at least kRenderAnnotateMinWidth x kRenderAnnotateMinHeight;
// returns the scale bar drawn ({0, 0}: none).
struct RenderScaleBar {
  float units = 0;
  int pixels = 0;
};
RenderScaleBar Annotate(const RenderView& view, RenderImage* image);

}  // namespace voxcol::client
