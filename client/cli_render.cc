#include "client/cli_render.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "client/cli_common.h"
#include "client/cli_flags.h"
#include "client/render.h"

namespace voxcol::client {
namespace {

bool ParseFloats(const std::string& text, size_t count, float* out) {
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  if (parts.size() != count) return false;
  for (size_t i = 0; i < count; ++i) {
    if (!absl::SimpleAtof(parts[i], &out[i])) return false;
  }
  return true;
}

bool ParsePoint(const std::string& text, RenderVec3* out) {
  float v[3];
  if (!ParseFloats(text, 3, v)) return false;
  *out = {v[0], v[1], v[2]};
  return true;
}

// Parses one ';'-separated list of overlays of `kind`; false on a malformed entry.
bool ParseOverlays(const std::string& text, RenderOverlay::Kind kind,
                   std::vector<RenderOverlay>* out) {
  for (absl::string_view entry : absl::StrSplit(text, ';', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(entry, ':');
    RenderOverlay v;
    v.kind = kind;
    bool ok = !f.empty() && ParsePoint(f[0], &v.origin);
    if (kind == RenderOverlay::Kind::kRay) {
      ok = ok && (f.size() == 2 || f.size() == 3) && ParsePoint(f[1], &v.direction) &&
           (f.size() == 2 || absl::SimpleAtof(f[2], &v.distance));
    } else if (kind == RenderOverlay::Kind::kSweep) {
      ok = ok && f.size() == 4 && ParsePoint(f[1], &v.direction) &&
           absl::SimpleAtof(f[2], &v.distance) && absl::SimpleAtof(f[3], &v.radius);
    } else {
      ok = ok && f.size() == 2 && absl::SimpleAtof(f[1], &v.radius);
    }
    if (!ok) return false;
    out->push_back(v);
  }
  return true;
}

// The options from the flags; an empty string, or the usage error.
std::string OptionsFromFlags(RenderOptions* o) {
  const std::string mode = Flags().mode;
  if (mode == "perspective") {
    o->mode = RenderMode::kPerspective;
  } else if (mode.empty() || mode == "top") {
    o->mode = RenderMode::kTopDown;
  } else {
    return "render: --mode must be top or perspective";
  }
  const std::string size = Flags().size;
  std::vector<std::string> wh = absl::StrSplit(size, 'x');
  if (!size.empty() && (wh.size() != 2 || !absl::SimpleAtoi(wh[0], &o->width) ||
                        !absl::SimpleAtoi(wh[1], &o->height))) {
    return "render: --size must be WIDTHxHEIGHT, e.g. 512x512";
  }
  if (!ParsePoint(Flags().camera, &o->camera)) return "--camera must be X,Y,Z";
  if (!ParsePoint(Flags().look_at, &o->look_at)) return "--look_at must be X,Y,Z";
  o->fov_degrees = Flags().fov;
  const std::string area = Flags().area;
  if (!area.empty() && !ParseFloats(area, 4, o->area)) {
    return "--area must be MIN_X,MIN_Z,MAX_X,MAX_Z";
  }
  const std::string top = Flags().top_y;
  if (!top.empty() && !absl::SimpleAtof(top, &o->top_y)) return "--top_y must be a number";
  if (!ParseOverlays(Flags().overlay_ray, RenderOverlay::Kind::kRay, &o->overlays)) {
    return "--overlay_ray must be OX,OY,OZ:DX,DY,DZ[:MAX_DISTANCE][;...]";
  }
  if (!ParseOverlays(Flags().overlay_sweep, RenderOverlay::Kind::kSweep, &o->overlays)) {
    return "--overlay_sweep must be OX,OY,OZ:DX,DY,DZ:DISTANCE:RADIUS[;...]";
  }
  if (!ParseOverlays(Flags().overlay_contacts, RenderOverlay::Kind::kContacts, &o->overlays)) {
    return "--overlay_contacts must be X,Y,Z:RADIUS[;...]";
  }
  o->navmesh = Flags().navmesh;
  o->nav_profile = Flags().profile;
  if (!Flags().render_path.empty()) {
    std::vector<std::string> ends = absl::StrSplit(Flags().render_path, ':');
    if (ends.size() != 2 || !ParsePoint(ends[0], &o->path[0]) ||
        !ParsePoint(ends[1], &o->path[1])) {
      return "--path must be X,Y,Z:X,Y,Z (start and goal, the agent's feet)";
    }
    o->has_path = true;
  }
  o->annotate = !Flags().plain;
  absl::Status valid = ValidateRenderOptions(*o);
  return valid.ok() ? "" : "render: " + std::string(valid.message());
}

// A one-line bar redrawn in place on stderr, at most every 100 ms and at the end.
class ProgressBar {
 public:
  void operator()(uint64_t done, uint64_t total) {
    auto now = std::chrono::steady_clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    constexpr int kWidth = 40;
    int filled = total ? int(kWidth * done / total) : kWidth;
    double s = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r[%s%s] %3d%% %llu/%llu rays %.0f rays/s",
                 std::string(filled, '#').c_str(), std::string(kWidth - filled, ' ').c_str(),
                 total ? int(100 * done / total) : 100, (unsigned long long)done,
                 (unsigned long long)total, s > 0 ? done / s : 0.0);
    std::fflush(stderr);
    drawn_ = true;
  }
  ~ProgressBar() {
    if (drawn_) std::fputc('\n', stderr);
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_;
  bool drawn_ = false;
};

// Whether `path` can be written: opened for appending (which neither truncates an existing file
// nor leaves a new one behind); the reason when not.
std::string CannotWrite(const std::string& path) {
  const bool existed = access(path.c_str(), F_OK) == 0;
  FILE* f = std::fopen(path.c_str(), "ab");
  if (f == nullptr) return std::strerror(errno);
  std::fclose(f);
  if (!existed) std::remove(path.c_str());
  return "";
}

}  // namespace

int RunRender(Client& client) {
  RenderOptions o;
  if (std::string error = OptionsFromFlags(&o); !error.empty()) return Usage(error);
  const std::string out = Flags().out;
  if (out.empty()) return Usage("render needs --out=FILE.png");
  // Before any ray is cast: a picture that cannot be saved is not worth the server's time.
  if (std::string why = CannotWrite(out); !why.empty()) {
    std::fprintf(stderr, "voxcol: render: cannot write --out=%s: %s\n", out.c_str(), why.c_str());
    return kExitUsage;
  }
  RenderStats stats;
  absl::Status s;
  {
    ProgressBar bar;
    RenderProgressFn progress;
    if (isatty(STDERR_FILENO)) progress = [&bar](uint64_t d, uint64_t t) { bar(d, t); };
    s = Render(client, o, out, progress, &stats);
  }
  if (!s.ok()) {  // unreachable, a deadline, or the server's error: reported as for every call
    return Fail("render", grpc::Status(grpc::StatusCode(s.code()), std::string(s.message())));
  }
  double rate = stats.seconds > 0 ? stats.rays / stats.seconds : 0;
  double terrain = 100.0 * stats.terrain_pixels / (double(o.width) * o.height);
  if (Flags().json) {
    std::printf(
        "{\"out\":\"%s\",\"width\":%d,\"height\":%d,\"rays\":%llu,\"water_rays\":%llu,"
        "\"batches\":%llu,\"retried_batches\":%llu,\"seconds\":%.3f,\"rays_per_second\":%.0f,"
        "\"version\":%llu,\"terrain_percent\":%.2f,\"scale_bar_units\":%g,"
        "\"scale_bar_pixels\":%d}\n",
        out.c_str(), o.width, o.height, (unsigned long long)stats.rays,
        (unsigned long long)stats.water_rays, (unsigned long long)stats.batches,
        (unsigned long long)stats.retried_batches, stats.seconds, rate,
        (unsigned long long)stats.version, terrain, double(stats.scale_bar_units),
        stats.scale_bar_pixels);
  } else {
    std::printf("wrote %s: %dx%d %s, terrain on %.1f%% of pixels, world version %llu\n",
                out.c_str(), o.width, o.height,
                o.mode == RenderMode::kTopDown ? "top-down" : "perspective", terrain,
                (unsigned long long)stats.version);
    std::printf("%llu rays (%llu under water) in %llu batches, %.2f s: %.0f rays/s\n",
                (unsigned long long)stats.rays, (unsigned long long)stats.water_rays,
                (unsigned long long)stats.batches, stats.seconds, rate);
    if (stats.scale_bar_pixels > 0) {
      std::printf("scale bar %g world units = %d pixels%s\n", double(stats.scale_bar_units),
                  stats.scale_bar_pixels,
                  o.mode == RenderMode::kTopDown ? "" : " (at the look-at distance)");
    }
  }
  return kExitOk;
}

}  // namespace voxcol::client
