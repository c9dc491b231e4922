#include "client/cli_queries.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli_bodies.h"
#include "client/cli_common.h"
#include "client/cli_flags.h"

namespace voxcol::client {
namespace {

// Sets read_at from --at_version when given.
template <typename Request>
void ApplyAtVersion(Request* request) {
  const int64_t at = Flags().at_version;
  if (at >= 0) request->mutable_read_at()->set_at_version(uint64_t(at));
}

// The posed shape (SHAPE) of sweep, overlap and contacts from --shape, --position, --rotation and
// the size flags of the kind; an error message for Usage, empty on success. Sizes are checked by
// the server.
std::string ParsePosedShape(const char* command, v1::PosedShape* out) {
  const std::string kind = Flags().shape;
  v1::Shape* shape = out->mutable_shape();
  // A size left out is an error here, not a default: a capsule without --half_height was sent
  // as half height 0, a sphere of the radius, and a sweep with it silently missed what the
  // intended capsule would have hit.
  if ((kind == "sphere" || kind == "capsule") && !Given("--radius")) {
    return absl::StrCat(command, " --shape=", kind, " needs --radius=R");
  }
  if (kind == "sphere") {
    shape->mutable_sphere()->set_radius(Flags().radius);
  } else if (kind == "capsule") {
    if (!Given("--half_height")) {
      return absl::StrCat(command,
                          " --shape=capsule needs --half_height=H (half the length of its core "
                          "segment along local Y; 0 makes it a sphere)");
    }
    shape->mutable_capsule()->set_half_height(Flags().half_height);
    shape->mutable_capsule()->set_radius(Flags().radius);
  } else if (kind == "box") {
    v1::BoxShape* box = shape->mutable_box();
    if (!ParseVec3(Flags().half_extents, box->mutable_half_extents())) {
      return "--shape=box needs --half_extents=X,Y,Z";
    }
    box->set_convex_radius(Flags().convex_radius);
  } else if (kind == "hull") {
    v1::ConvexHullShape* hull = shape->mutable_hull();
    std::vector<std::string> points = absl::StrSplit(Flags().points, ';', absl::SkipWhitespace());
    if (points.empty()) return "--shape=hull needs --points=\"X,Y,Z;X,Y,Z;...\"";
    for (const std::string& p : points) {
      if (!ParseVec3(std::string(absl::StripAsciiWhitespace(p)), hull->add_points())) {
        return "--points must be X,Y,Z triples separated by ';'";
      }
    }
    hull->set_convex_radius(Flags().convex_radius);
  } else {
    return absl::StrCat(command, " needs --shape=sphere|capsule|box|hull");
  }
  if (Flags().position.empty() || !ParseVec3(Flags().position, out->mutable_position())) {
    return absl::StrCat(command, " needs --position=X,Y,Z");
  }
  if (!ParseQuat(Flags().rotation, out->mutable_rotation())) return "--rotation must be W,X,Y,Z";
  return "";
}

void PrintStats(const v1::QueryStats& s) {
  std::printf("     stats: %u voxels, %u chunks, %u tree nodes, %u triangles, %u chunk builds\n",
              s.voxels_visited(), s.chunks_visited(), s.tree_nodes_visited(), s.triangles_tested(),
              s.cache_builds());
}

std::string TouchLabel(const v1::TouchedChunk& t) {
  return absl::StrCat(Fmt(t.chunk()), t.solid() ? " solid" : "", t.water() ? " water" : "");
}
std::string TouchLabel(const v1::TouchedVoxel& t) {
  return absl::StrCat(Fmt(t.voxel()), t.solid() ? " solid" : "", t.water() ? " water" : "");
}

// The raycast request from --origin, --direction, --max_distance, --water, --mode, --all and
// --stats; an error message for Usage, empty on success.
std::string RaycastRequestFromFlags(v1::RaycastRequest* request) {
  if (Flags().origin.empty()) return "raycast needs --origin=X,Y,Z";
  if (!ParseVec3(Flags().origin, request->mutable_origin())) {
    return "--origin must be X,Y,Z";
  }
  if (!ParseVec3(Flags().direction, request->mutable_direction())) {
    return "--direction must be X,Y,Z";
  }
  request->set_max_distance(Flags().max_distance);
  const std::string water = Flags().water;
  if (water == "pass") {
    request->set_water_mode(v1::WATER_MODE_PASS_THROUGH);
  } else if (water == "stop") {
    request->set_water_mode(v1::WATER_MODE_STOP_AT_SURFACE);
  } else {
    return "--water must be 'pass' or 'stop'";
  }
  const std::string mode = Flags().mode;
  if (mode.empty() || mode == "smooth") {
    request->set_mode(v1::RAYCAST_MODE_SMOOTH);
  } else if (mode == "blocky") {
    request->set_mode(v1::RAYCAST_MODE_BLOCKY);
  } else {
    return "raycast --mode must be 'smooth' or 'blocky'";
  }
  request->set_all_hits(Flags().all);
  request->set_include_stats(Flags().stats);
  return "";
}

void PrintRaycast(const v1::RaycastResponse& r) {
  if (!r.hit()) {
    std::printf("miss (world version %llu)\n", (unsigned long long)r.version());
  } else {
    const v1::RaycastHit& f = r.first();
    std::printf("hit  distance %.3f at %s\n", f.distance(), Fmt(f.position()).c_str());
    if (r.has_body()) {
      std::printf("     normal %s\n", Fmt(f.normal()).c_str());
      PrintBodyHit(r.body());
    } else {
      std::printf("     normal %s, material %s, occupancy %u, voxel %s%s\n",
                  Fmt(f.normal()).c_str(), MaterialLabel(f.material()).c_str(), f.occupancy(),
                  Fmt(f.voxel()).c_str(), r.started_inside() ? ", started inside terrain" : "");
    }
    if (f.triangle() >= 0 && !r.has_body()) {
      std::printf("     chunk %s, triangle %d\n", Fmt(f.chunk()).c_str(), f.triangle());
    }
    std::printf("     world version %llu\n", (unsigned long long)r.version());
  }
  for (int i = 0; i < r.hits_size(); ++i) {
    const v1::RaycastHit& h = r.hits(i);
    std::printf("  #%d %s distance %.3f at %s normal %s, material %s\n", i,
                h.front_face() ? "enter" : "exit ", h.distance(), Fmt(h.position()).c_str(),
                Fmt(h.normal()).c_str(), MaterialLabel(h.material()).c_str());
  }
  if (r.has_stats()) PrintStats(r.stats());
}

void PrintSweepHit(const char* lead, const v1::SweepHit& h) {
  std::printf("%s distance %.3f at %s, shape at %s\n", lead, h.distance(),
              Fmt(h.position()).c_str(), Fmt(h.shape_position()).c_str());
  std::printf("     normal %s, material %s", Fmt(h.normal()).c_str(),
              MaterialLabel(h.material()).c_str());
  if (h.triangle() >= 0)
    std::printf(", chunk %s, triangle %d", Fmt(h.chunk()).c_str(), h.triangle());
  std::printf("\n");
}

// Fills the shape of a probe request from --center and --half_extents (box) or --radius
// (sphere).
bool ParseProbeShape(v1::ProbeRequest* request, std::string* error) {
  const std::string half = Flags().half_extents;
  if (!half.empty() && Given("--radius")) {
    *error = "probe takes --half_extents (box) or --radius (sphere), not both";
    return false;
  }
  if (half.empty() && !Given("--radius")) {  // was sent as a sphere of radius 0
    *error = "probe needs a size: --half_extents=X,Y,Z (box) or --radius=R (sphere)";
    return false;
  }
  v1::Vec3* center = half.empty() ? request->mutable_sphere()->mutable_center()
                                  : request->mutable_box()->mutable_center();
  if (Flags().center.empty() || !ParseVec3(Flags().center, center)) {
    *error = "probe needs --center=X,Y,Z";
    return false;
  }
  if (half.empty()) {
    request->mutable_sphere()->set_radius(Flags().radius);
  } else if (!ParseVec3(half, request->mutable_box()->mutable_half_extents())) {
    *error = "--half_extents must be X,Y,Z";
    return false;
  }
  return true;
}

const char* GroundLabel(v1::GroundState g) {
  switch (g) {
    case v1::GROUND_STATE_ON_GROUND:
      return "on ground";
    case v1::GROUND_STATE_ON_STEEP_SLOPE:
      return "on steep slope";
    default:
      return "airborne";
  }
}

// "sides up down" from CharacterResult.collision_flags; "-" for none.
std::string CollisionLabel(uint32_t flags) {
  std::string out;
  if (flags & v1::CHARACTER_COLLISION_SIDES) absl::StrAppend(&out, out.empty() ? "" : " ", "sides");
  if (flags & v1::CHARACTER_COLLISION_UP) absl::StrAppend(&out, out.empty() ? "" : " ", "up");
  if (flags & v1::CHARACTER_COLLISION_DOWN) absl::StrAppend(&out, out.empty() ? "" : " ", "down");
  return out.empty() ? "-" : out;
}

void PrintCharacterTick(int tick, const v1::CharacterResult& r, uint64_t version) {
  std::string line =
      absl::StrCat("tick ", tick, ": at ", Fmt(r.position()), ", ", GroundLabel(r.ground()));
  if (r.ground() != v1::GROUND_STATE_AIRBORNE) {
    absl::StrAppend(&line, " (normal ", Fmt(r.ground_normal()), ", ",
                    MaterialLabel(r.ground_material()), ")");
  }
  absl::StrAppend(&line, ", collisions ", CollisionLabel(r.collision_flags()));
  if (r.stepped()) absl::StrAppend(&line, ", stepped");
  if (r.recovered()) absl::StrAppend(&line, ", recovered");
  if (r.submerged_fraction() > 0) {
    char fraction[32];
    std::snprintf(fraction, sizeof fraction, "%.3f", r.submerged_fraction());
    absl::StrAppend(&line, r.swimming() ? ", swimming" : ", wading", " (submerged ", fraction, ")");
  }
  std::printf("%s, world version %llu\n", line.c_str(), (unsigned long long)version);
}

}  // namespace

int RunRaycast(Client& client) {
  v1::RaycastRequest request;
  std::string error = RaycastRequestFromFlags(&request);
  if (error.empty()) error = BodyFilterFromFlags(&request);
  if (!error.empty()) return Usage(error);
  ApplyAtVersion(&request);
  v1::RaycastResponse r;
  if (int done = FailedOrJson("raycast", client.Raycast(request, &r), r); done != kPrintSummary) {
    return done;
  }
  PrintRaycast(r);
  return kExitOk;
}

int RunSweep(Client& client) {
  v1::SweepRequest request;
  std::string error = ParsePosedShape("sweep", request.mutable_shape());
  if (!error.empty()) return Usage(error);
  if (!ParseVec3(Flags().direction, request.mutable_direction())) {
    return Usage("--direction must be X,Y,Z");
  }
  request.set_distance(Flags().distance);
  const std::string collection = Flags().collection;
  if (collection == "closest") {
    request.set_collection(v1::HIT_COLLECTION_CLOSEST);
  } else if (collection == "any") {
    request.set_collection(v1::HIT_COLLECTION_ANY);
  } else if (collection == "all") {
    request.set_collection(v1::HIT_COLLECTION_ALL);
  } else {
    return Usage("--collection must be closest, any or all");
  }
  request.set_include_stats(Flags().stats);
  ApplyAtVersion(&request);
  v1::SweepResponse r;
  if (int done = FailedOrJson("sweep", client.Sweep(request, &r), r); done != kPrintSummary) {
    return done;
  }
  if (!r.hit()) {
    std::printf("miss (world version %llu)\n", (unsigned long long)r.version());
  } else if (r.initial_overlap()) {
    std::printf("initial overlap: the start pose penetrates the terrain, %s\n",
                Fmt(r.penetration()).c_str());
    std::printf("     world version %llu\n", (unsigned long long)r.version());
  } else {
    PrintSweepHit("hit ", r.first());
    std::printf("     world version %llu\n", (unsigned long long)r.version());
  }
  if (r.initial_overlap() || r.hits_size() > 1) {
    for (int i = 0; i < r.hits_size(); ++i)
      PrintSweepHit(absl::StrCat("  #", i).c_str(), r.hits(i));
  }
  if (r.hits_truncated()) std::printf("     (more hits than the server returns)\n");
  if (r.has_stats()) PrintStats(r.stats());
  return kExitOk;
}

int RunOverlap(Client& client) {
  v1::OverlapRequest request;
  std::string error = ParsePosedShape("overlap", request.mutable_shape());
  if (error.empty()) error = BodyFilterFromFlags(&request);
  if (!error.empty()) return Usage(error);
  request.set_include_penetration(Flags().penetration);
  request.set_include_stats(Flags().stats);
  ApplyAtVersion(&request);
  v1::OverlapResponse r;
  if (int done = FailedOrJson("overlap", client.Overlap(request, &r), r); done != kPrintSummary) {
    return done;
  }
  std::printf("solid %s, water %s (exact, world version %llu)\n", r.touches_solid() ? "yes" : "no",
              r.touches_water() ? "yes" : "no", (unsigned long long)r.version());
  if (r.has_penetration())
    std::printf("     deepest penetration %s\n", Fmt(r.penetration()).c_str());
  for (const v1::TouchedChunk& c : r.chunks()) {
    std::printf("     chunk %s\n", TouchLabel(c).c_str());
  }
  PrintBodyParts(r);
  if (r.has_stats()) PrintStats(r.stats());
  return kExitOk;
}

int RunContacts(Client& client) {
  v1::ContactsRequest request;
  std::string error = ParsePosedShape("contacts", request.mutable_shape());
  if (!error.empty()) return Usage(error);
  request.set_margin(Flags().margin);
  request.set_skip_water(Flags().skip_water);
  request.set_include_stats(Flags().stats);
  ApplyAtVersion(&request);
  v1::ContactsResponse r;
  if (int done = FailedOrJson("contacts", client.Contacts(request, &r), r); done != kPrintSummary) {
    return done;
  }
  int points = 0;
  for (const v1::ChunkContacts& c : r.chunks()) points += c.points_size();
  std::printf("%d contact point%s in %d chunk%s (world version %llu)\n", points,
              points == 1 ? "" : "s", r.chunks_size(), r.chunks_size() == 1 ? "" : "s",
              (unsigned long long)r.version());
  for (const v1::ChunkContacts& c : r.chunks()) {
    std::printf("     chunk %s\n", Fmt(c.chunk()).c_str());
    for (const v1::Contact& p : c.points()) {
      std::printf("       depth %.3f at %s normal %s, material %s, triangle %d\n", p.depth(),
                  Fmt(p.position()).c_str(), Fmt(p.normal()).c_str(),
                  MaterialLabel(p.material()).c_str(), p.triangle());
    }
  }
  if (r.buried()) std::printf("     buried in solid: way out %s\n", Fmt(r.penetration()).c_str());
  if (r.has_water()) {
    const v1::WaterContact& w = r.water();
    if (w.in_water()) {
      std::printf(
          "     water: %.1f%% submerged (%.3f units^3), surface y=%.3f, centre of buoyancy %s\n",
          100.0 * w.submerged_fraction(), w.submerged_volume(), w.surface_height(),
          Fmt(w.center_of_buoyancy()).c_str());
    } else {
      std::printf("     water: none\n");
    }
  }
  if (r.has_stats()) PrintStats(r.stats());
  return kExitOk;
}

int RunProbe(Client& client) {
  v1::ProbeRequest request;
  std::string error;
  if (!ParseProbeShape(&request, &error)) return Usage(error);
  request.set_include_voxels(Flags().voxels);
  request.set_max_voxels(Flags().max_voxels);
  request.set_include_stats(Flags().stats);
  ApplyAtVersion(&request);
  v1::ProbeResponse r;
  if (int done = FailedOrJson("probe", client.Probe(request, &r), r); done != kPrintSummary) {
    return done;
  }
  std::printf("may touch: solid %s, water %s (broadphase precision, world version %llu)\n",
              r.may_touch_solid() ? "yes" : "no", r.may_touch_water() ? "yes" : "no",
              (unsigned long long)r.version());
  for (const v1::TouchedChunk& c : r.chunks())
    std::printf("     chunk %s\n", TouchLabel(c).c_str());
  for (const v1::TouchedVoxel& v : r.voxels())
    std::printf("     voxel %s\n", TouchLabel(v).c_str());
  if (r.voxels_truncated()) std::printf("     (more voxels touched than listed)\n");
  if (r.has_stats()) std::printf("     stats: %u chunks visited\n", r.stats().chunks_visited());
  return kExitOk;
}

int RunMoveCharacter(Client& client) {
  v1::MoveCharactersRequest request;
  v1::CharacterMove* move = request.add_moves();
  move->set_radius(Flags().radius);
  move->set_half_height(Flags().half_height);
  if (Flags().position.empty() || !ParseVec3(Flags().position, move->mutable_position())) {
    return Usage("move-character needs --position=X,Y,Z");
  }
  if (Flags().displacement.empty() ||
      !ParseVec3(Flags().displacement, move->mutable_displacement())) {
    return Usage("move-character needs --displacement=X,Y,Z");
  }
  const int ticks = Flags().ticks;
  if (ticks < 1) return Usage("move-character needs --ticks >= 1");
  move->mutable_settings()->set_step_offset(Flags().step_offset);
  move->mutable_settings()->set_slope_limit_degrees(Flags().slope_limit);
  request.set_include_stats(Flags().stats);
  ApplyAtVersion(&request);
  const bool json = Flags().json;
  for (int tick = 1; tick <= ticks; ++tick) {
    v1::MoveCharactersResponse r;
    grpc::Status status = client.MoveCharacters(request, &r);
    if (!status.ok()) return Fail("move-character", status);
    if (r.results_size() != 1) {
      std::fprintf(stderr, "voxcol: move-character: expected 1 result, got %d\n", r.results_size());
      return kExitServerError;
    }
    if (json) {
      PrintJson(r);
    } else {
      PrintCharacterTick(tick, r.results(0), r.version());
      if (r.has_stats()) PrintStats(r.stats());
    }
    *move->mutable_position() = r.results(0).position();
  }
  return kExitOk;
}

int RunValidateHit(Client& client) {
  v1::ValidateHitRequest request;
  if (!ParseVec3(Flags().origin, request.mutable_origin())) {
    return Usage("validate-hit needs --origin=X,Y,Z");
  }
  if (!ParseVec3(Flags().direction, request.mutable_direction())) {
    return Usage("--direction must be X,Y,Z");
  }
  const std::string claimed = Flags().claimed_hit, target = Flags().target_point;
  if (!Flags().target_body.empty()) {
    if (std::string error = BodyClaimFromFlags(&request); !error.empty()) return Usage(error);
  } else if (claimed.empty() == target.empty()) {
    return Usage(
        "validate-hit needs exactly one of --claimed_hit=X,Y,Z, --target_point=X,Y,Z and "
        "--target_body=ID");
  } else if (!ParseVec3(claimed.empty() ? target : claimed, claimed.empty()
                                                                ? request.mutable_target_point()
                                                                : request.mutable_claimed_hit())) {
    return Usage("--claimed_hit / --target_point must be X,Y,Z");
  }
  request.set_tolerance(Flags().tolerance);
  const std::string mode = Flags().mode;
  if (mode == "blocky") {
    request.set_mode(v1::RAYCAST_MODE_BLOCKY);
  } else if (!mode.empty() && mode != "smooth") {
    return Usage("validate-hit --mode must be 'smooth' or 'blocky'");
  }
  ApplyAtVersion(&request);
  v1::ValidateHitResponse r;
  if (int done = FailedOrJson("validate-hit", client.ValidateHit(request, &r), r);
      done != kPrintSummary) {
    return done;
  }
  std::printf("%s (world version %llu): claim %.3f along the shot, discrepancy %.3f\n",
              VerdictName(r.verdict()), (unsigned long long)r.version(), r.claim_distance(),
              r.discrepancy());
  if (r.server_hit()) {
    std::printf("     server hit at distance %.3f, %s\n", r.hit().distance(),
                Fmt(r.hit().position()).c_str());
    if (r.has_body()) PrintBodyHit(r.body());
  } else {
    std::printf("     server: no terrain along the shot\n");
  }
  return kExitOk;
}

namespace {

// --costs "sand=4,water=10" (material name or number = cost per unit) into the request.
bool ParseCosts(const std::string& text, v1::FindPathRequest* request) {
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    uint32_t material = 0;
    float cost = 0;
    if (!ParseMaterial(std::string(absl::StripAsciiWhitespace(kv.first)), &material) ||
        !absl::SimpleAtof(kv.second, &cost)) {
      return false;
    }
    v1::MaterialCost* c = request->add_material_costs();
    c->set_material(material);
    c->set_cost(cost);
  }
  return true;
}

const char* PathStatusLabel(v1::PathStatus s) {
  switch (s) {
    case v1::PATH_STATUS_OK:
      return "OK";
    case v1::PATH_STATUS_NO_PATH:
      return "NO_PATH";
    case v1::PATH_STATUS_START_OFF_MESH:
      return "START_OFF_MESH";
    case v1::PATH_STATUS_GOAL_OFF_MESH:
      return "GOAL_OFF_MESH";
    case v1::PATH_STATUS_TOO_FAR:
      return "TOO_FAR";
    default:
      return "UNSPECIFIED";
  }
}

const char* ActionLabel(v1::WaypointAction a) {
  switch (a) {
    case v1::WAYPOINT_ACTION_JUMP:
      return "jump";
    case v1::WAYPOINT_ACTION_SWIM:
      return "swim";
    default:
      return "walk";
  }
}

}  // namespace

