#include "client/cli_app.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli_bodies.h"
#include "client/cli_common.h"
#include "client/cli_edits.h"
#include "client/cli_flags.h"
#include "client/cli_queries.h"

namespace voxcol::client {
namespace {

const char kVec3[] = "X,Y,Z";

const CLI::App* g_app = nullptr;  // the parsed command line, for Given()

// A version number (>= 0) or -1, the option's "none" value; other negatives are refused (-7 used
// to pass as -1).
CLI::Validator VersionOrMinusOne(const char* none) {
  return CLI::Validator(
      [none](std::string& text) -> std::string {
        int64_t v = 0;
        if (!absl::SimpleAtoi(text, &v) || v < -1) {
          return absl::StrCat("must be a world version >= 0, or -1 for ", none, "; got ", text);
        }
        return "";
      },
      "VERSION|-1");
}

CLI::App* Command(CliApp& cli, const std::string& name, const std::string& description,
                  CommandFn run) {
  CLI::App* sub = cli.app.add_subcommand(name, description);
  sub->fallthrough();  // the global options may also follow the subcommand
  cli.commands[sub] = std::move(run);
  return sub;
}

// Cost statistics and lag compensation, common to every query command.
void AddStats(CLI::App* sub) {
  sub->add_flag("--stats", Flags().stats, "Include the query's cost statistics");
  sub->add_option("--at_version", Flags().at_version,
                  "Read this past world version (read_at; -1: the newest)")
      ->check(VersionOrMinusOne("the newest"));
}

// The posed shape of sweep, overlap and contacts.
void AddShape(CLI::App* sub) {
  CliOptions& f = Flags();
  sub->add_option("--shape", f.shape, "The shape")
      ->required()
      ->check(CLI::IsMember({"sphere", "capsule", "box", "hull"}));
  sub->add_option("--position", f.position, "The shape's centre, world units")
      ->required()
      ->type_name(kVec3);
  sub->add_option("--rotation", f.rotation, "Unit quaternion local -> world")->type_name("W,X,Y,Z");
  sub->add_option("--radius", f.radius, "sphere, capsule: radius, world units");
  sub->add_option("--half_height", f.half_height,
                  "capsule: half length of the core segment along local Y, world units");
  sub->add_option("--half_extents", f.half_extents, "box: half extents, world units")
      ->type_name(kVec3);
  sub->add_option("--points", f.points, "hull: local points (1..64)")
      ->type_name("\"X,Y,Z;X,Y,Z;...\"");
  sub->add_option("--convex_radius", f.convex_radius, "box, hull: rounding radius, world units");
}

// Idempotency key and expected version of every edit.
void AddEditGuards(CLI::App* sub) {
  CliOptions& f = Flags();
  sub->add_option("--idempotency_key", f.idempotency_key, "A retry with the same key applies once");
  sub->add_option("--expected_version", f.expected_version,
                  "Apply only if the world is at this version (-1: any)")
      ->check(VersionOrMinusOne("any"));
}

void AddMaterialMode(CLI::App* sub) {
  CliOptions& f = Flags();
  sub->add_option("--material", f.material, "air|water|rock|dirt|grass|sand or 0..255");
  sub->add_option("--mode", f.mode, "add (default) | subtract | set")
      ->check(CLI::IsMember({"add", "subtract", "set"}));
}

void AddBox(CLI::App* sub, bool required) {
  CliOptions& f = Flags();
  CLI::Option* min = sub->add_option("--min", f.min, "First voxel (voxel indices)");
  CLI::Option* max = sub->add_option("--max", f.max, "Voxel one past the last (exclusive)");
  min->type_name(kVec3)->required(required);
  max->type_name(kVec3)->required(required);
  if (!required) {
    min->needs(max);
    max->needs(min);
  }
}

// The bodies' tick, layer mask and ignored ids (raycast --bodies, validate-hit --target_body).
void AddBodyFilter(CLI::App* sub) {
  CliOptions& f = Flags();
  sub->add_option("--tick", f.tick, "Bodies as they were at this game tick (default: the latest)");
  sub->add_option("--layer_mask", f.layer_mask, "Bodies whose layer matches (0: all)");
  sub->add_option("--ignore", f.ignore, "Body ids never hit (the shooter)")->type_name("ID,ID");
}

// --bodies and its filter (raycast, overlap).
void AddBodyOptions(CLI::App* sub) {
  sub->add_flag("--bodies", Flags().bodies, "See bodies too (BodyService.UpdateBodies)");
  sub->add_option("--body_scope", Flags().body_scope, "With --bodies: both (default), bodies")
      ->check(CLI::IsMember({"both", "bodies", "terrain"}));
  AddBodyFilter(sub);
}

void AddBodyCommands(CliApp& cli) {
  CLI::App* update = Command(cli, "update-bodies", "One game tick's body changes (session state)",
                             RunUpdateBodies);
  update->add_option("--request", Flags().request, "An UpdateBodiesRequest as JSON, or @FILE")
      ->required();
  Command(cli, "list-bodies", "The live bodies at the latest tick", RunListBodies);
}

void AddQueryCommands(CliApp& cli) {
  CliOptions& f = Flags();
  CLI::App* raycast =
      Command(cli, "raycast", "First (or every) surface crossing of a ray", RunRaycast);
  raycast->add_option("--origin", f.origin, "Ray origin, world units")
      ->required()
      ->type_name(kVec3);
  raycast->add_option("--direction", f.direction, "Direction (any non-zero length)");
  raycast->add_option("--max_distance", f.max_distance, "Maximum distance, world units");
  raycast->add_option("--water", f.water, "Pass through water or stop at its surface")
      ->check(CLI::IsMember({"pass", "stop"}));
  raycast->add_option("--mode", f.mode, "smooth (default): the marching-cubes surface; blocky")
      ->check(CLI::IsMember({"smooth", "blocky"}));
  raycast->add_flag("--all", f.all, "Every surface crossing along the ray (smooth mode)");
  AddBodyOptions(raycast);
  AddStats(raycast);

  CLI::App* sweep = Command(cli, "sweep", "Where a moving shape first meets the terrain", RunSweep);
  AddShape(sweep);
  sweep->add_option("--direction", f.direction, "Direction (any non-zero length)");
  sweep->add_option("--distance", f.distance, "How far to move, world units")->required();
  sweep->add_option("--collection", f.collection, "Which hits")
      ->check(CLI::IsMember({"closest", "any", "all"}));
  AddStats(sweep);

  CLI::App* overlap = Command(cli, "overlap", "Exact overlap of a posed shape", RunOverlap);
  AddShape(overlap);
  overlap->add_flag("--penetration", f.penetration, "Report the deepest penetration");
  AddBodyOptions(overlap);
  AddStats(overlap);

  CLI::App* contacts =
      Command(cli, "contacts", "Contact points (<= 4 per chunk) and water contact", RunContacts);
  AddShape(contacts);
  contacts->add_option("--margin", f.margin,
                       "Also report points separated by up to this distance (negative depth)");
  contacts->add_flag("--skip_water", f.skip_water, "Skip the water contact (buoyancy)");
  AddStats(contacts);

  CLI::App* probe =
      Command(cli, "probe",
              "Conservative broadphase: may terrain be within reach of a box or sphere?", RunProbe);
  probe->add_option("--center", f.center, "Centre, world units")->required()->type_name(kVec3);
  CLI::Option* box = probe->add_option("--half_extents", f.half_extents, "Box half extents");
  CLI::Option* sphere = probe->add_option("--radius", f.radius, "Sphere radius, world units");
  box->type_name(kVec3)->excludes(sphere);
  probe->add_flag("--voxels", f.voxels, "Also list the touched voxels");
  probe->add_option("--max_voxels", f.max_voxels, "Most voxels to list (0: the server's limit)");
  AddStats(probe);

  CLI::App* move =
      Command(cli, "move-character",
              "Move-and-slide of an upright capsule, N ticks from each result", RunMoveCharacter);
  move->add_option("--radius", f.radius, "Capsule radius, world units")->required();
  move->add_option("--half_height", f.half_height, "Half length of the core segment")->required();
  move->add_option("--position", f.position, "Capsule centre")->required()->type_name(kVec3);
  move->add_option("--displacement", f.displacement, "Wanted motion per tick (walk+jump+gravity)")
      ->required()
      ->type_name(kVec3);
  move->add_option("--ticks", f.ticks, "Ticks to run")->check(CLI::PositiveNumber);
  move->add_option("--step_offset", f.step_offset,
                   "Highest riser walked up (0: the server's default)");
  move->add_option("--slope_limit", f.slope_limit,
                   "Steepest walkable ground, degrees (0: the server's default)");
  AddStats(move);
}

void AddValidateHit(CliApp& cli) {
  CliOptions& f = Flags();
  CLI::App* validate =
      Command(cli, "validate-hit",
              "Judge a client's shot against the terrain as of the version it saw", RunValidateHit);
  validate->add_option("--origin", f.origin, "Where the shot started")
      ->required()
      ->type_name(kVec3);
  validate->add_option("--direction", f.direction, "Shot direction (any non-zero length)")
      ->required()
      ->type_name(kVec3);
  CLI::Option* claimed = validate->add_option("--claimed_hit", f.claimed_hit,
                                              "Where the client says its shot hit the terrain");
  CLI::Option* target = validate->add_option(
      "--target_point", f.target_point, "A point the client says its shot reached unobstructed");
  CLI::Option* body = validate->add_option("--target_body", f.target_body,
                                           "A body the client says its shot hit (with --part, "
                                           "--tick)");
  claimed->type_name(kVec3)->excludes(target)->excludes(body);
  target->type_name(kVec3)->excludes(body);
  validate->add_option("--part", f.part, "With --target_body: the part claimed");
  AddBodyFilter(validate);
  validate->add_option("--tolerance", f.tolerance, "Allowed discrepancy, world units");
  validate->add_option("--mode", f.mode, "smooth (default) | blocky")
      ->check(CLI::IsMember({"smooth", "blocky"}));
  validate
      ->add_option("--at_version", f.at_version,
                   "The version the client saw when it fired (-1: the newest)")
      ->check(VersionOrMinusOne("the newest"));
}

void AddPath(CliApp& cli) {
  CliOptions& f = Flags();
  CLI::App* path = Command(cli, "path", "Shortest walkable path for an agent (FindPath)", RunPath);
  path->add_option("--start", f.start, "The agent's feet at the start")
      ->required()
      ->type_name(kVec3);
  path->add_option("--goal", f.goal, "The agent's feet at the goal")->required()->type_name(kVec3);
  path->add_option("--profile", f.profile, "Agent profile of the server (empty: its default)");
  path->add_option("--radius", f.radius, "Override the profile's radius, world units");
  path->add_option("--height", f.height, "Override the profile's height, world units");
  path->add_option("--max_climb", f.max_climb, "Override the profile's highest step");
  path->add_flag("--can_jump", f.can_jump, "The agent may jump (up to the profile's jump height)");
  path->add_flag("--can_swim", f.can_swim, "The agent may swim on water surfaces");
  path->add_option("--costs", f.costs, "Cost per unit by material, e.g. 'sand=4,water=10'");
  path->add_option("--max_distance", f.max_distance,
                   "Longest path, world units (0: the server's limit)");
  path->add_option("--at_version", f.at_version, "Read this past version (-1: the newest)")
      ->check(VersionOrMinusOne("the newest"));
  path->add_flag("--watch", f.watch,
                 "Watch the path (WatchPaths): print it, then one line per event until it is "
                 "blocked, --count events, or interrupted");
  path->add_option("--count", f.count, "With --watch: exit after this many events (0: no limit)");
  path->add_option("--shorter_margin", f.shorter_margin,
                   "With --watch: also report re-plans shorter by more than this, world units");
}

void AddPrimitiveCommands(CliApp& cli) {
  CliOptions& f = Flags();
  CLI::App* ball = Command(cli, "fill-ball", "Fill or carve one ball", RunFillBall);
  ball->add_option("--center", f.center, "Centre, world units")->required()->type_name(kVec3);
  ball->add_option("--radius", f.radius, "Radius, world units")->required();
  AddMaterialMode(ball);
  AddEditGuards(ball);

  for (const char* name : {"fill-block", "fill-wedge", "fill-cylinder"}) {
    const std::string command = name;
    CLI::App* sub =
        Command(cli, command, "", [command](Client& c) { return RunPrimitive(c, command); });
    sub->add_option("--center", f.center, "Centre, world units")->required()->type_name(kVec3);
    sub->add_option("--rotation", f.rotation, "Unit quaternion local -> world");
    if (command == "fill-cylinder") {
      sub->description("Fill or carve a cylinder along its local Y axis");
      sub->add_option("--height", f.height, "Length along local Y, world units")->required();
      sub->add_option("--radius", f.radius, "Radius, world units")->required();
    } else {
      sub->description(command == "fill-block"
                           ? "Fill or carve a rotated block"
                           : "Fill or carve a wedge (slope from the bottom-front (-Z) edge up "
                             "to the top-back (+Z) edge)");
      sub->add_option("--size", f.size, "Edge lengths along the local axes, world units")
          ->required()
          ->type_name(kVec3);
    }
    AddMaterialMode(sub);
    AddEditGuards(sub);
  }
  CLI::App* region = Command(cli, "fill-region", "Fill or carve a box of voxels",
                             [](Client& c) { return RunPrimitive(c, "fill-region"); });
  AddBox(region, true);
  AddMaterialMode(region);
  AddEditGuards(region);
  CLI::App* replace = Command(cli, "replace-material", "Replace one material in a box",
                              [](Client& c) { return RunPrimitive(c, "replace-material"); });
  AddBox(replace, true);
  replace->add_option("--source", f.source, "Material to replace (name or 0..255)")->required();
  replace->add_option("--target", f.target, "Material to put instead (name or 0..255)")->required();
  AddEditGuards(replace);
  CLI::App* clear = Command(cli, "clear", "Set a box of voxels to air",
                            [](Client& c) { return RunPrimitive(c, "clear"); });
  AddBox(clear, true);
  AddEditGuards(clear);
}

void AddDataCommands(CliApp& cli) {
  CliOptions& f = Flags();
  CLI::App* edit =
      Command(cli, "edit", "One atomic batch from an ApplyEditsRequest in JSON", RunEditBatch);
  edit->add_option("--batch", f.batch, "File holding an ApplyEditsRequest (protobuf JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  AddEditGuards(edit);
  CLI::App* read = Command(cli, "read-voxels", "A box of voxels to a file", RunReadVoxels);
  AddBox(read, true);
  read->add_option("--out", f.out, "Output file (binary voxcol.v1.VoxelData)")->required();
  CLI::App* write = Command(cli, "write-voxels", "Overwrite voxels from a file", RunWriteVoxels);
  write->add_option("--in", f.in, "Input file, as read-voxels writes")
      ->required()
      ->check(CLI::ExistingFile);
  write->add_option("--at", f.at, "Put the file's first voxel here instead")->type_name(kVec3);
  CLI::App* exp =
      Command(cli, "export-region", "A box of voxels to a packed file", RunExportRegion);
  AddBox(exp, true);
  exp->add_option("--file", f.file, "Local packed region file")->required();
  CLI::App* imp =
      Command(cli, "import-region", "Write a packed region back as one edit", RunImportRegion);
  imp->add_option("--file", f.file, "Local packed region file")
      ->required()
      ->check(CLI::ExistingFile);
  CLI::App* checkpoint =
      Command(cli, "checkpoint", "Online backup of the server's store into its --backup_root",
              RunCheckpoint);
  checkpoint->add_option("--dir", f.dir, "A new directory inside --backup_root")->required();
  CLI::App* subscribe =
      Command(cli, "subscribe", "The change feed: one line per committed batch", RunSubscribe);
  AddBox(subscribe, false);
  CLI::Option* from =
      subscribe->add_option("--from", f.from, "Deliver batches after this version (-1: from now)")
          ->check(VersionOrMinusOne("from now"));
  subscribe->add_option("--from_version", f.from_version, "The same as --from (older scripts)")
      ->excludes(from)
      ->check(VersionOrMinusOne("from now"));
  subscribe->add_flag("--include_voxels", f.include_voxels,
                      "Include the new voxels of each changed box");
  subscribe->add_option("--max_events", f.max_events,
                        "Stop after this many batches (0: until interrupted)");
}

int RunWorlds(Client& client) {
  v1::ListWorldsResponse r;
  if (int done = FailedOrJson("worlds", client.ListWorlds(&r), r); done != kPrintSummary) {
    return done;
  }
  for (const v1::WorldSummary& w : r.worlds()) {
    std::printf("%-24s version %llu, %llu resident chunks (%.1f MiB)%s%s\n", w.world().c_str(),
                (unsigned long long)w.version(), (unsigned long long)w.resident_chunks(),
                double(w.resident_bytes()) / 1048576.0,
                w.template_world().empty() ? "" : ", copied from ", w.template_world().c_str());
  }
  return kExitOk;
}

int RunCreateWorld(Client& client) {
  v1::CreateWorldRequest request;
  request.set_world(Flags().new_world);
  if (Flags().template_world.empty()) {
    request.mutable_settings();
  } else {
    request.set_template_world(Flags().template_world);
  }
  v1::WorldSummary r;
  if (int done = FailedOrJson("create-world", client.CreateWorld(request, &r), r);
      done != kPrintSummary) {
    return done;
  }
  std::printf("ok   world %s at version %llu\n", r.world().c_str(),
              (unsigned long long)r.version());
  return kExitOk;
}

int RunDeleteWorld(Client& client) {
  const grpc::Status status = client.DeleteWorld(Flags().new_world);
  if (!status.ok()) return Fail("delete-world", status);
  std::printf("ok   world %s deleted\n", Flags().new_world.c_str());
  return kExitOk;
}

// Worlds on the server (issue 22).
void AddWorldCommands(CliApp& cli) {
  CliOptions& f = Flags();
  Command(cli, "worlds", "Every world on the server with its version and resident size", RunWorlds);
  CLI::App* create = Command(cli, "create-world", "A new world: generated, or a copy of --template",
                             RunCreateWorld);
  create->add_option("--id", f.new_world, "The new world's id ([a-z0-9-_], 1..64)")->required();
  create->add_option("--template", f.template_world, "Copy this world at its current version");
  CLI::App* remove = Command(cli, "delete-world", "Delete a world and its data", RunDeleteWorld);
  remove->add_option("--id", f.new_world, "The world to delete")->required();
}

void AddLoadTest(CliApp& cli, CommandFn loadtest) {
  CliOptions& f = Flags();
  CLI::App* load =
      Command(cli, "loadtest", "Bounded load from this machine; only shedding is tolerated",
              std::move(loadtest));
  load->add_option("--streams", f.streams, "Concurrent Query streams")->check(CLI::PositiveNumber);
  load->add_option("--seconds", f.seconds, "Duration, seconds")->check(CLI::PositiveNumber);
  load->add_option("--batch_size", f.batch_size, "Queries per batch")->check(CLI::PositiveNumber);
  load->add_option("--edit_rate", f.edit_rate, "FillBall edits per second (0: none)")
      ->check(CLI::NonNegativeNumber);
  load->add_flag("--shape_queries", f.shape_queries,
                 "Mix capsule sweeps and contacts into the batches (1 in 8 queries each)");
  load->add_flag("--progress", f.progress,
                 "A progress line a second on stderr even when it is not a terminal");
  load->add_option("--extent", f.extent,
                   "Play area |x|,|z| <= extent around the origin (0: whole world)")
      ->check(CLI::NonNegativeNumber);
}

void AddRender(CliApp& cli, CommandFn render) {
  CliOptions& f = Flags();
  CLI::App* sub = Command(
      cli, "render", "A PNG picture of the world from batched raycasts (top-down or perspective)",
      std::move(render));
  sub->add_option("--out", f.out, "Output PNG file")->required();
  sub->add_option("--mode", f.mode, "top (default): a map from above; perspective: a camera")
      ->check(CLI::IsMember({"top", "perspective"}));
  sub->add_option("--size", f.size, "Picture size in pixels (default 512x512)")
      ->type_name("WIDTHxHEIGHT");
  sub->add_option("--camera", f.camera, "perspective: eye position")->type_name(kVec3);
  sub->add_option("--look_at", f.look_at, "perspective: point looked at (up is +Y)")
      ->type_name(kVec3);
  sub->add_option("--fov", f.fov, "perspective: vertical field of view, degrees");
  sub->add_option("--area", f.area, "top: X,Z area drawn (default: the whole world)")
      ->type_name("MIN_X,MIN_Z,MAX_X,MAX_Z");
  sub->add_option("--top_y", f.top_y,
                  "top: height the rays start at (default: the world top; inside the ground it "
                  "shows a cut-away)");
  sub->add_option("--overlay_ray", f.overlay_ray, "Draw raycasts, several separated by ';'")
      ->type_name("OX,OY,OZ:DX,DY,DZ[:MAX_DISTANCE]");
  sub->add_option("--overlay_sweep", f.overlay_sweep, "Draw sphere sweeps, separated by ';'")
      ->type_name("OX,OY,OZ:DX,DY,DZ:DISTANCE:RADIUS");
  sub->add_option("--overlay_contacts", f.overlay_contacts,
                  "Draw the contact points of spheres, separated by ';'")
      ->type_name("X,Y,Z:RADIUS");
  sub->add_flag("--navmesh", f.navmesh,
                "Draw the navigation mesh's polygon edges (GetNavMesh) of the area shown");
  sub->add_option("--path", f.render_path, "Draw the path FindPath finds between two points")
      ->type_name("X,Y,Z:X,Y,Z");
  sub->add_option("--profile", f.profile, "Agent profile of --navmesh and --path (empty: default)");
  sub->add_flag("--plain", f.plain,
                "The picture only: no legend, scale bar or axis labels (drawn from 160x120 up)");
}

}  // namespace

CliOptions& Flags() {
  static CliOptions options;
  return options;
}

bool Given(const std::string& option) {
  if (g_app == nullptr) return false;
  for (const CLI::App* sub : g_app->get_subcommands()) {  // the parsed command
    if (const CLI::Option* o = sub->get_option_no_throw(option); o != nullptr && o->count() > 0) {
      return true;
    }
  }
  const CLI::Option* o = g_app->get_option_no_throw(option);
  return o != nullptr && o->count() > 0;
}

void BuildApp(CliApp& cli, CommandFn info, CommandFn health, CommandFn loadtest, CommandFn render) {
  CliOptions& f = Flags();
  CLI::App& app = cli.app;
  g_app = &app;
  app.option_defaults()->always_capture_default();  // --help shows each default
  app.require_subcommand(1);
  app.add_option("--server", f.server, "Server address host:port")->envname("VOXCOL_SERVER");
  app.add_option("--world", f.world,
                 "World the command is about (empty: the server's default world)")
      ->envname("VOXCOL_WORLD");
  app.add_flag("--json", f.json, "Print responses as JSON (protobuf JSON mapping)");
  app.add_option("--timeout_ms", f.timeout_ms, "Deadline for each call, milliseconds")
      ->check(CLI::PositiveNumber);
  app.add_flag("--tls", f.tls, "Connect with TLS (implied by --tls_ca and --tls_cert)");
  app.add_option("--tls_ca", f.tls_ca,
                 "PEM CA bundle that signed the server's certificate (default: the system roots)");
  app.add_option("--tls_cert", f.tls_cert,
                 "PEM client certificate for mutual TLS (with --tls_key)");
  app.add_option("--tls_key", f.tls_key, "PEM private key of --tls_cert");
  app.add_option("--tls_server_name", f.tls_server_name,
                 "Name expected in the server's certificate, if not the --server host");
  app.add_option("--token", f.token,
                 "Bearer token sent with every call (visible in the process list: prefer "
                 "$VOXCOL_TOKEN or --token_file)");
  app.add_option("--token_file", f.token_file, "File holding the bearer token (first line)");
  app.footer(
      "Exit codes: 0 ok, 1 server error, 2 usage (or a local file that cannot be written),\n"
      "3 server unreachable or no answer within --timeout_ms.\n"
      "Run 'voxcol <command> --help' for a command's options; the global options (--server,\n"
      "--json, --timeout_ms, --tls..., --token...) may also follow the command.");
  Command(cli, "info", "World bounds, voxel size, seed, version", std::move(info));
  Command(cli, "health", "SERVING / NOT_SERVING (exit 0 only when serving)", std::move(health));
  AddQueryCommands(cli);
  AddValidateHit(cli);
  AddPath(cli);
  AddBodyCommands(cli);
  AddPrimitiveCommands(cli);
  AddDataCommands(cli);
  AddWorldCommands(cli);
  AddLoadTest(cli, std::move(loadtest));
  AddRender(cli, std::move(render));
  Command(cli, "completion",
          "Print a bash completion script (source it, or put it in "
          "/etc/bash_completion.d/voxcol)",
          nullptr);
}

namespace {

// The first word of argv that is neither an option nor an option's value: the command.
std::string CommandWord(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("-", 0) != 0) return word;
    const CLI::Option* o = app.get_option_no_throw(word);
    // "--server HOST": the next word is the option's value.
    if (word.find('=') == std::string::npos && o != nullptr && o->get_items_expected_min() > 0) {
      ++i;
    }
  }
  return "";
}

}  // namespace

