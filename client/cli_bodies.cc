#include "client/cli_bodies.h"

#include <cstdio>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "client/cli_common.h"
#include "client/cli_flags.h"
#include "google/protobuf/util/json_util.h"

namespace voxcol::client {

namespace {

// "1,2,3" into ids; false on anything else.
bool ParseIds(const std::string& text, std::vector<uint64_t>* ids) {
  if (text.empty()) return true;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    uint64_t id = 0;
    if (!absl::SimpleAtoi(part, &id)) return false;
    ids->push_back(id);
  }
  return true;
}

}  // namespace

// The body filter of --bodies and its options (BodyFilterFromFlags).
std::string FilterFromFlags(v1::BodyFilter* filter);

int RunUpdateBodies(Client& client) {
  std::string json = Flags().request;
  if (json.empty()) return Usage("update-bodies needs --request=JSON or --request=@FILE");
  if (json[0] == '@' && !ReadFile(json.substr(1), &json)) {
    return Usage("--request: cannot read " + Flags().request.substr(1));
  }
  v1::UpdateBodiesRequest request;
  if (auto s = google::protobuf::util::JsonStringToMessage(json, &request); !s.ok()) {
    return Usage("--request is not an UpdateBodiesRequest in JSON: " + std::string(s.message()));
  }
  v1::UpdateBodiesResponse r;
  if (int done = FailedOrJson("update-bodies", client.UpdateBodies(request, &r), r);
      done != kPrintSummary) {
    return done;
  }
  std::printf("tick %lld: %d bodies, oldest tick kept %lld, history %lld bytes\n",
              (long long)r.tick(), r.body_count(), (long long)r.oldest_tick(),
              (long long)r.history_bytes());
  return kExitOk;
}

int RunListBodies(Client& client) {
  v1::ListBodiesResponse r;
  if (int done = FailedOrJson("list-bodies", client.ListBodies({}, &r), r); done != kPrintSummary) {
    return done;
  }
  if (!r.has_ticks()) {
    std::printf("no bodies (no tick applied yet)\n");
    return kExitOk;
  }
  std::printf("%d bodies at tick %lld (ticks %lld..%lld kept, %lld bytes)\n", r.bodies_size(),
              (long long)r.latest_tick(), (long long)r.oldest_tick(), (long long)r.latest_tick(),
              (long long)r.history_bytes());
  for (const v1::BodySummary& b : r.bodies()) {
    std::printf("  body %llu owner %llu layer %u, %d parts, at %s\n", (unsigned long long)b.id(),
                (unsigned long long)b.owner(), b.layer(), b.part_count(),
                Fmt(b.position()).c_str());
  }
  return kExitOk;
}

std::string FilterFromFlags(v1::BodyFilter* filter) {
  const CliOptions& f = Flags();
  if (f.body_scope == "both") {
    filter->set_scope(v1::BODY_SCOPE_TERRAIN_AND_BODIES);
  } else if (f.body_scope == "bodies") {
    filter->set_scope(v1::BODY_SCOPE_BODIES);
  } else if (f.body_scope == "terrain") {
    filter->set_scope(v1::BODY_SCOPE_TERRAIN);
  } else {
    return "--body_scope must be both, bodies or terrain";
  }
  filter->set_layer_mask(f.layer_mask);
  std::vector<uint64_t> ignore;
  if (!ParseIds(f.ignore, &ignore)) return "--ignore must be body ids, e.g. 1,2";
  for (uint64_t id : ignore) filter->add_ignore_ids(id);
  if (!f.tick.empty()) {
    int64_t tick = 0;
    if (!absl::SimpleAtoi(f.tick, &tick)) return "--tick must be a game tick number";
    filter->set_tick(tick);
  }
  return "";
}

std::string BodyFilterFromFlags(v1::RaycastRequest* request) {
  return Flags().bodies ? FilterFromFlags(request->mutable_body_filter()) : "";
}

std::string BodyFilterFromFlags(v1::OverlapRequest* request) {
  return Flags().bodies ? FilterFromFlags(request->mutable_body_filter()) : "";
}

void PrintBodyParts(const v1::OverlapResponse& response) {
  for (const v1::BodyHit& hit : response.bodies()) PrintBodyHit(hit);
}

std::string BodyClaimFromFlags(v1::ValidateHitRequest* request) {
  const CliOptions& f = Flags();
  v1::BodyClaim* claim = request->mutable_target_body();
  uint64_t id = 0;
  int64_t tick = 0;
  if (!absl::SimpleAtoi(f.target_body, &id)) return "--target_body must be a body id";
  if (!absl::SimpleAtoi(f.tick, &tick)) return "validate-hit --target_body needs --tick=TICK";
  claim->set_body_id(id);
  claim->set_part_id(f.part);
  claim->set_tick(tick);
  claim->set_layer_mask(f.layer_mask);
  std::vector<uint64_t> ignore;
  if (!ParseIds(f.ignore, &ignore)) return "--ignore must be body ids, e.g. 1,2";
  for (uint64_t i : ignore) claim->add_ignore_ids(i);
  return "";
}

void PrintBodyHit(const v1::BodyHit& hit) {
  std::printf("     body %llu part %u, owner %llu, at tick %lld\n",
              (unsigned long long)hit.body_id(), hit.part_id(), (unsigned long long)hit.owner(),
              (long long)hit.tick());
}

const char* VerdictName(v1::HitVerdict verdict) {
  switch (verdict) {
    case v1::HIT_VERDICT_CONFIRMED:
      return "CONFIRMED";
    case v1::HIT_VERDICT_BLOCKED_BY_TERRAIN:
      return "BLOCKED_BY_TERRAIN";
    case v1::HIT_VERDICT_NO_TERRAIN_AT_CLAIM:
      return "NO_TERRAIN_AT_CLAIM";
    case v1::HIT_VERDICT_BLOCKED_BY_BODY:
      return "BLOCKED_BY_BODY";
    case v1::HIT_VERDICT_OTHER_PART:
      return "OTHER_PART";
    case v1::HIT_VERDICT_NOT_ON_SHOT:
      return "NOT_ON_SHOT";
    default:
      return "UNSPECIFIED";
  }
}

}  // namespace voxcol::client
