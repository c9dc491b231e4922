// Every method with a token one role below its own is refused, and with its own role is not
// (issue 43). The expected roles are this test's own table, not the server's: a method the
// server's table misses (it falls back to admin) fails here, and so does a method added to a
// proto without a row below. Each call sends an empty request, so the methods that are allowed
// mostly answer INVALID_ARGUMENT or stream until the deadline; only the gate's codes count.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/integration/generic_call.h"
#include "tests/integration/security_fixture.h"

namespace voxcol::testing {
namespace {

enum class Role { kOpen, kQuery, kEdit, kAdmin };

// The roles of docs/security.md, by method path.
const std::map<std::string, Role>& ExpectedRoles() {
  static const auto* roles = new std::map<std::string, Role>{
      {"/grpc.health.v1.Health/Check", Role::kOpen},
      {"/grpc.health.v1.Health/Watch", Role::kOpen},
      {"/voxcol.v1.WorldService/GetWorldInfo", Role::kQuery},
      {"/voxcol.v1.WorldService/ListWorlds", Role::kQuery},
      {"/voxcol.v1.WorldService/CreateWorld", Role::kAdmin},
      {"/voxcol.v1.WorldService/DeleteWorld", Role::kAdmin},
      {"/voxcol.v1.QueryService/Raycast", Role::kQuery},
      {"/voxcol.v1.QueryService/Sweep", Role::kQuery},
      {"/voxcol.v1.QueryService/Overlap", Role::kQuery},
      {"/voxcol.v1.QueryService/Contacts", Role::kQuery},
      {"/voxcol.v1.QueryService/Probe", Role::kQuery},
      {"/voxcol.v1.QueryService/MoveCharacters", Role::kQuery},
      {"/voxcol.v1.QueryService/Query", Role::kQuery},
      {"/voxcol.v1.QueryService/ValidateHit", Role::kQuery},
      {"/voxcol.v1.QueryService/FindPath", Role::kQuery},
      {"/voxcol.v1.QueryService/WatchPaths", Role::kQuery},
      {"/voxcol.v1.QueryService/GetNavMesh", Role::kQuery},
      {"/voxcol.v1.EditService/ReadVoxels", Role::kQuery},
      {"/voxcol.v1.EditService/Subscribe", Role::kQuery},
      {"/voxcol.v1.EditService/FillBall", Role::kEdit},
      {"/voxcol.v1.EditService/ApplyEdits", Role::kEdit},
      {"/voxcol.v1.EditService/WriteVoxels", Role::kEdit},
      {"/voxcol.v1.EditService/EditStream", Role::kEdit},
      {"/voxcol.v1.AdminService/CreateCheckpoint", Role::kAdmin},
      {"/voxcol.v1.AdminService/ExportRegion", Role::kAdmin},
      {"/voxcol.v1.AdminService/ImportRegion", Role::kAdmin},
      {"/voxcol.v1.ReplicaService/GetReplicaStatus", Role::kQuery},
      {"/voxcol.v1.BodyService/UpdateBodies", Role::kEdit},
      {"/voxcol.v1.BodyService/ListBodies", Role::kQuery},
  };
  return *roles;
}

// The fixture's token of each role; none for open.
std::string TokenOf(Role role) {
  switch (role) {
    case Role::kOpen:
      return "";
    case Role::kQuery:
      return "query-secret";
    case Role::kEdit:
      return "edit-secret";
    case Role::kAdmin:
      return "admin-secret";
  }
  return "";
}

class SecurityRolesTest : public SecurityFixture {
 protected:
  grpc::Status CallAs(Role role, const std::string& path) {
    auto channel = client::MakeChannel(server_.address(), Security(TokenOf(role)));
    return CallWithBytes(channel, path, "", std::chrono::milliseconds(1500));
  }
};

bool Refused(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
         status.error_code() == grpc::StatusCode::PERMISSION_DENIED;
}

TEST_F(SecurityRolesTest, EveryMethodRefusesTheRoleBelowItsOwnAndAcceptsItsOwn) {
  StartServer({"--tls_cert=" + Cert("server.crt"), "--tls_key=" + Cert("server.key"),
               "--auth_tokens=" + Cert("tokens")});
  int checked = 0;
  for (const google::protobuf::MethodDescriptor* method : AllServerMethods()) {
    const std::string path = MethodPath(*method);
    auto it = ExpectedRoles().find(path);
    ASSERT_NE(it, ExpectedRoles().end())
        << path << " has no role in this test's table (and maybe none in server/security/auth.cc)";
    const Role role = it->second;
    const grpc::Status own = CallAs(role, path);
    EXPECT_FALSE(Refused(own)) << path << " with its own role: " << own.error_message();
    if (role == Role::kOpen) continue;
    const Role below = Role(int(role) - 1);
    const grpc::Status refused = CallAs(below, path);
    // No token at all is UNAUTHENTICATED; a token of a lower role is PERMISSION_DENIED.
    EXPECT_EQ(refused.error_code(), below == Role::kOpen ? grpc::StatusCode::UNAUTHENTICATED
                                                         : grpc::StatusCode::PERMISSION_DENIED)
        << path << " one role below its own: " << refused.error_message();
    ++checked;
  }
  EXPECT_EQ(checked + 2, int(ExpectedRoles().size()));  // every row was a method (2 are open)
  // The query role of QueryService's unary methods is a rule over the methods the service
  // defines: a path it does not define needs admin like any unknown method.
  const std::string unknown = "/voxcol.v1.QueryService/NoSuchMethod";
  EXPECT_EQ(CallAs(Role::kEdit, unknown).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(CallAs(Role::kAdmin, unknown).error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

}  // namespace
}  // namespace voxcol::testing
