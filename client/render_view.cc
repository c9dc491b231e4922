#include "client/render_view.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "client/render_font.h"

namespace voxcol::client {

float Dot(RenderVec3 a, RenderVec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
RenderVec3 Cross(RenderVec3 a, RenderVec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
RenderVec3 Normalized(RenderVec3 a) {
  float n = std::sqrt(Dot(a, a));
  return n > 0 ? a * (1 / n) : a;
}

namespace {

float Get(RenderVec3 v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

// Slab test of the ray o + t d against the box; [t0, t1] is the part inside.
bool ClipToBox(RenderVec3 o, RenderVec3 d, RenderVec3 lo, RenderVec3 hi, float* t0, float* t1) {
  *t0 = 0;
  *t1 = std::numeric_limits<float>::infinity();
  for (int a = 0; a < 3; ++a) {
    float oa = Get(o, a), da = Get(d, a), la = Get(lo, a), ha = Get(hi, a);
    if (da == 0) {
      if (oa < la || oa > ha) return false;
      continue;
    }
    float ta = (la - oa) / da, tb = (ha - oa) / da;
    if (ta > tb) std::swap(ta, tb);
    *t0 = std::max(*t0, ta);
    *t1 = std::min(*t1, tb);
  }
  return *t0 < *t1;
}

}  // namespace

RenderView::RenderView(const RenderOptions& options, RenderVec3 world_min, RenderVec3 world_max)
    : o_(options), min_(world_min), max_(world_max) {
  eps_ = 1e-3f * std::max(1.0f, max_.x - min_.x);
  if (o_.mode == RenderMode::kTopDown) {
    float ax0 = o_.area[0], az0 = o_.area[1], ax1 = o_.area[2], az1 = o_.area[3];
    if (ax0 == 0 && az0 == 0 && ax1 == 0 && az1 == 0) {
      ax0 = min_.x, az0 = min_.z, ax1 = max_.x, az1 = max_.z;
    }
    // Widen the area to the image's aspect ratio around its centre.
    scale_ = std::max((ax1 - ax0) / o_.width, (az1 - az0) / o_.height);
    x0_ = 0.5f * (ax0 + ax1) - 0.5f * scale_ * o_.width;
    z0_ = 0.5f * (az0 + az1) - 0.5f * scale_ * o_.height;
    top_ = std::isnan(o_.top_y) ? max_.y - eps_ : std::min(o_.top_y, max_.y - eps_);
    return;
  }
  forward_ = Normalized(o_.look_at - o_.camera);
  RenderVec3 up{0, 1, 0};
  if (std::fabs(forward_.y) > 0.999f) up = {0, 0, 1};
  right_ = Normalized(Cross(forward_, up));
  up_ = Cross(right_, forward_);
  half_h_ = std::tan(0.5f * o_.fov_degrees * float(M_PI) / 180);
  half_w_ = half_h_ * o_.width / o_.height;
}

PixelRay RenderView::Ray(int column, int row) const {
  PixelRay r;
  const float longest = o_.max_distance > 0 ? o_.max_distance : 4096.0f;
  if (o_.mode == RenderMode::kTopDown) {
    // A little off the pixel's centre: when a pixel is a voxel wide, centres sit on the lattice
    // lines the mesh's vertices lie on, where a ray meets triangle edges and the triangle that
    // answers is a tie.
    float x = x0_ + (column + 0.637f) * scale_, z = z0_ + (row + 0.389f) * scale_;
    if (x <= min_.x || x >= max_.x || z <= min_.z || z >= max_.z || top_ <= min_.y) return r;
    r.valid = true;
    r.origin = {x, top_, z};
    r.direction = {0, -1, 0};
    r.length = std::min(longest, top_ - min_.y);
    return r;
  }
  float sx = (2 * (column + 0.5f) / o_.width - 1) * half_w_;
  float sy = (1 - 2 * (row + 0.5f) / o_.height) * half_h_;
  RenderVec3 d = Normalized(forward_ + right_ * sx + up_ * sy);
  RenderVec3 lo = min_ + RenderVec3{eps_, eps_, eps_}, hi = max_ - RenderVec3{eps_, eps_, eps_};
  float t0, t1;
  if (!ClipToBox(o_.camera, d, lo, hi, &t0, &t1) || t0 >= longest) return r;
  r.valid = true;
  r.offset = t0;
  r.origin = o_.camera + d * t0;
  r.direction = d;
  r.length = std::min(t1, longest) - t0;
  return r.length > 0 ? r : PixelRay();
}

bool RenderView::Project(RenderVec3 p, float* column, float* row, float* depth) const {
  if (o_.mode == RenderMode::kTopDown) {
    *column = (p.x - x0_) / scale_;
    *row = (p.z - z0_) / scale_;
    *depth = top_ - p.y;
    return true;
  }
  RenderVec3 d = p - o_.camera;
  float z = Dot(d, forward_);
  if (z <= 1e-3f) return false;
  *column = (Dot(d, right_) / z / half_w_ + 1) * 0.5f * o_.width;
  *row = (1 - Dot(d, up_) / z / half_h_) * 0.5f * o_.height;
  *depth = std::sqrt(Dot(d, d));
  return true;
}

bool RenderView::ClipNear(RenderVec3* a, RenderVec3* b) const {
  if (o_.mode == RenderMode::kTopDown) return true;
  constexpr float kNear = 0.01f;
  float za = Dot(*a - o_.camera, forward_), zb = Dot(*b - o_.camera, forward_);
  if (za < kNear && zb < kNear) return false;
  if (za < kNear) *a = *a + (*b - *a) * ((kNear - za) / (zb - za));
  if (zb < kNear) *b = *b + (*a - *b) * ((kNear - zb) / (za - zb));
  return true;
}

void RenderView::Unproject(float column, float row, float* x, float* z) const {
  *x = x0_ + column * scale_;
  *z = z0_ + row * scale_;
}

float RenderView::PixelSize(float depth) const {
  return o_.mode == RenderMode::kTopDown ? scale_ : 2 * half_h_ * depth / o_.height;
}

namespace {

struct Rgbf {
  float r, g, b;
};

Rgbf Palette(uint32_t material) {
  switch (material) {
    case 1:    // water
    case 2:    // rock
    case 3:    // dirt
    case 4:    // grass
    case 5: {  // sand
      const float* c = kRenderMaterialColour[material];
      return {c[0], c[1], c[2]};
    }
    case kSectionMaterial:
      return {0.22f, 0.21f, 0.20f};  // cut-away section through rock
    default: {
      // Other solids: a stable hue per material number.
      float h = float(material * 37 % 256) / 256;
      return {0.5f + 0.4f * std::sin(6.28f * h), 0.5f + 0.4f * std::sin(6.28f * h + 2.1f),
              0.5f + 0.4f * std::sin(6.28f * h + 4.2f)};
    }
  }
}

// Lambert with a fixed sun and a soft sky light.
float Light(RenderVec3 normal) {
  static const RenderVec3 sun = Normalized({-0.45f, 0.8f, -0.35f});
  return 0.3f + 0.15f * std::max(0.0f, normal.y) + 0.6f * std::max(0.0f, Dot(normal, sun));
}

Rgbf Mix(Rgbf a, Rgbf b, float t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

Rgbf Surface(const RayHit& h) {
  Rgbf c = Palette(h.material);
  float l = Light(h.normal);
  return {c.r * l, c.g * l, c.b * l};
}

}  // namespace

void ShadePixel(const RenderView& view, const RayHit* first, const RayHit* under,
                float eye_distance, uint8_t rgb[3]) {
  const Rgbf sky{kRenderSkyRgb[0] / 255.0f, kRenderSkyRgb[1] / 255.0f, kRenderSkyRgb[2] / 255.0f};
  if (!first || !first->hit) {
    std::copy(kRenderSkyRgb, kRenderSkyRgb + 3, rgb);
    return;
  }
  Rgbf c = Surface(*first);
  if (first->material == 1) {
    // Water: the ground below seen through a tint that deepens with the depth.
    Rgbf water = Palette(1);
    float depth = under && under->hit ? under->distance : 64.0f;
    Rgbf ground = under && under->hit ? Surface(*under) : water;
    c = Mix(ground, water, 0.35f + 0.55f * (1 - std::exp(-depth / 6)));
  }
  const RenderVec3 lo = view.world_min(), hi = view.world_max();
  if (view.options().mode == RenderMode::kTopDown) {
    // Height tint: high ground lighter, low ground darker.
    float t = (first->position.y - lo.y) / std::max(1e-3f, hi.y - lo.y);
    float k = 0.7f + 0.6f * std::clamp(t, 0.0f, 1.0f);
    c = {c.r * k, c.g * k, c.b * k};
  } else {
    // Distance haze towards the sky colour, never all the way.
    float diag = std::sqrt(Dot(hi - lo, hi - lo));
    c = Mix(c, sky, 0.8f * (1 - std::exp(-eye_distance / (0.7f * diag))));
  }
  const float v[3] = {c.r, c.g, c.b};
  for (int i = 0; i < 3; ++i) rgb[i] = uint8_t(std::clamp(v[i], 0.0f, 1.0f) * 255 + 0.5f);
  if (std::equal(rgb, rgb + 3, kRenderSkyRgb)) rgb[0] ^= 1;  // keep sky countable
}

namespace {

// Paints pixel (x, y) with `rgb` if the point at `depth` is in front of the terrain there, or
// blends it in faintly when it is behind.
void Plot(int x, int y, float depth, const uint8_t rgb[3], RenderImage* image) {
  if (x < 0 || y < 0 || x >= image->width || y >= image->height) return;
  size_t i = size_t(y) * image->width + x;
  float slack = 0.5f + 0.01f * depth;
  float a = depth <= image->depth[i] + slack ? 1.0f : 0.35f;
  for (int c = 0; c < 3; ++c) {
    uint8_t& p = image->rgb[3 * i + c];
    p = uint8_t(p + (rgb[c] - p) * a + 0.5f);
  }
}

}  // namespace

void DrawSegment(const RenderView& view, RenderVec3 a, RenderVec3 b, const uint8_t rgb[3],
                 RenderImage* image) {
  if (!view.ClipNear(&a, &b)) return;
  float ax, ay, ad, bx, by, bd;
  if (!view.Project(a, &ax, &ay, &ad) || !view.Project(b, &bx, &by, &bd)) return;
  // About two samples per pixel along the projected segment.
  int steps = std::clamp(int(std::hypot(bx - ax, by - ay) * 2) + 1, 1, 1 << 16);
  for (int s = 0; s <= steps; ++s) {
    float x, y, d;
    if (!view.Project(a + (b - a) * (float(s) / steps), &x, &y, &d)) continue;
    Plot(int(std::floor(x)), int(std::floor(y)), d, rgb, image);
  }
}

void DrawSphere(const RenderView& view, RenderVec3 center, float radius, const uint8_t rgb[3],
                RenderImage* image) {
  float cx, cy, cd;
  if (!view.Project(center, &cx, &cy, &cd)) return;
  float r = radius / view.PixelSize(cd);
  int steps = std::clamp(int(r * 8) + 8, 8, 4096);
  for (int s = 0; s < steps; ++s) {
    float a = 2 * float(M_PI) * s / steps;
    Plot(int(std::floor(cx + r * std::cos(a))), int(std::floor(cy + r * std::sin(a))), cd - radius,
         rgb, image);
  }
}

void DrawDot(const RenderView& view, RenderVec3 p, int pixels, const uint8_t rgb[3],
             RenderImage* image) {
  float x, y, d;
  if (!view.Project(p, &x, &y, &d)) return;
  for (int dy = -pixels; dy <= pixels; ++dy) {
    for (int dx = -pixels; dx <= pixels; ++dx) {
      if (dx * dx + dy * dy <= pixels * pixels) {
        Plot(int(std::floor(x)) + dx, int(std::floor(y)) + dy, d - 0.5f, rgb, image);
      }
    }
  }
}

namespace {

// A legend swatch: the material's colour unshaded.
void SwatchRgb(uint32_t material, uint8_t rgb[3]) {
  const Rgbf c = Palette(material);
  const float v[3] = {c.r, c.g, c.b};
  for (int i = 0; i < 3; ++i) rgb[i] = uint8_t(std::clamp(v[i], 0.0f, 1.0f) * 255 + 0.5f);
}

constexpr uint8_t kWhite[3] = {255, 255, 255};
constexpr int kPad = 3, kSwatch = 7;

// Annotations: panels darken what lies under them, marks and text are opaque.
void Put(RenderImage* image, int x, int y, const uint8_t rgb[3]) {
  if (x < 0 || y < 0 || x >= image->width || y >= image->height) return;
  std::copy(rgb, rgb + 3, &image->rgb[3 * (size_t(y) * image->width + x)]);
}

void Panel(RenderImage* image, int x0, int y0, int w, int h) {
  for (int y = std::max(0, y0); y < std::min(image->height, y0 + h); ++y) {
    for (int x = std::max(0, x0); x < std::min(image->width, x0 + w); ++x) {
      uint8_t* p = &image->rgb[3 * (size_t(y) * image->width + x)];
      for (int c = 0; c < 3; ++c) p[c] = uint8_t(p[c] * 2 / 5);
    }
  }
}

void Rect(RenderImage* image, int x0, int y0, int w, int h, const uint8_t rgb[3]) {
  for (int y = y0; y < y0 + h; ++y) {
    for (int x = x0; x < x0 + w; ++x) Put(image, x, y, rgb);
  }
}

void Text(RenderImage* image, const std::string& text, int x, int y,
          const uint8_t rgb[3] = kWhite) {
  DrawText(text.c_str(), x, y, [&](int px, int py) { Put(image, px, py, rgb); });
}

void Line(RenderImage* image, float x0, float y0, float x1, float y1, const uint8_t rgb[3]) {
  const int steps = std::max(1, int(std::ceil(std::max(std::fabs(x1 - x0), std::fabs(y1 - y0)))));
  for (int s = 0; s <= steps; ++s) {
    const float t = float(s) / steps;
    Put(image, int(std::lround(x0 + (x1 - x0) * t)), int(std::lround(y0 + (y1 - y0) * t)), rgb);
  }
}

// An arrow from (x0, y0) along the unit vector (dx, dy), `length` pixels, with its head.
void Arrow(RenderImage* image, float x0, float y0, float dx, float dy, float length,
           const uint8_t rgb[3]) {
  const float x1 = x0 + dx * length, y1 = y0 + dy * length;
  Line(image, x0, y0, x1, y1, rgb);
  Line(image, x1, y1, x1 - 4 * dx - 3 * dy, y1 - 4 * dy + 3 * dx, rgb);
  Line(image, x1, y1, x1 - 4 * dx + 3 * dy, y1 - 4 * dy - 3 * dx, rgb);
}

// What the picture's colours mean: the named materials, sky, and the overlays it shows.
std::vector<std::pair<std::array<uint8_t, 3>, std::string>> LegendEntries(const RenderView& view) {
  std::vector<std::pair<std::array<uint8_t, 3>, std::string>> entries;
  auto add = [&entries](const uint8_t rgb[3], const char* label) {
    entries.push_back({{rgb[0], rgb[1], rgb[2]}, label});
  };
  const std::pair<uint32_t, const char*> materials[] = {
      {2, "ROCK"}, {3, "DIRT"}, {4, "GRASS"}, {5, "SAND"}, {1, "WATER"}};
  for (const auto& [material, label] : materials) {
    uint8_t rgb[3];
    SwatchRgb(material, rgb);
    add(rgb, label);
  }
  const RenderOptions& o = view.options();
  if (o.mode == RenderMode::kTopDown && !std::isnan(o.top_y)) {
    uint8_t rgb[3];
    SwatchRgb(kSectionMaterial, rgb);
    add(rgb, "ROCK SECTION");
  }
  add(kRenderSkyRgb, "NO HIT (SKY)");
  bool kinds[3] = {false, false, false};
  for (const RenderOverlay& v : o.overlays) kinds[int(v.kind)] = true;
  if (kinds[0]) add(kRenderRayRgb, "RAY");
  if (kinds[1]) add(kRenderSweepRgb, "SWEEP");
  if (kinds[2]) add(kRenderContactRgb, "CONTACTS");
  if (!o.overlays.empty()) add(kRenderHitRgb, "HIT POINT");
  if (o.navmesh) add(kRenderNavMeshRgb, "NAVMESH");
  if (o.has_path) add(kRenderPathRgb, "PATH");
  return entries;
}

// Bottom left: a swatch and a name per entry.
void DrawLegend(const RenderView& view, RenderImage* image) {
  const auto entries = LegendEntries(view);
  int text = 0;
  for (const auto& e : entries) text = std::max(text, TextWidth(e.second.c_str()));
  const int w = 2 * kPad + kSwatch + 4 + text, h = 2 * kPad + int(entries.size()) * kLineHeight - 2;
  const int x0 = 2, y0 = image->height - 2 - h;
  Panel(image, x0, y0, w, h);
  for (size_t i = 0; i < entries.size(); ++i) {
    const int y = y0 + kPad + int(i) * kLineHeight;
    Rect(image, x0 + kPad, y, kSwatch, kSwatch, entries[i].first.data());
    Text(image, entries[i].second, x0 + kPad + kSwatch + 4, y);
  }
}

// Bottom right: a bar of a round length (1, 2 or 5 times a power of ten world units) about a
// quarter of the picture wide, with its length above it.
RenderScaleBar DrawScaleBar(const RenderView& view, RenderImage* image) {
  const RenderOptions& o = view.options();
  const bool top = o.mode == RenderMode::kTopDown;
  const RenderVec3 d = o.look_at - o.camera;
  const float pixel = view.PixelSize(top ? 0 : std::sqrt(Dot(d, d)));
  const float target = 0.25f * image->width * pixel;
  if (!(target > 0) || !std::isfinite(target)) return {};
  const float base = std::pow(10.0f, std::floor(std::log10(target)));
  RenderScaleBar bar;
  for (float m : {5.0f, 2.0f, 1.0f}) {
    if (bar.units == 0 && m * base <= target) bar.units = m * base;
  }
  bar.pixels = int(std::lround(bar.units / pixel));
  if (bar.pixels < 4) return {};
  const std::string label =
      absl::StrFormat("%g UNITS%s", double(bar.units), top ? "" : " AT CENTRE");
  const int w = 2 * kPad + std::max(bar.pixels, TextWidth(label.c_str()));
  const int h = 2 * kPad + kGlyphHeight + 3 + 5;
  const int x0 = image->width - 2 - w, y0 = image->height - 2 - h;
  Panel(image, x0, y0, w, h);
  Text(image, label, x0 + w - kPad - TextWidth(label.c_str()), y0 + kPad);
  const int bx = x0 + w - kPad - bar.pixels, by = y0 + kPad + kGlyphHeight + 4;
  Rect(image, bx, by, bar.pixels, 3, kWhite);
  Rect(image, bx, by - 2, 1, 7, kWhite);  // end ticks
  Rect(image, bx + bar.pixels - 1, by - 2, 1, 7, kWhite);
  return bar;
}

// Top left: top-down, arrows along +X (columns) and +Z (rows) with the picture's extents;
// perspective, the world axes as the camera sees them.
void DrawAxes(const RenderView& view, RenderImage* image) {
  const RenderOptions& o = view.options();
  if (o.mode == RenderMode::kTopDown) {
    float x0, z0, x1, z1;
    view.Unproject(0, 0, &x0, &z0);
    view.Unproject(float(image->width), float(image->height), &x1, &z1);
    const std::string xs = absl::StrFormat("X %.0f TO %.0f", x0, x1);
    const std::string zs = absl::StrFormat("Z %.0f TO %.0f", z0, z1);
    const int text = std::max(TextWidth(xs.c_str()), TextWidth(zs.c_str()));
    Panel(image, 2, 2, 2 * kPad + 36 + text, 2 * kPad + 34);
    const float ox = 2 + kPad + 2, oy = 2 + kPad + 2;
    Arrow(image, ox, oy, 1, 0, 22, kWhite);
    Arrow(image, ox, oy, 0, 1, 22, kWhite);
    Text(image, "X", int(ox) + 25, int(oy) - 3);
    Text(image, "Z", int(ox) - 2, int(oy) + 25);
    Text(image, xs, int(ox) + 34, int(oy) + 4);
    Text(image, zs, int(ox) + 34, int(oy) + 4 + kLineHeight);
    return;
  }
  constexpr uint8_t kAxisRgb[3][3] = {{240, 90, 90}, {110, 220, 110}, {100, 150, 255}};
  const char* names[3] = {"X", "Y", "Z"};
  Panel(image, 2, 2, 52, 52);
  const float ox = 28, oy = 28;
  float cx, cy, cd;
  if (!view.Project(o.look_at, &cx, &cy, &cd)) return;
  const float step = 0.05f * cd;
  for (int a = 0; a < 3; ++a) {
    RenderVec3 e{a == 0 ? step : 0, a == 1 ? step : 0, a == 2 ? step : 0};
    float ex, ey, ed;
    if (!view.Project(o.look_at + e, &ex, &ey, &ed)) continue;
    const float dx = ex - cx, dy = ey - cy, len = std::hypot(dx, dy);
    const float full = step / view.PixelSize(cd);  // the projected length of an axis across view
    if (len < 1e-3f || full <= 0) continue;
    const float shown = 16 * std::min(1.0f, len / full);
    Arrow(image, ox, oy, dx / len, dy / len, std::max(shown, 5.0f), kAxisRgb[a]);
    Text(image, names[a], int(ox + dx / len * (std::max(shown, 5.0f) + 6)) - 2,
         int(oy + dy / len * (std::max(shown, 5.0f) + 6)) - 3, kAxisRgb[a]);
  }
}

}  // namespace

RenderScaleBar Annotate(const RenderView& view, RenderImage* image) {
  if (image->width < kRenderAnnotateMinWidth || image->height < kRenderAnnotateMinHeight) {
    return {};
  }
  DrawAxes(view, image);
  DrawLegend(view, image);
  return DrawScaleBar(view, image);
}

}  // namespace voxcol::client
