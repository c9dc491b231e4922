// The voxcol CLI's option values. cli_app.cc binds each subcommand's options to these fields
// (CLI11), with the defaults below; the command files read them after parsing.
#pragma once

#include <cstdint>
#include <string>

namespace voxcol::client {

struct CliOptions {
  // Global: accepted before or after the subcommand.
  std::string server = "127.0.0.1:50051";  // also $VOXCOL_SERVER
  std::string world;                       // also $VOXCOL_WORLD; empty: the server's default world
  std::string new_world, template_world;   // create-world, delete-world
  bool json = false;
  int timeout_ms = 10000;
  // Transport security (cli_common.h, ChannelSecurityFromFlags); also $VOXCOL_TOKEN.
  bool tls = false;
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  std::string token, token_file;
  // Queries.
  std::string origin;
  std::string direction = "0,-1,0";
  float max_distance = 1000.0f;
  std::string water = "pass";
  bool stats = false;
  bool all = false;
  std::string center;
  float radius = 0.0f;
  std::string half_extents;
  std::string shape;
  std::string position;
  float half_height = 0.0f;
  float convex_radius = 0.0f;
  std::string points;
  float distance = 0.0f;
  std::string collection = "closest";
  float margin = 0.0f;
  bool skip_water = false;
  bool penetration = false;
  bool voxels = false;
  uint32_t max_voxels = 0;
  std::string displacement;
  int ticks = 1;
  float step_offset = 0.0f;
  float slope_limit = 0.0f;
  int64_t at_version = -1;  // every query command and validate-hit: read this past version
  std::string claimed_hit, target_point;  // validate-hit
  float tolerance = 0.25f;                // validate-hit
  // path (also --radius, --height, --max_distance, --at_version).
  std::string start, goal, profile, costs;
  float max_climb = 0.0f;
  bool can_jump = false, can_swim = false;
  // Bodies: raycast --bodies, validate-hit --target_body, update-bodies --request.
  bool bodies = false;
  std::string body_scope = "both", tick, ignore, target_body, request;
  uint32_t layer_mask = 0, part = 0;
  // Edits.
  std::string material = "rock";
  std::string mode;  // raycast: smooth|blocky; edits: add|subtract|set
  std::string size;
  std::string rotation = "1,0,0,0";
  float height = 0.0f;
  std::string min, max;
  std::string source, target;
  std::string idempotency_key;
  int64_t expected_version = -1;
  std::string batch;
  std::string out, in, at;
  std::string dir;
  std::string file;
  int64_t from = -1;
  int64_t from_version = -1;
  bool include_voxels = false;
  int64_t max_events = 0;
  // path --watch: events to print before exiting (0: until the path is blocked or interrupted).
  bool watch = false;
  int64_t count = 0;
  float shorter_margin = 0;
  // render (also --mode: top|perspective, --out, --size: WIDTHxHEIGHT).
  std::string camera = "0,40,-120";
  std::string look_at = "0,0,0";
  float fov = 60;
  std::string area;
  std::string top_y;
  std::string overlay_ray, overlay_sweep, overlay_contacts;
  bool plain = false;       // no legend, scale bar or axis labels
  bool navmesh = false;     // render: draw the navmesh
  std::string render_path;  // render --path: START:GOAL
  // loadtest.
  int streams = 32;
  double seconds = 60;
  int batch_size = 64;
  double edit_rate = 20;
  bool shape_queries = false;
  float extent = 64;
  bool progress = false;  // loadtest: the progress line also when stderr is not a terminal
};

// The process's options (filled by the command-line parser).
CliOptions& Flags();

// Whether `option` (e.g. "--radius") was given on the command line for the command that runs,
// as opposed to left at its default (cli_app.cc; false before parsing).
bool Given(const std::string& option);

}  // namespace voxcol::client
