#include "server/nav/nav_profiles.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace voxcol::server {

namespace {

absl::Status Bad(absl::string_view profile, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("--nav_profiles: profile \"", profile, "\": ", why));
}

bool ValidName(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
  }
  return true;
}

// Sets one `key=value` of a profile.
absl::Status SetField(absl::string_view name, absl::string_view item, AgentProfile* p) {
  std::pair<absl::string_view, absl::string_view> kv =
      absl::StrSplit(item, absl::MaxSplits('=', 1));
  const absl::string_view key = absl::StripAsciiWhitespace(kv.first);
  const absl::string_view value = absl::StripAsciiWhitespace(kv.second);
  if (key == "can_jump" || key == "can_swim") {
    bool b = false;
    if (!absl::SimpleAtob(value, &b))
      return Bad(name, absl::StrCat(key, "=", value, " is not a bool"));
    (key == "can_jump" ? p->can_jump : p->can_swim) = b;
    return absl::OkStatus();
  }
  float* field = key == "radius"              ? &p->radius
                 : key == "height"            ? &p->height
                 : key == "max_climb"         ? &p->max_climb
                 : key == "max_slope_degrees" ? &p->max_slope_degrees
                 : key == "jump_height"       ? &p->jump_height
                                              : nullptr;
  if (field == nullptr) return Bad(name, absl::StrCat("unknown key \"", key, "\""));
  if (!absl::SimpleAtof(value, field)) {
    return Bad(name, absl::StrCat(key, "=", value, " is not a number"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AgentProfile> NavProfiles::Find(absl::string_view name,
                                               absl::string_view field) const {
  if (name.empty()) name = default_name;
  auto it = named.find(name);
  if (it != named.end()) return it->second;
  std::vector<absl::string_view> known;
  for (const auto& [n, p] : named) known.push_back(n);
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": unknown agent profile \"", name,
                   "\" (the server's --nav_profiles: ", absl::StrJoin(known, ", "), ")"));
}

absl::StatusOr<NavProfiles> ParseNavProfiles(absl::string_view spec,
                                             absl::string_view default_name) {
  NavProfiles profiles;
  for (absl::string_view entry : absl::StrSplit(spec, ';', absl::SkipWhitespace())) {
    std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(entry, absl::MaxSplits(':', 1));
    const absl::string_view name = absl::StripAsciiWhitespace(parts.first);
    if (!ValidName(name)) return Bad(name, "a name is 1..64 characters of [a-z0-9-_]");
    if (profiles.named.count(name) != 0) return Bad(name, "defined twice");
    AgentProfile profile;
    for (absl::string_view item : absl::StrSplit(parts.second, ',', absl::SkipWhitespace())) {
      if (absl::Status s = SetField(name, item, &profile); !s.ok()) return s;
    }
    if (absl::Status s = ValidateAgentProfile(profile); !s.ok()) return Bad(name, s.message());
    profiles.named.emplace(std::string(name), profile);
  }
  profiles.named.try_emplace("default", AgentProfile{});
  profiles.default_name = std::string(default_name);
  if (profiles.named.count(default_name) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("--nav_default_profile: \"", default_name,
                                                   "\" is not a profile of --nav_profiles"));
  }
  return profiles;
}

}  // namespace voxcol::server
