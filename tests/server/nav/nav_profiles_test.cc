// --nav_profiles parsing and the profile lookup FindPath requests use (server/nav/nav_profiles.h).
#include "server/nav/nav_profiles.h"

#include <gtest/gtest.h>

#include <string>

namespace voxcol::server {
namespace {

TEST(NavProfilesTest, ParsesNamedProfilesOverTheDefaults) {
  absl::StatusOr<NavProfiles> p = ParseNavProfiles(
      "small:radius=0.3,height=1 ; swimmer:can_swim=true,max_slope_degrees=30", "small");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->named.size(), 3u);  // and "default"
  const AgentProfile small = p->named.at("small");
  EXPECT_FLOAT_EQ(small.radius, 0.3f);
  EXPECT_FLOAT_EQ(small.height, 1.0f);
  EXPECT_FLOAT_EQ(small.max_climb, AgentProfile{}.max_climb);
  EXPECT_TRUE(p->named.at("swimmer").can_swim);
  EXPECT_FLOAT_EQ(p->named.at("swimmer").max_slope_degrees, 30);
  EXPECT_FLOAT_EQ(p->named.at("default").radius, AgentProfile{}.radius);
  // An empty name is the default profile.
  absl::StatusOr<AgentProfile> found = p->Find("", "profile");
  ASSERT_TRUE(found.ok());
  EXPECT_FLOAT_EQ(found->radius, 0.3f);
}

TEST(NavProfilesTest, TheDefaultProfileMayBeRedefined) {
  absl::StatusOr<NavProfiles> p = ParseNavProfiles("default:radius=0.8", "default");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FLOAT_EQ(p->named.at("default").radius, 0.8f);
  EXPECT_EQ(p->named.size(), 1u);
}

TEST(NavProfilesTest, BadSpecsNameTheFlagAndTheProfile) {
  const struct {
    const char* spec;
    const char* default_name;
    const char* expect;
  } cases[] = {
      {"a:wings=2", "default", "--nav_profiles: profile \"a\": unknown key \"wings\""},
      {"a:radius=big", "default", "--nav_profiles: profile \"a\": radius=big is not a number"},
      {"a:can_jump=perhaps", "default", "--nav_profiles: profile \"a\": can_jump=perhaps"},
      {"a:radius=-1", "default", "--nav_profiles: profile \"a\": radius must be > 0"},
      {"a:radius=1;a:height=1", "default", "--nav_profiles: profile \"a\": defined twice"},
      {"Big:radius=1", "default", "--nav_profiles: profile \"Big\": a name is"},
      {"a:radius=1", "b", "--nav_default_profile: \"b\" is not a profile"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<NavProfiles> p = ParseNavProfiles(c.spec, c.default_name);
    ASSERT_FALSE(p.ok()) << c.spec;
    EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << c.spec;
    EXPECT_EQ(std::string(p.status().message()).rfind(c.expect, 0), 0u)
        << c.spec << ": " << p.status().message();
  }
}

TEST(NavProfilesTest, AnUnknownNameIsInvalidArgumentListingTheProfiles) {
  absl::StatusOr<NavProfiles> p = ParseNavProfiles("small:radius=0.3", "default");
  ASSERT_TRUE(p.ok());
  absl::StatusOr<AgentProfile> found = p->Find("giant", "profile");
  ASSERT_TRUE(absl::IsInvalidArgument(found.status()));
  EXPECT_EQ(
      found.status().message(),
      "profile: unknown agent profile \"giant\" (the server's --nav_profiles: default, small)");
}

}  // namespace
}  // namespace voxcol::server
