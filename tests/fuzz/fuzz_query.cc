// Fuzz target: every query kind with arbitrary shapes, poses, rays and settings against small
// analytic worlds (voxel sizes 1 and 0.5), through the functions the server runs for each RPC
// (server/exec/query_ops.h: decode, core validation, the core query, encoding).
//
// The input is read with FuzzedDataProvider: each float is either one of a table of hard values
// (0, -0, tiny, huge, infinities, NaN, values on chunk seams and the world's faces) or a value in
// a range around the world, so that most requests pass validation and reach the geometry.
// Besides no crash and no sanitizer report, every float of every answer must be finite.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "server/exec/query_ops.h"
#include "server/exec/service_limits.h"
#include "tests/fuzz/fuzz_world.h"

namespace voxcol::fuzz {
namespace {

struct Engine {
  explicit Engine(float voxel_size)
      : world(MakeFuzzWorld(voxel_size)),
        index(*world),
        cache(*world, size_t(32) << 20),
        engine{index, cache} {}
  std::unique_ptr<World> world;
  BroadphaseIndex index;
  ChunkCollisionCache cache;
  server::QueryEngine engine;
};

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kHard[] = {0.0f,   -0.0f,   1.0f,    -1.0f,  0.5f,    1e-7f,   -1e-7f,
                           1e-38f, 1e-45f,  1e30f,   -1e30f, 3.4e38f, kInf,    -kInf,
                           NAN,    8.0f,    -8.0f,   16.0f,  -16.0f,  15.999f, -16.001f,
                           64.0f,  64.001f, 4096.0f, 0.02f,  90.0f};

class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data, size) {}

  // Mostly in [-range, range]; sometimes a hard value or raw bits.
  float F(float range) {
    uint8_t mode = p_.ConsumeIntegral<uint8_t>();
    if (mode < 40) return kHard[mode % (sizeof(kHard) / sizeof(kHard[0]))];
    if (mode < 44) {
      uint32_t bits = p_.ConsumeIntegral<uint32_t>();
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    return p_.ConsumeFloatingPointInRange(-range, range);
  }
  float Positive(float range) { return std::fabs(F(range)); }
  bool B() { return p_.ConsumeBool(); }
  uint32_t U(uint32_t max) { return p_.ConsumeIntegralInRange<uint32_t>(0, max); }

  void Vec(float range, v1::Vec3* out) {
    out->set_x(F(range));
    out->set_y(F(range));
    out->set_z(F(range));
  }
  // A unit quaternion most of the time (from four values), sometimes anything or unset.
  void Rotation(v1::PosedShape* posed) {
    uint8_t mode = p_.ConsumeIntegral<uint8_t>();
    if (mode < 64) return;
    float q[4] = {F(1), F(1), F(1), F(1)};
    if (mode >= 96) {
      double n = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] + double(q[2]) * q[2] +
                           double(q[3]) * q[3]);
      if (n > 1e-6 && std::isfinite(n))
        for (float& c : q) c = float(c / n);
    }
    v1::Quat* r = posed->mutable_rotation();
    r->set_w(q[0]);
    r->set_x(q[1]);
    r->set_y(q[2]);
    r->set_z(q[3]);
  }
  void Shape(float world_half, v1::PosedShape* posed) {
    v1::Shape* shape = posed->mutable_shape();
    switch (U(4)) {
      case 0:
        shape->mutable_sphere()->set_radius(Positive(6));
        break;
      case 1: {
        v1::CapsuleShape* c = shape->mutable_capsule();
        c->set_half_height(Positive(6));
        c->set_radius(Positive(4));
        break;
      }
      case 2: {
        v1::BoxShape* b = shape->mutable_box();
        b->mutable_half_extents()->set_x(Positive(6));
        b->mutable_half_extents()->set_y(Positive(6));
        b->mutable_half_extents()->set_z(Positive(6));
        b->set_convex_radius(B() ? 0.0f : Positive(1));
        break;
      }
      case 3: {
        v1::ConvexHullShape* h = shape->mutable_hull();
        uint32_t n = U(70);
        for (uint32_t i = 0; i < n; ++i) Vec(4, h->add_points());
        h->set_convex_radius(B() ? 0.0f : Positive(1));
        break;
      }
      default:
        break;  // no shape
    }
    Vec(world_half * 1.1f, posed->mutable_position());
    Rotation(posed);
  }
  FuzzedDataProvider& provider() { return p_; }

 private:
  FuzzedDataProvider p_;
};

// Every float in `message` (recursively) is finite.
void CheckFinite(const google::protobuf::Message& message) {
  const google::protobuf::Reflection* r = message.GetReflection();
  const google::protobuf::Descriptor* d = message.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_FLOAT) {
      int n = f->is_repeated() ? r->FieldSize(message, f) : 1;
      for (int j = 0; j < n; ++j) {
        float v = f->is_repeated() ? r->GetRepeatedFloat(message, f, j) : r->GetFloat(message, f);
        if (!std::isfinite(v)) {
          std::fprintf(stderr, "non-finite %s in %s\n", f->full_name().c_str(),
                       message.ShortDebugString().c_str());
          std::abort();
        }
      }
    } else if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int j = 0; j < r->FieldSize(message, f); ++j)
          CheckFinite(r->GetRepeatedMessage(message, f, j));
      } else if (r->HasField(message, f)) {
        CheckFinite(r->GetMessage(message, f));
      }
    }
  }
}