std::string UnknownCommandMessage(const CLI::App& app, int argc, char** argv) {
  const std::string word = CommandWord(app, argc, argv);
  if (word.empty()) return "";
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(word)) return "";
  }
  // The closest commands: the fewest edits (at most 2, or a third of the word), or every command
  // the word starts ("fill" -> fill-ball, fill-block, ...).
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  size_t best = limit + 1;
  std::vector<std::string> close, prefixed;
  for (const CLI::App* sub : app.get_subcommands({})) {
    const std::string& name = sub->get_name();
    if (word.size() >= 3 && name.rfind(word, 0) == 0) prefixed.push_back(name);
    const size_t d = EditDistance(word, name);
    if (d < best) close.clear(), best = d;
    if (d == best) close.push_back(name);
  }
  if (close.empty()) close = prefixed;
  std::string message = absl::StrCat("unknown command '", word, "'");
  if (close.empty()) return absl::StrCat(message, "; 'voxcol --help' lists the commands");
  return absl::StrCat(message, "; did you mean ", absl::StrJoin(close, " or "), "?");
}

std::string BashCompletion(const CLI::App& app) {
  std::vector<std::string> commands;
  std::string cases;
  auto option_names = [](const CLI::App& a) {
    std::vector<std::string> names;
    for (const CLI::Option* o : a.get_options()) {
      for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    }
    return names;
  };
  const std::vector<std::string> global = option_names(app);
  for (const CLI::App* sub : app.get_subcommands({})) {
    commands.push_back(sub->get_name());
    std::vector<std::string> names = option_names(*sub);
    names.insert(names.end(), global.begin(), global.end());
    absl::StrAppend(&cases, "    ", sub->get_name(), ") opts=\"", absl::StrJoin(names, " "),
                    "\" ;;\n");
  }
  return absl::StrCat(
      "# bash completion for voxcol (generated by `voxcol completion`)\n"
      "_voxcol() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" command=\"\" opts=\"\" w\n"
      "  for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n"
      "    case \"$w\" in -*) ;; *) command=\"$w\"; break ;; esac\n"
      "  done\n"
      "  case \"$command\" in\n",
      cases, "    *) opts=\"", absl::StrJoin(commands, " "), " ", absl::StrJoin(global, " "),
      "\" ;;\n"
      "  esac\n"
      "  COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
      "}\n"
      "complete -F _voxcol voxcol\n");
}

}  // namespace voxcol::client
