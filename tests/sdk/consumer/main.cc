// The SDK consumer of tests/sdk/consumer_test.sh: a raycast, a Query-stream batch and a tick (edits
// plus a query in one batch) against a running server, each answer checked; exit 0 when all hold.
// Usage: voxcol_consumer HOST:PORT
#include <voxcol/client/query_batcher.h>
#include <voxcol/client/voxcol_client.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace {

int failures = 0;

void Check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

voxcol::v1::RaycastRequest DownRay(float x, float top, float z, float distance) {
  voxcol::v1::RaycastRequest ray;
  ray.mutable_origin()->set_x(x);
  ray.mutable_origin()->set_y(top);
  ray.mutable_origin()->set_z(z);
  ray.mutable_direction()->set_y(-1);
  ray.set_max_distance(distance);
  return ray;
}

// Where the smooth surface crosses the vertical line through the centres of voxel column
// (vx, vz), found from the voxels alone: the mesher's field is the solid occupancy at voxel centres
// (water and air count 0) with iso-level 127.5, linear along the line, so scanning down from the
// top the first crossing lies between the first centre >= 128 and the one above it. NaN when the
// column has no solid. Linear interpolation is off by up to 0.09 voxel where an end is saturated
// (the mesher then uses the slope, docs/design.md), hence the 0.1 voxel tolerance in main(). The
// independent oracle of the raycast.
float SurfaceAbove(voxcol::client::Client& client, const voxcol::v1::GetWorldInfoResponse& info,
                   int vx, int vz) {
  const int min_y = info.voxel_bounds().min().y(), max_y = info.voxel_bounds().max().y();
  voxcol::v1::ReadVoxelsRequest read;
  auto* region = read.mutable_region();
  region->mutable_min()->set_x(vx);
  region->mutable_min()->set_y(min_y);
  region->mutable_min()->set_z(vz);
  region->mutable_max()->set_x(vx + 1);
  region->mutable_max()->set_y(max_y);
  region->mutable_max()->set_z(vz + 1);
  voxcol::v1::ReadVoxelsResponse voxels;
  if (!client.ReadVoxels(read, &voxels).ok()) return std::nanf("");
  auto solid = [&](int y) -> float {
    if (y >= max_y) return 0;
    bool is_solid = static_cast<unsigned char>(voxels.voxels().materials()[y - min_y]) >= 2;
    return is_solid ? static_cast<unsigned char>(voxels.voxels().occupancies()[y - min_y]) : 0;
  };
  for (int y = max_y - 1; y >= min_y; --y) {
    if (solid(y) >= 128) {
      float t = (solid(y) - 127.5f) / (solid(y) - solid(y + 1));
      return (y + 0.5f + t) * info.voxel_size();
    }
  }
  return std::nanf("");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
    return 2;
  }
  voxcol::client::Client client(argv[1]);
  voxcol::v1::GetWorldInfoResponse info;
  grpc::Status status = client.GetWorldInfo(&info);
  Check(status.ok(), "GetWorldInfo: " + status.error_message());
  if (!status.ok()) return 1;
  const auto& bounds = info.bounds();
  // The ray runs through the centres of one voxel column (see SurfaceAbove).
  const float size = info.voxel_size();
  const int vx = static_cast<int>(std::floor(0.5f * (bounds.min().x() + bounds.max().x()) / size));
  const int vz = static_cast<int>(std::floor(0.5f * (bounds.min().z() + bounds.max().z()) / size));
  const float x = (vx + 0.5f) * size, z = (vz + 0.5f) * size;
  const float top = bounds.max().y() - 0.5f;
  const float height = bounds.max().y() - bounds.min().y() - 1;

  // 1. A unary raycast straight down, checked against the voxels of its column.
  voxcol::v1::RaycastResponse unary;
  status = client.Raycast(DownRay(x, top, z, height), &unary);
  Check(status.ok() && unary.hit(), "unary raycast hits the terrain");
  const float hit_y = unary.first().position().y();
  const float expected_y = SurfaceAbove(client, info, vx, vz);
  std::printf("raycast hit y %.4f, surface from the voxels y %.4f, version %llu\n", hit_y,
              expected_y, static_cast<unsigned long long>(unary.version()));
  Check(std::fabs(hit_y - expected_y) < 0.1f * size, "the hit lies on the voxels' iso-surface");

  // 2. One Query-stream batch: the same ray (same answer), a probe at the hit, a bad query.
  voxcol::client::QueryBatcherOptions options;
  options.batch_timeout = std::chrono::seconds(5);
  voxcol::client::QueryBatcher batcher(client, options);
  std::future<voxcol::client::QueryAnswer> ray = batcher.Raycast(DownRay(x, top, z, height));
  voxcol::v1::ProbeRequest probe;
  *probe.mutable_sphere()->mutable_center() = unary.first().position();
  probe.mutable_sphere()->set_radius(1);
  std::future<voxcol::client::QueryAnswer> probed = batcher.Probe(probe);
  std::future<voxcol::client::QueryAnswer> bad = batcher.Raycast(DownRay(x, top, z, -1));
  Check(batcher.Flush(unary.version()) == 3, "Flush sends 3 queries");
  voxcol::client::QueryAnswer ray_answer = ray.get();
  Check(ray_answer.status.ok() && ray_answer.result.raycast().hit() &&
            ray_answer.result.raycast().first().position().y() == hit_y,
        "batched raycast equals the unary one");
  voxcol::client::QueryAnswer probe_answer = probed.get();
  Check(probe_answer.status.ok() && probe_answer.result.probe().may_touch_solid(),
        "batched probe at the hit may touch solid");
  voxcol::client::QueryAnswer bad_answer = bad.get();
  Check(bad_answer.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
            bad_answer.status.error_message().find("max_distance") != std::string::npos,
        "a bad query fails alone, naming max_distance: " + bad_answer.status.error_message());

  // 3. A tick: carve a ball at the hit and cast the ray again in the same batch.
  voxcol::v1::ApplyEditsRequest edits;
  auto* ball = edits.add_primitives()->mutable_fill_ball();
  *ball->mutable_center() = unary.first().position();
  ball->set_radius(3);
  ball->set_material(0);
  std::future<voxcol::client::QueryAnswer> after = batcher.Raycast(DownRay(x, top, z, height));
  voxcol::client::BatchAnswer tick = batcher.FlushTick(edits, unary.version()).get();
  voxcol::client::QueryAnswer after_answer = after.get();
  const auto& after_hit = after_answer.result.raycast();
  std::printf("tick version %llu, raycast after the carve y %.3f\n",
              static_cast<unsigned long long>(tick.version),
              after_hit.hit() ? after_hit.first().position().y() : -1.0);
  Check(tick.status.ok() && tick.has_edit_ack && tick.edit_ack.version() > unary.version() &&
            after_answer.version == tick.edit_ack.version(),
        "the tick's query reads the version its edits produced");
  Check(!after_hit.hit() || after_hit.first().position().y() < hit_y - 2,
        "the carved ball lowers the raycast hit by more than 2");
  status = batcher.Close();
  Check(status.ok(), "Close: " + status.error_message());
  std::printf("%s\n", failures == 0 ? "consumer: all checks passed" : "consumer: FAILED");
  return failures == 0 ? 0 : 1;
}
