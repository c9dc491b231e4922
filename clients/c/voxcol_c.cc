// The C ABI (voxcol_c.h) over the C++ SDK. No C++ exception crosses the ABI: every entry point
// catches and answers INTERNAL with the exception's message.
#include "clients/c/voxcol_c.h"

#include <exception>
#include <memory>
#include <string>

#include "client/query_batcher.h"
#include "client/voxcol_client.h"

struct voxcol_client {
  std::unique_ptr<voxcol::client::Client> client;
  std::unique_ptr<voxcol::client::QueryBatcher> batcher;
  std::chrono::milliseconds timeout{10000};
};

namespace {

namespace v1 = voxcol::v1;

constexpr size_t kMaxRaysPerCall = 65536;

thread_local std::string last_error;

voxcol_code Fail(voxcol_code code, std::string message) {
  last_error = std::move(message);
  return code;
}

voxcol_code FromStatus(const grpc::Status& status) {
  if (status.ok()) return VOXCOL_OK;
  return Fail(static_cast<voxcol_code>(status.error_code()), status.error_message());
}

// Runs `body` and turns an escaping exception into INTERNAL: the ABI has no exceptions.
template <typename Body>
voxcol_code Guard(Body body) {
  last_error.clear();
  try {
    return body();
  } catch (const std::exception& e) {
    return Fail(VOXCOL_INTERNAL, std::string("voxcol_c: ") + e.what());
  } catch (...) {
    return Fail(VOXCOL_INTERNAL, "voxcol_c: unknown exception");
  }
}

v1::Vec3 ToProto(const voxcol_vec3& v) {
  v1::Vec3 out;
  out.set_x(v.x);
  out.set_y(v.y);
  out.set_z(v.z);
  return out;
}

voxcol_vec3 FromProto(const v1::Vec3& v) { return {v.x(), v.y(), v.z()}; }

void FillHit(const v1::RaycastResponse& response, voxcol_ray_hit* hit) {
  *hit = voxcol_ray_hit{};
  hit->hit = response.hit() ? 1 : 0;
  hit->started_inside = response.started_inside() ? 1 : 0;
  if (!response.hit()) return;
  const v1::RaycastHit& first = response.first();
  hit->distance = first.distance();
  hit->position = FromProto(first.position());
  hit->normal = FromProto(first.normal());
  hit->material = first.material();
  hit->voxel = {first.voxel().x(), first.voxel().y(), first.voxel().z()};
}

// Ray i of packed results (RaycastArrayResults), as the server documents the arrays.
void FillHit(const v1::RaycastArrayResults& results, size_t i, voxcol_ray_hit* hit) {
  *hit = voxcol_ray_hit{};
  hit->code = results.codes(int(i));
  if (hit->code != 0) return;
  const uint32_t flags = results.flags(int(i));
  hit->hit = (flags & v1::RAYCAST_FLAG_HIT) != 0;
  hit->started_inside = (flags & v1::RAYCAST_FLAG_STARTED_INSIDE) != 0;
  if (!hit->hit) return;
  const int j = int(3 * i);
  hit->distance = results.distances(int(i));
  hit->position = {results.positions(j), results.positions(j + 1), results.positions(j + 2)};
  hit->normal = {results.normals(j), results.normals(j + 1), results.normals(j + 2)};
  hit->material = results.materials(int(i));
  hit->voxel = {results.voxels(j), results.voxels(j + 1), results.voxels(j + 2)};
}

bool ResultsCover(const v1::RaycastArrayResults& r, size_t count) {
  const int n = int(count);
  return r.codes_size() == n && r.flags_size() == n && r.distances_size() == n &&
         r.positions_size() == 3 * n && r.normals_size() == 3 * n && r.materials_size() == n &&
         r.voxels_size() == 3 * n;
}

}  // namespace