// With VOXCOL_FUZZ_PRINT set, every request is printed before it runs (to read a crash input).
void Print(const google::protobuf::Message& request) {
  static const bool print = std::getenv("VOXCOL_FUZZ_PRINT") != nullptr;
  if (print)
    std::fprintf(stderr, "%s: %s\n", request.GetTypeName().c_str(),
                 request.ShortDebugString().c_str());
}

void RunOne(Input& in, const Engine& e, float half) {
  server::ServiceLimits limits;
  limits.max_characters_per_request = 4;
  const server::QueryEngine& engine = e.engine;
  switch (in.U(6)) {
    case 0: {
      v1::RaycastRequest request;
      in.Vec(half * 1.1f, request.mutable_origin());
      in.Vec(1, request.mutable_direction());
      request.set_max_distance(in.Positive(80));
      request.set_water_mode(v1::WaterMode(in.U(3)));
      request.set_mode(v1::RaycastMode(in.U(3)));
      request.set_all_hits(in.B());
      request.set_include_stats(in.B());
      v1::RaycastResponse response;
      Print(request);
      if (server::RunRaycast(engine, limits, request, &response).ok()) CheckFinite(response);
      break;
    }
    case 1: {
      v1::SweepRequest request;
      in.Shape(half, request.mutable_shape());
      in.Vec(1, request.mutable_direction());
      request.set_distance(in.Positive(60));
      request.set_collection(v1::HitCollection(in.U(4)));
      v1::SweepResponse response;
      Print(request);
      if (server::RunSweep(engine, limits, request, &response).ok()) CheckFinite(response);
      break;
    }
    case 2: {
      v1::OverlapRequest request;
      in.Shape(half, request.mutable_shape());
      request.set_include_penetration(in.B());
      v1::OverlapResponse response;
      Print(request);
      if (server::RunOverlap(engine, limits, request, &response).ok()) CheckFinite(response);
      break;
    }
    case 3: {
      v1::ContactsRequest request;
      in.Shape(half, request.mutable_shape());
      request.set_margin(in.B() ? 0.0f : in.Positive(2));
      request.set_skip_water(in.B());
      v1::ContactsResponse response;
      Print(request);
      if (server::RunContacts(engine, limits, request, &response).ok()) CheckFinite(response);
      break;
    }
    case 4: {
      v1::ProbeRequest request;
      if (in.B()) {
        in.Vec(half * 1.1f, request.mutable_box()->mutable_center());
        in.Vec(8, request.mutable_box()->mutable_half_extents());
      } else {
        in.Vec(half * 1.1f, request.mutable_sphere()->mutable_center());
        request.mutable_sphere()->set_radius(in.F(8));
      }
      request.set_include_voxels(in.B());
      request.set_max_voxels(in.U(70000));
      v1::ProbeResponse response;
      Print(request);
      if (server::RunProbe(engine, limits, request, &response).ok()) CheckFinite(response);
      break;
    }
    case 5: {
      // Packed raycasts; array lengths are sometimes off, to run the malformed-array checks.
      v1::RaycastArrays request;
      const uint32_t n = in.U(6);
      for (uint32_t i = 0; i < n; ++i) {
        v1::Vec3 origin, direction;
        in.Vec(half * 1.1f, &origin);
        in.Vec(1, &direction);
        for (float c : {origin.x(), origin.y(), origin.z()}) request.add_origins(c);
        for (float c : {direction.x(), direction.y(), direction.z()}) request.add_directions(c);
        if (i == 0 || in.B()) request.add_max_distances(in.Positive(80));
      }
      if (in.U(8) == 0) request.add_origins(in.F(half));
      request.set_water_mode(v1::WaterMode(in.U(3)));
      request.set_mode(v1::RaycastMode(in.U(3)));
      v1::RaycastArrayResults response;
      Print(request);
      if (server::RunRaycastArrays(engine, limits, request, &response).ok()) {
        CheckFinite(response);
      }
      break;
    }
    default: {
      v1::MoveCharactersRequest request;
      uint32_t n = in.U(5);
      for (uint32_t i = 0; i < n; ++i) {
        v1::CharacterMove* move = request.add_moves();
        move->set_radius(in.Positive(3));
        move->set_half_height(in.Positive(3));
        in.Vec(half * 1.1f, move->mutable_position());
        in.Vec(4, move->mutable_displacement());
        if (in.B()) {
          v1::CharacterSettings* s = move->mutable_settings();
          s->set_step_offset(in.Positive(2));
          s->set_slope_limit_degrees(in.F(90));
          s->set_snap_distance(in.Positive(1));
          s->set_max_slide_iterations(in.U(20));
          s->set_skin_width(in.Positive(1));
          s->set_swim_threshold(in.F(1));
        }
      }
      v1::MoveCharactersResponse response;
      Print(request);
      if (server::RunMoveCharacters(engine, limits, request, &response).ok()) CheckFinite(response);
      break;
    }
  }
}

}  // namespace
}  // namespace voxcol::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using voxcol::fuzz::Engine;
  static Engine* engines[2] = {new Engine(1.0f), new Engine(0.5f)};
  voxcol::fuzz::Input in(data, size);
  int which = in.B() ? 1 : 0;
  float half = which ? 8.0f : 16.0f;  // the world spans [-half, half) on each axis
  // Up to 4 queries per input on the same world, so that cached meshes are reused.
  int n = 1 + int(in.U(3));
  for (int i = 0; i < n && in.provider().remaining_bytes() > 0; ++i)
    voxcol::fuzz::RunOne(in, *engines[which], half);
  return 0;
}