const char* WatchEventLabel(v1::PathWatchEvent e) {
  switch (e) {
    case v1::PATH_WATCH_EVENT_REGISTERED:
      return "WATCHING";
    case v1::PATH_WATCH_EVENT_BLOCKED:
      return "BLOCKED";
    case v1::PATH_WATCH_EVENT_SHORTER:
      return "SHORTER";
    case v1::PATH_WATCH_EVENT_UNWATCHED:
      return "UNWATCHED";
    default:
      return "UNKNOWN";
  }
}

void PrintPath(const v1::FindPathResponse& r) {
  std::printf("%s (world version %llu): %d waypoints, length %.3f\n", PathStatusLabel(r.status()),
              (unsigned long long)r.version(), r.waypoints_size(), r.length());
  for (int i = 0; i < r.waypoints_size(); ++i) {
    const v1::Waypoint& w = r.waypoints(i);
    std::printf("     %3d %-4s %s\n", i, ActionLabel(w.action()), Fmt(w.position()).c_str());
  }
}

// One line per event (with --json the WatchPathsResponse), then its path when it has one.
void PrintWatchEvent(const v1::WatchPathsResponse& e) {
  if (Flags().json) {
    PrintJson(e);
    return;
  }
  std::printf("%s world version %llu", WatchEventLabel(e.event()), (unsigned long long)e.version());
  if (e.event() == v1::PATH_WATCH_EVENT_BLOCKED) {
    std::printf(": waypoint %u unreachable, stopped at %s", e.blocked_waypoint(),
                Fmt(e.stopped_at()).c_str());
  }
  std::printf("\n");
  if (e.has_path()) PrintPath(e.path());
}