extern "C" {

int32_t voxcol_abi_version(void) { return VOXCOL_C_ABI_VERSION; }

const char* voxcol_last_error(void) { return last_error.c_str(); }

void voxcol_options_init(voxcol_options* options) {
  if (options == nullptr) return;
  *options = voxcol_options{};
  options->struct_size = sizeof(voxcol_options);
}

voxcol_code voxcol_connect(const voxcol_options* options, voxcol_client** out) {
  return Guard([&] {
    if (out == nullptr) return Fail(VOXCOL_INVALID_ARGUMENT, "out: must not be NULL");
    *out = nullptr;
    if (options == nullptr) return Fail(VOXCOL_INVALID_ARGUMENT, "options: must not be NULL");
    if (options->struct_size < sizeof(voxcol_options)) {
      return Fail(VOXCOL_INVALID_ARGUMENT,
                  "options.struct_size: " + std::to_string(options->struct_size) +
                      " is smaller than this library's voxcol_options (" +
                      std::to_string(sizeof(voxcol_options)) + "); call voxcol_options_init");
    }
    if (options->target == nullptr || options->target[0] == '\0') {
      return Fail(VOXCOL_INVALID_ARGUMENT, "options.target: must name the server, e.g. host:port");
    }
    voxcol::client::ChannelSecurity security;
    security.tls = options->tls != 0 || options->ca_pem != nullptr;
    if (options->ca_pem != nullptr) security.ca_pem = options->ca_pem;
    if (options->server_name != nullptr) security.server_name = options->server_name;
    if (options->token != nullptr) security.token = options->token;
    auto handle = std::make_unique<voxcol_client>();
    if (options->timeout_ms > 0) handle->timeout = std::chrono::milliseconds(options->timeout_ms);
    handle->client =
        std::make_unique<voxcol::client::Client>(options->target, handle->timeout, security);
    if (options->world != nullptr) handle->client->SetWorld(options->world);
    v1::GetWorldInfoResponse info;
    if (voxcol_code code = FromStatus(handle->client->GetWorldInfo(&info)); code != VOXCOL_OK) {
      return Fail(code,
                  std::string("cannot use the server at ") + options->target + ": " + last_error);
    }
    voxcol::client::QueryBatcherOptions batcher_options;
    batcher_options.batch_timeout = handle->timeout;
    handle->batcher =
        std::make_unique<voxcol::client::QueryBatcher>(*handle->client, batcher_options);
    *out = handle.release();
    return VOXCOL_OK;
  });
}

void voxcol_close(voxcol_client* client) {
  if (client == nullptr) return;
  Guard([&] {
    client->batcher->Close();
    delete client;
    return VOXCOL_OK;
  });
}

voxcol_code voxcol_world_info(voxcol_client* client, uint64_t* version, voxcol_vec3* bounds_min,
                              voxcol_vec3* bounds_max) {
  return Guard([&] {
    if (client == nullptr) return Fail(VOXCOL_INVALID_ARGUMENT, "client: must not be NULL");
    v1::GetWorldInfoResponse info;
    if (voxcol_code code = FromStatus(client->client->GetWorldInfo(&info)); code != VOXCOL_OK) {
      return code;
    }
    if (version != nullptr) *version = info.version();
    if (bounds_min != nullptr) *bounds_min = FromProto(info.bounds().min());
    if (bounds_max != nullptr) *bounds_max = FromProto(info.bounds().max());
    return VOXCOL_OK;
  });
}

voxcol_code voxcol_raycast(voxcol_client* client, const voxcol_ray* ray, voxcol_ray_hit* hit,
                           uint64_t* version) {
  return Guard([&] {
    if (client == nullptr) return Fail(VOXCOL_INVALID_ARGUMENT, "client: must not be NULL");
    if (ray == nullptr) return Fail(VOXCOL_INVALID_ARGUMENT, "ray: must not be NULL");
    if (hit == nullptr) return Fail(VOXCOL_INVALID_ARGUMENT, "hit: must not be NULL");
    v1::RaycastRequest request;
    *request.mutable_origin() = ToProto(ray->origin);
    *request.mutable_direction() = ToProto(ray->direction);
    request.set_max_distance(ray->max_distance);
    v1::RaycastResponse response;
    if (voxcol_code code = FromStatus(client->client->Raycast(request, &response));
        code != VOXCOL_OK) {
      return code;
    }
    FillHit(response, hit);
    if (version != nullptr) *version = response.version();
    return VOXCOL_OK;
  });
}

voxcol_code voxcol_raycasts(voxcol_client* client, const voxcol_ray* rays, size_t count,
                            uint64_t min_version, voxcol_ray_hit* hits, uint64_t* version) {
  return Guard([&] {
    if (client == nullptr) return Fail(VOXCOL_INVALID_ARGUMENT, "client: must not be NULL");
    if (count == 0) return VOXCOL_OK;
    if (rays == nullptr) return Fail(VOXCOL_INVALID_ARGUMENT, "rays: must not be NULL");
    if (hits == nullptr) return Fail(VOXCOL_INVALID_ARGUMENT, "hits: must not be NULL");
    if (count > kMaxRaysPerCall) {
      return Fail(VOXCOL_INVALID_ARGUMENT, "count: " + std::to_string(count) + " rays, at most " +
                                               std::to_string(kMaxRaysPerCall) + " per call");
    }
    v1::RaycastArrays arrays;
    arrays.mutable_origins()->Reserve(int(3 * count));
    arrays.mutable_directions()->Reserve(int(3 * count));
    arrays.mutable_max_distances()->Reserve(int(count));
    for (size_t i = 0; i < count; ++i) {
      const voxcol_ray& ray = rays[i];
      for (float f : {ray.origin.x, ray.origin.y, ray.origin.z}) arrays.add_origins(f);
      for (float f : {ray.direction.x, ray.direction.y, ray.direction.z}) arrays.add_directions(f);
      arrays.add_max_distances(ray.max_distance);
    }
    voxcol::client::BatchAnswer answer =
        client->batcher->Raycasts(std::move(arrays), min_version).get();
    if (voxcol_code code = FromStatus(answer.status); code != VOXCOL_OK) return code;
    if (!ResultsCover(answer.raycasts, count)) {
      return Fail(VOXCOL_INTERNAL, "the server's answer does not have one result per ray");
    }
    for (size_t i = 0; i < count; ++i) FillHit(answer.raycasts, i, &hits[i]);
    if (version != nullptr) *version = answer.version;
    if (!answer.raycasts.message().empty()) last_error = answer.raycasts.message();
    return VOXCOL_OK;
  });
}

voxcol_code voxcol_fill_ball(voxcol_client* client, voxcol_vec3 center, float radius,
                             uint32_t material, uint64_t* version) {
  return Guard([&] {
    if (client == nullptr) return Fail(VOXCOL_INVALID_ARGUMENT, "client: must not be NULL");
    v1::FillBallRequest request;
    *request.mutable_center() = ToProto(center);
    request.set_radius(radius);
    request.set_material(material);
    v1::EditAck ack;
    if (voxcol_code code = FromStatus(client->client->FillBall(request, &ack)); code != VOXCOL_OK) {
      return code;
    }
    if (version != nullptr) *version = ack.version();
    return VOXCOL_OK;
  });
}

}  // extern "C"
