#include "client/render.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>

#include "client/png_writer.h"
#include "client/render_rays.h"
#include "client/render_view.h"

namespace voxcol::client {
namespace {

v1::Vec3 ToProto(RenderVec3 v) {
  v1::Vec3 p;
  p.set_x(v.x);
  p.set_y(v.y);
  p.set_z(v.z);
  return p;
}
RenderVec3 FromProto(const v1::Vec3& v) { return {v.x(), v.y(), v.z()}; }
bool Finite(RenderVec3 v) { return std::isfinite(v.x + v.y + v.z); }

}  // namespace

absl::Status ValidateRenderOptions(const RenderOptions& o) {
  auto bad = [](const std::string& m) { return absl::InvalidArgumentError(m); };
  if (o.width < 1 || o.width > 8192) return bad("width must be 1..8192");
  if (o.height < 1 || o.height > 8192) return bad("height must be 1..8192");
  if (o.batch_rays < 1) return bad("batch_rays must be >= 1");
  if (o.in_flight < 1) return bad("in_flight must be >= 1");
  if (!(o.max_distance >= 0)) return bad("max_distance must be >= 0");
  if (o.mode == RenderMode::kPerspective) {
    if (!Finite(o.camera)) return bad("camera must be finite");
    if (!Finite(o.look_at)) return bad("look_at must be finite");
    RenderVec3 d = o.look_at - o.camera;
    if (Dot(d, d) < 1e-8f) return bad("look_at must differ from camera");
    if (!(o.fov_degrees > 0 && o.fov_degrees < 180)) return bad("fov_degrees must be in (0, 180)");
  } else {
    bool all_zero = o.area[0] == 0 && o.area[1] == 0 && o.area[2] == 0 && o.area[3] == 0;
    if (!all_zero && !(o.area[2] > o.area[0] && o.area[3] > o.area[1])) {
      return bad("area must be min_x,min_z,max_x,max_z with max > min");
    }
  }
  if (o.has_path && !(Finite(o.path[0]) && Finite(o.path[1]))) return bad("path must be finite");
  for (const RenderOverlay& v : o.overlays) {
    if (!Finite(v.origin)) return bad("overlay origin must be finite");
    if (v.kind != RenderOverlay::Kind::kContacts && Dot(v.direction, v.direction) == 0) {
      return bad("overlay direction must be non-zero");
    }
    if (v.kind != RenderOverlay::Kind::kRay && !(v.radius > 0)) {
      return bad("overlay radius must be > 0");
    }
    if (v.kind == RenderOverlay::Kind::kSweep && !(v.distance > 0)) {
      return bad("overlay sweep distance must be > 0");
    }
  }
  return absl::OkStatus();
}

namespace {

v1::RaycastRequest MakeRay(RenderVec3 origin, RenderVec3 direction, float length,
                           v1::WaterMode water) {
  v1::RaycastRequest r;
  *r.mutable_origin() = ToProto(origin);
  *r.mutable_direction() = ToProto(direction);
  r.set_max_distance(length);
  r.set_water_mode(water);
  return r;
}

absl::Status FromGrpc(const char* what, const grpc::Status& s) {
  return absl::Status(absl::StatusCode(s.error_code()),
                      std::string(what) + ": " + s.error_message());
}

absl::Status DrawRay(Client& client, const RenderView& view, const RenderOverlay& v,
                     RenderImage* image) {
  v1::RaycastRequest request = MakeRay(v.origin, v.direction, v.distance > 0 ? v.distance : 1000,
                                       v1::WATER_MODE_PASS_THROUGH);
  v1::RaycastResponse response;
  grpc::Status s = client.Raycast(request, &response);
  if (!s.ok()) return FromGrpc("overlay raycast", s);
  RenderVec3 end = response.hit() ? FromProto(response.first().position())
                                  : v.origin + Normalized(v.direction) * request.max_distance();
  DrawSegment(view, v.origin, end, kRenderRayRgb, image);
  DrawDot(view, v.origin, 2, kRenderRayRgb, image);
  if (response.hit()) DrawDot(view, end, 3, kRenderHitRgb, image);
  return absl::OkStatus();
}

v1::PosedShape Sphere(RenderVec3 center, float radius) {
  v1::PosedShape shape;
  shape.mutable_shape()->mutable_sphere()->set_radius(radius);
  *shape.mutable_position() = ToProto(center);
  return shape;
}

absl::Status DrawSweep(Client& client, const RenderView& view, const RenderOverlay& v,
                       RenderImage* image) {
  v1::SweepRequest request;
  *request.mutable_shape() = Sphere(v.origin, v.radius);
  *request.mutable_direction() = ToProto(v.direction);
  request.set_distance(v.distance);
  v1::SweepResponse response;
  grpc::Status s = client.Sweep(request, &response);
  if (!s.ok()) return FromGrpc("overlay sweep", s);
  RenderVec3 end = response.hit() ? FromProto(response.first().shape_position())
                                  : v.origin + Normalized(v.direction) * v.distance;
  DrawSegment(view, v.origin, end, kRenderSweepRgb, image);
  DrawSphere(view, v.origin, v.radius, kRenderSweepRgb, image);
  DrawSphere(view, end, v.radius, kRenderSweepRgb, image);
  if (response.hit())
    DrawDot(view, FromProto(response.first().position()), 3, kRenderHitRgb, image);
  return absl::OkStatus();
}

absl::Status DrawContacts(Client& client, const RenderView& view, const RenderOverlay& v,
                          RenderImage* image) {
  v1::ContactsRequest request;
  *request.mutable_shape() = Sphere(v.origin, v.radius);
  request.set_skip_water(true);
  v1::ContactsResponse response;
  grpc::Status s = client.Contacts(request, &response);
  if (!s.ok()) return FromGrpc("overlay contacts", s);
  DrawSphere(view, v.origin, v.radius, kRenderContactRgb, image);
  for (const v1::ChunkContacts& chunk : response.chunks()) {
    for (const v1::Contact& c : chunk.points()) {
      RenderVec3 p = FromProto(c.position());
      // The point and a short stroke along its normal.
      DrawSegment(view, p, p + FromProto(c.normal()) * (0.5f * v.radius), kRenderContactRgb, image);
      DrawDot(view, p, 2, kRenderHitRgb, image);
    }
  }
  return absl::OkStatus();
}

// The X,Z box whose navmesh is drawn: the top-down area seen, or (perspective) 64 units around
// the point looked at.
void NavBox(const RenderView& view, v1::GetNavMeshRequest* request) {
  const RenderOptions& o = view.options();
  float x0, z0, x1, z1;
  if (o.mode == RenderMode::kTopDown) {
    view.Unproject(0, 0, &x0, &z0);
    view.Unproject(float(o.width), float(o.height), &x1, &z1);
  } else {
    x0 = o.look_at.x - 64, z0 = o.look_at.z - 64, x1 = o.look_at.x + 64, z1 = o.look_at.z + 64;
  }
  *request->mutable_min() = ToProto(RenderVec3{std::min(x0, x1), 0, std::min(z0, z1)});
  *request->mutable_max() = ToProto(RenderVec3{std::max(x0, x1), 0, std::max(z0, z1)});
}

// The navmesh's polygon edges (slightly above the surface, so terrain does not hide them) and
// the path with a dot at each waypoint.
absl::Status DrawNavigation(Client& client, const RenderView& view, RenderImage* image) {
  const RenderOptions& o = view.options();
  const RenderVec3 lift{0, 0.05f, 0};
  if (o.navmesh) {
    v1::GetNavMeshRequest request;
    NavBox(view, &request);
    request.set_profile(o.nav_profile);
    v1::GetNavMeshResponse mesh;
    if (grpc::Status s = client.GetNavMesh(request, &mesh); !s.ok()) {
      return FromGrpc("navmesh", s);
    }
    for (const v1::NavMeshPolygon& p : mesh.polygons()) {
      const int n = p.vertices_size() / 3;
      for (int i = 0; i < n; ++i) {
        const int k = (i + 1) % n;
        const RenderVec3 a{p.vertices(3 * i), p.vertices(3 * i + 1), p.vertices(3 * i + 2)};
        const RenderVec3 b{p.vertices(3 * k), p.vertices(3 * k + 1), p.vertices(3 * k + 2)};
        DrawSegment(view, a + lift, b + lift, kRenderNavMeshRgb, image);
      }
    }
  }
  if (!o.has_path) return absl::OkStatus();
  v1::FindPathRequest request;
  *request.mutable_start() = ToProto(o.path[0]);
  *request.mutable_goal() = ToProto(o.path[1]);
  request.set_profile(o.nav_profile);
  v1::FindPathResponse path;
  if (grpc::Status s = client.FindPath(request, &path); !s.ok()) return FromGrpc("path", s);
  if (path.status() != v1::PATH_STATUS_OK) {
    return absl::FailedPreconditionError("path: no path to draw (" +
                                         v1::PathStatus_Name(path.status()) + ")");
  }
  for (int i = 0; i < path.waypoints_size(); ++i) {
    const v1::Vec3& w = path.waypoints(i).position();
    const RenderVec3 p{w.x(), w.y(), w.z()};
    if (i > 0) {
      const v1::Vec3& q = path.waypoints(i - 1).position();
      DrawSegment(view, RenderVec3{q.x(), q.y(), q.z()} + lift, p + lift, kRenderPathRgb, image);
    }
    DrawDot(view, p + lift, 2, kRenderPathRgb, image);
  }
  return absl::OkStatus();
}

absl::Status DrawOverlays(Client& client, const RenderView& view, RenderImage* image) {
  for (const RenderOverlay& v : view.options().overlays) {
    absl::Status s = v.kind == RenderOverlay::Kind::kRay     ? DrawRay(client, view, v, image)
                     : v.kind == RenderOverlay::Kind::kSweep ? DrawSweep(client, view, v, image)
                                                             : DrawContacts(client, view, v, image);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// The two passes of raycasts: to the first surface (water included), then from every water
// surface through the water to the ground. `under[p]` is the second-pass hit of pixel p.
struct Passes {
  std::vector<PixelRay> pixels;
  std::vector<int64_t> first_of_pixel;  // index into `first`, -1 without a ray
  std::vector<RayHit> first, under;
  std::vector<int64_t> under_of_pixel;
};

absl::Status CastPasses(Client& client, const RenderView& view, const RenderProgressFn& progress,
                        Passes* p, RenderStats* stats) {
  const RenderOptions& o = view.options();
  const size_t n = size_t(o.width) * o.height;
  std::vector<v1::RaycastRequest> rays;
  const bool cut_away = o.mode == RenderMode::kTopDown && !std::isnan(o.top_y);
  p->pixels.resize(n);
  p->first_of_pixel.assign(n, -1);
  for (int row = 0; row < o.height; ++row) {
    for (int col = 0; col < o.width; ++col) {
      size_t i = size_t(row) * o.width + col;
      PixelRay& r = p->pixels[i] = view.Ray(col, row);
      if (!r.valid) continue;
      p->first_of_pixel[i] = int64_t(rays.size());
      rays.push_back(MakeRay(r.origin, r.direction, r.length, v1::WATER_MODE_STOP_AT_SURFACE));
      // A map started below the world's top is a cut-away: look past the rock the rays start in.
      rays.back().set_all_hits(cut_away);
    }
  }
  std::atomic<uint64_t> done{0}, total{rays.size()};
  auto answered = [&](uint64_t k) {
    if (progress) progress(done += k, total.load());
  };
  absl::Status s =
      CastRays(client.channel(), rays, o.batch_rays, o.in_flight, answered, &p->first, stats);
  if (!s.ok()) return s;
  // Second pass: a little past each water surface, on to the ground.
  std::vector<v1::RaycastRequest> water;
  p->under_of_pixel.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (p->first_of_pixel[i] < 0) continue;
    const RayHit& h = p->first[p->first_of_pixel[i]];
    const PixelRay& r = p->pixels[i];
    float skip = 1e-3f + 1e-4f * h.distance, left = r.length - h.distance - skip;
    if (!h.hit || h.material != 1 || left <= 0) continue;
    p->under_of_pixel[i] = int64_t(water.size());
    water.push_back(
        MakeRay(h.position + r.direction * skip, r.direction, left, v1::WATER_MODE_PASS_THROUGH));
  }
  total += water.size();
  stats->water_rays = water.size();
  RenderStats second;
  s = CastRays(client.channel(), water, o.batch_rays, o.in_flight, answered, &p->under, &second);
  stats->rays += second.rays;
  stats->batches += second.batches;
  stats->retried_batches += second.retried_batches;
  return s;
}

RenderImage Shade(const RenderView& view, const Passes& p, RenderStats* stats) {
  const RenderOptions& o = view.options();
  RenderImage image;
  image.width = o.width;
  image.height = o.height;
  image.rgb.resize(size_t(o.width) * o.height * 3);
  image.depth.assign(size_t(o.width) * o.height, std::numeric_limits<float>::infinity());
  for (size_t i = 0; i < p.pixels.size(); ++i) {
    const RayHit* first = p.first_of_pixel[i] >= 0 ? &p.first[p.first_of_pixel[i]] : nullptr;
    const RayHit* under = p.under_of_pixel[i] >= 0 ? &p.under[p.under_of_pixel[i]] : nullptr;
    float eye = first && first->hit ? p.pixels[i].offset + first->distance : 0;
    if (first && first->hit) {
      image.depth[i] = eye;
      ++stats->terrain_pixels;
    }
    ShadePixel(view, first, under, eye, &image.rgb[3 * i]);
  }
  return image;
}

}  // namespace

absl::Status Render(Client& client, const RenderOptions& options, const std::string& png_path,
                    const RenderProgressFn& progress, RenderStats* stats) {
  if (absl::Status s = ValidateRenderOptions(options); !s.ok()) return s;
  RenderStats local;
  if (!stats) stats = &local;
  *stats = RenderStats();
  v1::GetWorldInfoResponse info;
  grpc::Status got = client.GetWorldInfo(&info);
  if (!got.ok()) return FromGrpc("world info", got);
  RenderView view(options, FromProto(info.bounds().min()), FromProto(info.bounds().max()));
  Passes passes;
  auto start = std::chrono::steady_clock::now();
  absl::Status s = CastPasses(client, view, progress, &passes, stats);
  stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!s.ok()) return s;
  RenderImage image = Shade(view, passes, stats);
  if (s = DrawNavigation(client, view, &image); !s.ok()) return s;
  if (s = DrawOverlays(client, view, &image); !s.ok()) return s;
  if (options.annotate) {
    RenderScaleBar bar = Annotate(view, &image);
    stats->scale_bar_units = bar.units;
    stats->scale_bar_pixels = bar.pixels;
  }
  return WritePng(png_path, image.width, image.height, image.rgb);
}

}  // namespace voxcol::client