// path --watch: the server plans the path and watches it; events are printed as they come.
int WatchPath(Client& client, const v1::FindPathRequest& request) {
  grpc::ClientContext context;  // no deadline: runs until the path is blocked or stopped
  auto stream = client.WatchPaths(&context);
  if (!stream->Write(client.WatchRequest(1, request, Flags().shorter_margin))) {
    return Fail("path --watch", stream->Finish());
  }
  v1::WatchPathsResponse event;
  int64_t seen = 0;
  while (stream->Read(&event)) {
    const v1::PathWatchEvent e = event.event();
    if (e == v1::PATH_WATCH_EVENT_REFUSED) {
      context.TryCancel();
      stream->Finish();
      return Fail("path --watch",
                  grpc::Status(grpc::StatusCode(event.error_code()), event.error_message()));
    }
    PrintWatchEvent(event);
    std::fflush(stdout);
    if (e != v1::PATH_WATCH_EVENT_REGISTERED) ++seen;
    if (e == v1::PATH_WATCH_EVENT_BLOCKED || (Flags().count > 0 && seen >= Flags().count)) {
      context.TryCancel();
      stream->Finish();
      return kExitOk;
    }
  }
  return Fail("path --watch", stream->Finish());
}

int RunPath(Client& client) {
  v1::FindPathRequest request;
  if (!ParseVec3(Flags().start, request.mutable_start())) return Usage("path needs --start=X,Y,Z");
  if (!ParseVec3(Flags().goal, request.mutable_goal())) return Usage("path needs --goal=X,Y,Z");
  request.set_profile(Flags().profile);
  v1::AgentProfile* agent = request.mutable_agent();
  if (Given("--radius")) agent->set_radius(Flags().radius);
  if (Given("--height")) agent->set_height(Flags().height);
  if (Given("--max_climb")) agent->set_max_climb(Flags().max_climb);
  if (Flags().can_jump) agent->set_can_jump(true);
  if (Flags().can_swim) agent->set_can_swim(true);
  if (agent->ByteSizeLong() == 0) request.clear_agent();
  if (!ParseCosts(Flags().costs, &request)) {
    return Usage("--costs must be MATERIAL=COST pairs separated by ',', e.g. sand=4,water=10");
  }
  if (Given("--max_distance")) request.set_max_distance(Flags().max_distance);
  if (Flags().watch) {
    if (Given("--at_version"))
      return Usage("path --watch watches the newest version: no --at_version");
    return WatchPath(client, request);
  }
  ApplyAtVersion(&request);
  v1::FindPathResponse r;
  if (int done = FailedOrJson("path", client.FindPath(request, &r), r); done != kPrintSummary) {
    return done;
  }
  PrintPath(r);
  return kExitOk;
}

}  // namespace voxcol::client
