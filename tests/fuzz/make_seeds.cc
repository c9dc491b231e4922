// Writes the committed seed corpora: `voxcol_fuzz_seeds DIR` fills DIR/<target>/ with a few small
// valid inputs per target (scripts/fuzz.sh --seed regenerates tests/fuzz/corpus). Deterministic.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/store/chunk_codec.h"
#include "core/store/feed_codec.h"
#include "core/store/keys.h"
#include "core/store/region_file.h"
#include "voxcol/v1/admin_service.pb.h"
#include "voxcol/v1/edit_service.pb.h"
#include "voxcol/v1/query_service.pb.h"

namespace fs = std::filesystem;
using namespace voxcol;

namespace {

fs::path g_root;

void Write(const std::string& target, const std::string& name, char selector,
           const std::string& bytes) {
  fs::create_directories(g_root / target);
  std::ofstream out(g_root / target / name, std::ios::binary);
  out.put(selector);
  out << bytes;
}

void SetVec(v1::Vec3* v, float x, float y, float z) {
  v->set_x(x);
  v->set_y(y);
  v->set_z(z);
}

void SetBox(v1::VoxelBox* box, int x0, int y0, int z0, int x1, int y1, int z1) {
  box->mutable_min()->set_x(x0);
  box->mutable_min()->set_y(y0);
  box->mutable_min()->set_z(z0);
  box->mutable_max()->set_x(x1);
  box->mutable_max()->set_y(y1);
  box->mutable_max()->set_z(z1);
}

v1::PosedShape Shape(int kind) {
  v1::PosedShape posed;
  SetVec(posed.mutable_position(), 1.5f, -4.0f, 2.0f);
  v1::Shape* shape = posed.mutable_shape();
  if (kind == 0) shape->mutable_sphere()->set_radius(1.5f);
  if (kind == 1) {
    shape->mutable_capsule()->set_half_height(1);
    shape->mutable_capsule()->set_radius(0.5f);
    posed.mutable_rotation()->set_w(0.7071068f);
    posed.mutable_rotation()->set_x(0.7071068f);
  }
  if (kind == 2) {
    SetVec(shape->mutable_box()->mutable_half_extents(), 1, 0.5f, 2);
    shape->mutable_box()->set_convex_radius(0.1f);
  }
  if (kind == 3) {
    for (int i = 0; i < 6; ++i)
      SetVec(shape->mutable_hull()->add_points(), i % 2 ? 1.f : -1.f, float(i / 2) - 1, 0.5f * i);
  }
  return posed;
}

void RequestSeeds() {
  const std::string t = "request";
  v1::RaycastRequest ray;
  SetVec(ray.mutable_origin(), 0, 10, 0);
  SetVec(ray.mutable_direction(), 0.1f, -1, 0);
  ray.set_max_distance(40);
  ray.set_mode(v1::RAYCAST_MODE_SMOOTH);
  Write(t, "raycast", 0, ray.SerializeAsString());
  Write(t, "raycast-split", char(0x80), ray.SerializeAsString());
  for (int kind = 0; kind < 4; ++kind) {
    v1::SweepRequest sweep;
    *sweep.mutable_shape() = Shape(kind);
    SetVec(sweep.mutable_direction(), 0, -1, 0.2f);
    sweep.set_distance(20);
    sweep.set_collection(v1::HitCollection(kind));
    Write(t, "sweep-" + std::to_string(kind), 1, sweep.SerializeAsString());
    v1::OverlapRequest overlap;
    *overlap.mutable_shape() = Shape(kind);
    overlap.set_include_penetration(true);
    Write(t, "overlap-" + std::to_string(kind), 2, overlap.SerializeAsString());
    v1::ContactsRequest contacts;
    *contacts.mutable_shape() = Shape(kind);
    contacts.set_margin(0.2f);
    Write(t, "contacts-" + std::to_string(kind), 3, contacts.SerializeAsString());
  }
  v1::ProbeRequest probe;
  SetVec(probe.mutable_box()->mutable_center(), 0, -5, 0);
  SetVec(probe.mutable_box()->mutable_half_extents(), 2, 2, 2);
  probe.set_include_voxels(true);
  Write(t, "probe", 4, probe.SerializeAsString());
  v1::MoveCharactersRequest moves;
  v1::CharacterMove* move = moves.add_moves();
  move->set_radius(0.5f);
  move->set_half_height(0.9f);
  SetVec(move->mutable_position(), 0, 0, 0);
  SetVec(move->mutable_displacement(), 0.3f, -0.2f, 0);
  move->mutable_settings()->set_step_offset(0.5f);
  Write(t, "move-characters", 5, moves.SerializeAsString());

  v1::ApplyEditsRequest edits;
  v1::FillBallRequest* ball = edits.add_primitives()->mutable_fill_ball();
  SetVec(ball->mutable_center(), 2, -5, 1);
  ball->set_radius(3);
  ball->set_material(3);
  v1::FillBlock* block = edits.add_primitives()->mutable_fill_block();
  SetVec(block->mutable_center(), -3, 0, 4);
  SetVec(block->mutable_size(), 3, 2, 5);
  block->mutable_rotation()->set_w(1);
  v1::FillCylinder* cyl = edits.add_primitives()->mutable_fill_cylinder();
  SetVec(cyl->mutable_center(), 0, 2, 0);
  cyl->set_height(4);
  cyl->set_radius(2);
  v1::FillWedge* wedge = edits.add_primitives()->mutable_fill_wedge();
  SetVec(wedge->mutable_center(), 5, 5, 5);
  SetVec(wedge->mutable_size(), 2, 3, 4);
  SetBox(edits.add_primitives()->mutable_fill_region()->mutable_region(), 0, 0, 0, 4, 2, 3);
  v1::ReplaceMaterial* replace = edits.add_primitives()->mutable_replace_material();
  SetBox(replace->mutable_region(), -8, -8, -8, 8, 0, 8);
  replace->set_source(2);
  replace->set_target(5);
  SetBox(edits.add_primitives()->mutable_clear()->mutable_region(), -2, -2, -2, 2, 2, 2);
  v1::VoxelData* raw = edits.add_primitives()->mutable_write_voxels();
  SetBox(raw->mutable_region(), 1, 1, 1, 3, 2, 2);
  raw->set_materials(std::string("\x02\x03", 2));
  raw->set_occupancies(std::string("\xff\x80", 2));
  edits.set_idempotency_key("seed-key");
  edits.set_expected_version(0);
  Write(t, "apply-edits", 8, edits.SerializeAsString());
  v1::FillBallRequest fill = *ball;
  fill.set_mode(v1::EditMode(1));
  Write(t, "fill-ball", 7, fill.SerializeAsString());
  v1::EditStreamRequest stream;
  *stream.mutable_edits() = edits;
  Write(t, "edit-stream", 9, stream.SerializeAsString());
  v1::QueryBatchRequest batch;
  *batch.add_queries()->mutable_raycast() = ray;
  *batch.add_queries()->mutable_move_characters() = moves;
  *batch.mutable_edits() = edits;
  Write(t, "query-batch", 6, batch.SerializeAsString());
  v1::ReadVoxelsRequest read;
  SetBox(read.mutable_region(), -4, -4, -4, 4, 4, 4);
  Write(t, "read-voxels", 10, read.SerializeAsString());
  v1::WriteVoxelsRequest write;
  *write.mutable_voxels() = *raw;
  Write(t, "write-voxels", 11, write.SerializeAsString());
  v1::SubscribeRequest subscribe;
  SetBox(subscribe.mutable_region(), -16, -16, -16, 16, 16, 16);
  subscribe.set_from_version(3);
  Write(t, "subscribe", 12, subscribe.SerializeAsString());
  v1::ExportRegionRequest export_request;
  SetBox(export_request.mutable_box(), 0, 0, 0, 2, 2, 2);
  Write(t, "export-region", 13, export_request.SerializeAsString());
  store::Region region;
  region.box = {{0, 0, 0}, {2, 1, 2}};
  region.materials = {2, 3, 0, 1};
  region.occupancy = {255, 128, 0, 255};
  v1::ImportRegionRequest import_request;
  import_request.set_region(store::EncodeRegion(region));
  Write(t, "import-region", 14, import_request.SerializeAsString());
  v1::QueryRequest query;
  *query.mutable_sweep()->mutable_shape() = Shape(2);
  Write(t, "query", 15, query.SerializeAsString());
}

void DecodeSeeds() {
  const std::string t = "decode";
  store::Region region;
  region.box = {{-3, -7, 2}, {1, -5, 5}};
  for (int i = 0; i < 24; ++i) {
    region.materials.push_back(uint8_t(i % 6));
    region.occupancy.push_back(uint8_t(i * 11));
  }
  Write(t, "region", 0, store::EncodeRegion(region));
  Chunk chunk;
  for (int i = 0; i < kChunkVoxels; ++i) chunk.voxels[i] = Voxel{uint8_t(2 + i % 3), uint8_t(i)};
  Write(t, "chunk-planar", 1, store::EncodeChunk(chunk));
  Write(t, "chunk-uniform", 1, store::EncodeChunk(*UniformChunk(Voxel{kMaterialRock, 255})));
  ChangeEntry entry;
  entry.version = 7;
  entry.changes.push_back({ChunkKey{0, -1, 0}, IntBox{{1, -6, 2}, {3, -5, 4}}});
  VoxelArrays voxels;
  voxels.region = entry.changes[0].changed_voxels;
  voxels.materials = {2, 2, 3, 0};
  voxels.occupancies = {255, 200, 100, 0};
  entry.voxels.push_back(voxels);
  Write(t, "feed-entry", 2, store::EncodeChangeEntry(entry));
  Write(t, "key-chunk", 3, store::EncodeKey(store::kChunkPrefix, Int3{-1, 2, -3}));
  Write(t, "key-version", 3, store::EncodeVersion(123456789));
  Write(t, "key-ack", 3, store::EncodeAck(0x1234567890abcdefULL, 42, 3));
}

// FuzzedDataProvider inputs: random bytes of a few lengths, a fixed seed.
void QuerySeeds() {
  std::mt19937 rng(20);
  for (int i = 0; i < 12; ++i) {
    std::string bytes(64 + 48 * i, '\0');
    for (char& c : bytes) c = char(rng());
    Write("query", "random-" + std::to_string(i), char(i), bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  RequestSeeds();
  DecodeSeeds();
  QuerySeeds();
  return 0;
}
