#include "client/cli_edits.h"

#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/cli_common.h"
#include "client/cli_flags.h"

namespace voxcol::client {
namespace {

bool ParseMode(v1::EditMode* out) {
  const std::string mode = Flags().mode;
  if (mode.empty() || mode == "add") {  // --mode is shared with raycast, whose default is smooth
    *out = v1::EDIT_MODE_ADD;
  } else if (mode == "subtract") {
    *out = v1::EDIT_MODE_SUBTRACT;
  } else if (mode == "set") {
    *out = v1::EDIT_MODE_SET;
  } else {
    return false;
  }
  return true;
}

int PrintAck(const char* command, const grpc::Status& status, const v1::EditAck& ack) {
  if (int done = FailedOrJson(command, status, ack); done != kPrintSummary) return done;
  std::printf("ok   world version %llu, %u chunks changed%s\n", (unsigned long long)ack.version(),
              ack.changed_chunks(),
              ack.replayed() ? " (replayed: this key was already applied)" : "");
  return kExitOk;
}

int SendBatch(Client& client, const char* command, v1::ApplyEditsRequest request) {
  if (!Flags().idempotency_key.empty()) request.set_idempotency_key(Flags().idempotency_key);
  if (Flags().expected_version >= 0) request.set_expected_version(Flags().expected_version);
  v1::EditAck ack;
  grpc::Status status = client.ApplyEdits(request, &ack);
  return PrintAck(command, status, ack);
}

// --min and --max into a region; returns an error message for Usage, empty on success.
std::string ParseRegion(const char* command, v1::VoxelBox* out) {
  if (Flags().min.empty() || Flags().max.empty()) {
    return absl::StrCat(command,
                        " needs --min=X,Y,Z and --max=X,Y,Z (voxel indices, max exclusive)");
  }
  if (!ParseInt3(Flags().min, out->mutable_min())) return "--min must be X,Y,Z integers";
  if (!ParseInt3(Flags().max, out->mutable_max())) return "--max must be X,Y,Z integers";
  return "";
}

// Centre, rotation, material and mode shared by the oriented shapes.
template <typename Shape>
std::string ParseOriented(const char* command, Shape* shape) {
  if (Flags().center.empty()) return absl::StrCat(command, " needs --center=X,Y,Z");
  if (!ParseVec3(Flags().center, shape->mutable_center())) return "--center must be X,Y,Z";
  if (!ParseQuat(Flags().rotation, shape->mutable_rotation())) return "--rotation must be W,X,Y,Z";
  uint32_t material = 0;
  if (!ParseMaterial(Flags().material, &material)) {
    return "--material must be air|water|rock|dirt|grass|sand or a number";
  }
  shape->set_material(material);
  v1::EditMode mode;
  if (!ParseMode(&mode)) return "--mode must be add, subtract or set";
  shape->set_mode(mode);
  return "";
}

// Builds the single primitive of a shape or region command; an error message for Usage or "".
std::string PrimitiveFromFlags(const std::string& command, v1::EditPrimitive* p) {
  if (command == "fill-block" || command == "fill-wedge") {
    bool block = command == "fill-block";
    v1::Vec3* size =
        block ? p->mutable_fill_block()->mutable_size() : p->mutable_fill_wedge()->mutable_size();
    if (Flags().size.empty() || !ParseVec3(Flags().size, size)) {
      return absl::StrCat(command, " needs --size=X,Y,Z");
    }
    return block ? ParseOriented(command.c_str(), p->mutable_fill_block())
                 : ParseOriented(command.c_str(), p->mutable_fill_wedge());
  }
  if (command == "fill-cylinder") {
    p->mutable_fill_cylinder()->set_height(Flags().height);
    p->mutable_fill_cylinder()->set_radius(Flags().radius);
    return ParseOriented(command.c_str(), p->mutable_fill_cylinder());
  }
  if (command == "fill-region") {
    v1::FillRegion* r = p->mutable_fill_region();
    uint32_t material = 0;
    if (!ParseMaterial(Flags().material, &material)) return "--material must be a name or a number";
    r->set_material(material);
    v1::EditMode mode;
    if (!ParseMode(&mode)) return "--mode must be add, subtract or set";
    r->set_mode(mode);
    return ParseRegion("fill-region", r->mutable_region());
  }
  if (command == "replace-material") {
    v1::ReplaceMaterial* r = p->mutable_replace_material();
    uint32_t source = 0, target = 0;
    if (!ParseMaterial(Flags().source, &source) || !ParseMaterial(Flags().target, &target)) {
      return "replace-material needs --source=M and --target=M (names or numbers)";
    }
    r->set_source(source);
    r->set_target(target);
    return ParseRegion("replace-material", r->mutable_region());
  }
  return ParseRegion("clear", p->mutable_clear()->mutable_region());
}

void PrintEvent(const v1::SubscribeResponse& event) {
  if (Flags().json) {
    PrintJson(event);  // one object per line, zero fields included (chunk (0,0,0) is not {})
  } else {
    uint64_t voxels = 0;
    std::string boxes;
    for (const v1::ChunkChange& c : event.changes()) {
      const v1::VoxelBox& b = c.changed_voxels();
      voxels += uint64_t(b.max().x() - b.min().x()) * (b.max().y() - b.min().y()) *
                (b.max().z() - b.min().z());
      if (boxes.size() < 200) absl::StrAppend(&boxes, " ", Fmt(b.min()), "..", Fmt(b.max()));
    }
    std::printf("version %llu  %d chunks  %llu voxels in boxes:%s\n",
                (unsigned long long)event.version(), event.changes_size(),
                (unsigned long long)voxels, boxes.c_str());
  }
  std::fflush(stdout);  // a live tail: every line as it happens
}

}  // namespace

int RunFillBall(Client& client) {
  v1::FillBallRequest request;
  if (Flags().center.empty()) return Usage("fill-ball needs --center=X,Y,Z");
  if (!ParseVec3(Flags().center, request.mutable_center())) return Usage("--center must be X,Y,Z");
  request.set_radius(Flags().radius);
  uint32_t material = 0;
  if (!ParseMaterial(Flags().material, &material)) {
    return Usage("--material must be air|water|rock|dirt|grass|sand or a number");
  }
  request.set_material(material);
  v1::EditMode mode;
  if (!ParseMode(&mode)) return Usage("--mode must be add, subtract or set");
  request.set_mode(mode);
  if (!Flags().idempotency_key.empty() || Flags().expected_version >= 0) {
    // Keys and preconditions belong to batches: send the ball as a one-primitive batch.
    v1::ApplyEditsRequest batch;
    *batch.add_primitives()->mutable_fill_ball() = request;
    return SendBatch(client, "fill-ball", batch);
  }
  v1::EditAck ack;
  return PrintAck("fill-ball", client.FillBall(request, &ack), ack);
}

int RunPrimitive(Client& client, const std::string& command) {
  v1::ApplyEditsRequest request;
  std::string error = PrimitiveFromFlags(command, request.add_primitives());
  if (!error.empty()) return Usage(error);
  return SendBatch(client, command.c_str(), request);
}

int RunEditBatch(Client& client) {
  std::string json;
  if (Flags().batch.empty() || !ReadFile(Flags().batch, &json)) {
    return Usage("edit needs --batch=FILE, a readable ApplyEditsRequest in protobuf JSON");
  }
  v1::ApplyEditsRequest request;
  auto parsed = google::protobuf::util::JsonStringToMessage(json, &request);
  if (!parsed.ok())
    return Usage(absl::StrCat("--batch: not an ApplyEditsRequest: ", parsed.ToString()));
  return SendBatch(client, "edit", request);
}

int RunReadVoxels(Client& client) {
  v1::ReadVoxelsRequest request;
  std::string error = ParseRegion("read-voxels", request.mutable_region());
  if (!error.empty()) return Usage(error);
  const std::string path = Flags().out;
  if (path.empty()) return Usage("read-voxels needs --out=FILE");
  v1::ReadVoxelsResponse r;
  grpc::Status status = client.ReadVoxels(request, &r);
  if (!status.ok()) return Fail("read-voxels", status);
  std::ofstream out(path, std::ios::binary);
  if (!out || !r.voxels().SerializeToOstream(&out) || !out.flush()) {
    std::fprintf(stderr, "voxcol: cannot write %s\n", path.c_str());
    return kExitUsage;
  }
  size_t count = r.voxels().materials().size();
  if (Flags().json) {
    r.mutable_voxels()->clear_materials();  // the arrays are in the file
    r.mutable_voxels()->clear_occupancies();
    PrintJson(r);
  } else {
    std::printf("ok   %zu voxels at world version %llu written to %s\n", count,
                (unsigned long long)r.version(), path.c_str());
  }
  return kExitOk;
}

int RunWriteVoxels(Client& client) {
  std::string bytes;
  v1::WriteVoxelsRequest request;
  const std::string path = Flags().in;
  if (path.empty() || !ReadFile(path, &bytes) ||
      !request.mutable_voxels()->ParseFromString(bytes)) {
    return Usage(
        "write-voxels needs --in=FILE holding a VoxelData message (as read-voxels writes)");
  }
  if (!Flags().at.empty()) {
    // Move the box, keeping its size: a paste at another place.
    v1::Int3 at;
    if (!ParseInt3(Flags().at, &at)) return Usage("--at must be X,Y,Z integers");
    v1::VoxelBox* box = request.mutable_voxels()->mutable_region();
    box->mutable_max()->set_x(box->max().x() - box->min().x() + at.x());
    box->mutable_max()->set_y(box->max().y() - box->min().y() + at.y());
    box->mutable_max()->set_z(box->max().z() - box->min().z() + at.z());
    *box->mutable_min() = at;
  }
  v1::EditAck ack;
  grpc::Status status = client.WriteVoxels(request, &ack);
  return PrintAck("write-voxels", status, ack);
}

int RunExportRegion(Client& client) {
  v1::ExportRegionRequest request;
  if (!ParseInt3(Flags().min, request.mutable_box()->mutable_min()) ||
      !ParseInt3(Flags().max, request.mutable_box()->mutable_max())) {
    return Usage("export-region needs --min=X,Y,Z and --max=X,Y,Z (integer voxel indices)");
  }
  const std::string file = Flags().file;
  if (file.empty()) return Usage("export-region needs --file=PATH");
  v1::ExportRegionResponse r;
  grpc::Status status = client.ExportRegion(request, &r);
  if (!status.ok()) return Fail("export-region", status);
  FILE* out = std::fopen(file.c_str(), "wb");
  bool written =
      out && std::fwrite(r.region().data(), 1, r.region().size(), out) == r.region().size();
  if (out && std::fclose(out) != 0) written = false;
  if (!written) {
    std::fprintf(stderr, "voxcol: cannot write %s\n", file.c_str());
    return kExitUsage;  // a local file, as read-voxels and render --out
  }
  std::printf("ok   %zu bytes to %s (world version %llu)\n", r.region().size(), file.c_str(),
              (unsigned long long)r.version());
  return kExitOk;
}

int RunImportRegion(Client& client) {
  const std::string file = Flags().file;
  if (file.empty()) return Usage("import-region needs --file=PATH");
  FILE* in = std::fopen(file.c_str(), "rb");
  if (!in) return Usage("cannot read " + file);
  v1::ImportRegionRequest request;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) request.mutable_region()->append(buf, n);
  std::fclose(in);
  v1::EditAck ack;
  return PrintAck("import-region", client.ImportRegion(request, &ack), ack);
}

int RunCheckpoint(Client& client) {
  v1::CreateCheckpointRequest request;
  request.set_dir(Flags().dir);
  if (request.dir().empty())
    return Usage("checkpoint needs --dir=NAME (a new directory inside the server's --backup_root)");
  v1::CreateCheckpointResponse r;
  if (int done = FailedOrJson("checkpoint", client.CreateCheckpoint(request, &r), r);
      done != kPrintSummary) {
    return done;
  }
  std::printf("ok   checkpoint in %s holds world version %llu or later\n", r.dir().c_str(),
              (unsigned long long)r.version());
  return kExitOk;
}

int RunSubscribe(Client& client) {
  v1::SubscribeRequest request;
  if (!Flags().min.empty() || !Flags().max.empty()) {
    std::string error = ParseRegion("subscribe", request.mutable_region());
    if (!error.empty()) return Usage(error);
  }
  int64_t from = Flags().from;
  const int64_t from_version = Flags().from_version;
  if (from >= 0 && from_version >= 0 && from != from_version)
    return Usage("subscribe: --from and --from_version disagree; give one of them");
  if (from < 0) from = from_version;
  if (from >= 0) request.set_from_version(uint64_t(from));
  request.set_include_voxels(Flags().include_voxels);
  const int64_t max_events = Flags().max_events;
  grpc::ClientContext context;  // no deadline: a live tail runs until stopped
  auto reader = client.Subscribe(&context, request);
  v1::SubscribeResponse event;
  int64_t seen = 0;
  while (reader->Read(&event)) {
    PrintEvent(event);
    std::fflush(stdout);  // a consumer of the tail sees each batch as it arrives
    ++seen;
    if (max_events > 0 && seen >= max_events) {
      context.TryCancel();
      reader->Finish();
      return kExitOk;
    }
  }
  grpc::Status status = reader->Finish();
  // Ended by the server (fell behind, shutdown): say where to resume.
  if (seen > 0 && !status.ok()) {
    std::fprintf(stderr, "voxcol: subscribe: last version received %llu; resume with --from=%llu\n",
                 (unsigned long long)event.version(), (unsigned long long)event.version());
  }
  return Fail("subscribe", status);
}

}  // namespace voxcol::client
