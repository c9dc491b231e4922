// The real server with TLS, mutual TLS, bearer tokens and quotas, driven by the CLI and the client
// library over loopback; certificates are made with the openssl CLI at test time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/http_get.h"
#include "tests/integration/security_fixture.h"
#include "voxcol/v1/admin_service.pb.h"
#include "voxcol/v1/edit_service.pb.h"

namespace voxcol {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::SecurityFixture;

v1::FillBallRequest SmallBall() {
  v1::FillBallRequest r;
  r.mutable_center()->set_y(10);
  r.set_radius(2);
  r.set_material(2);
  return r;
}

v1::ExportRegionRequest SmallExport() {
  v1::ExportRegionRequest r;
  r.mutable_box()->mutable_min()->set_x(0);
  r.mutable_box()->mutable_max()->set_x(8);
  r.mutable_box()->mutable_max()->set_y(8);
  r.mutable_box()->mutable_max()->set_z(8);
  return r;
}

class SecurityAuthTest : public SecurityFixture {
 protected:
  void StartTlsServer(bool mutual) {
    std::vector<std::string> args = {"--tls_cert=" + Cert("server.crt"),
                                     "--tls_key=" + Cert("server.key"),
                                     "--auth_tokens=" + Cert("tokens")};
    if (mutual) args.push_back("--tls_client_ca=" + Cert("ca.crt"));
    StartServer(args);
  }
  std::vector<std::string> TlsFlags(const std::string& client_cert = "") {
    std::vector<std::string> flags = {"--tls_ca=" + Cert("ca.crt")};
    if (!client_cert.empty()) {
      flags.push_back("--tls_cert=" + Cert(client_cert + ".crt"));
      flags.push_back("--tls_key=" + Cert(client_cert + ".key"));
    }
    return flags;
  }
  CommandResult CliWith(std::vector<std::string> flags, const std::vector<std::string>& args) {
    flags.insert(flags.end(), args.begin(), args.end());
    return Cli(flags);
  }
};

TEST_F(SecurityAuthTest, RolesDecideWhatATokenMayCall) {
  StartTlsServer(false);
  v1::GetWorldInfoResponse info;
  v1::EditAck ack;
  v1::ExportRegionResponse exported;
  v1::CreateCheckpointResponse checkpoint;
  v1::CreateCheckpointRequest checkpoint_request;
  checkpoint_request.set_dir("cp1");

  auto anonymous = MakeClient(Security(""));
  EXPECT_EQ(anonymous->GetWorldInfo(&info).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(anonymous->FillBall(SmallBall(), &ack).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  auto wrong = MakeClient(Security("not-a-token"));
  EXPECT_EQ(wrong->GetWorldInfo(&info).error_code(), grpc::StatusCode::UNAUTHENTICATED);

  auto reader = MakeClient(Security("query-secret"));
  EXPECT_TRUE(reader->GetWorldInfo(&info).ok());
  grpc::Status denied = reader->FillBall(SmallBall(), &ack);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED) << denied.error_message();
  EXPECT_NE(denied.error_message().find("edit role"), std::string::npos);
  EXPECT_EQ(reader->ExportRegion(SmallExport(), &exported).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  auto builder = MakeClient(Security("edit-secret"));
  ASSERT_TRUE(builder->FillBall(SmallBall(), &ack).ok());
  EXPECT_EQ(ack.version(), 1u);
  EXPECT_EQ(builder->CreateCheckpoint(checkpoint_request, &checkpoint).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(builder->ExportRegion(SmallExport(), &exported).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/backups/cp1"));

  auto admin = MakeClient(Security("admin-secret"));
  ASSERT_TRUE(admin->CreateCheckpoint(checkpoint_request, &checkpoint).ok());
  EXPECT_EQ(checkpoint.version(), 1u);
  EXPECT_TRUE(admin->ExportRegion(SmallExport(), &exported).ok());
  EXPECT_TRUE(admin->FillBall(SmallBall(), &ack).ok());  // admin implies edit

  // Health checks need no token (load balancers, the container's health check).
  CommandResult health = CliWith(TlsFlags(), {"health"});
  EXPECT_EQ(health.exit_code, 0) << health.err;
}

TEST_F(SecurityAuthTest, TlsEndToEndWithTheCli) {
  StartTlsServer(false);
  CommandResult ok = CliWith(TlsFlags(), {"--token=query-secret", "info"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("version"), std::string::npos);
  CommandResult no_token = CliWith(TlsFlags(), {"info"});
  EXPECT_NE(no_token.exit_code, 0);
  EXPECT_NE(no_token.err.find("UNAUTHENTICATED"), std::string::npos) << no_token.err;
  CommandResult denied = CliWith(TlsFlags(), {"--token=query-secret", "fill-ball",
                                              "--center=0,10,0", "--radius=2", "--material=rock"});
  EXPECT_NE(denied.err.find("PERMISSION_DENIED"), std::string::npos) << denied.err;
  // A plaintext client cannot talk to the TLS port, and a client that does not trust the
  // server's CA refuses it.
  CommandResult plaintext = Cli({"--token=query-secret", "info"});
  EXPECT_EQ(plaintext.exit_code, 3) << plaintext.err;
  CommandResult untrusted_server =
      Cli({"--tls_ca=" + Cert("rogue-ca.crt"), "--token=query-secret", "info"});
  EXPECT_EQ(untrusted_server.exit_code, 3) << untrusted_server.err;
}

TEST_F(SecurityAuthTest, MutualTlsNeedsATrustedClientCertificate) {
  StartTlsServer(true);
  CommandResult ok =
      CliWith(TlsFlags("client"), {"--json", "--token=edit-secret", "fill-ball", "--center=0,10,0",
                                   "--radius=2", "--material=rock"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"version\":\"1\""), std::string::npos) << ok.out;
  CommandResult token_env =
      RunCommand({"env", "VOXCOL_TOKEN=query-secret", VOXCOL_CLI_PATH,
                  "--server=" + server_.address(), "--tls_ca=" + Cert("ca.crt"),
                  "--tls_cert=" + Cert("client.crt"), "--tls_key=" + Cert("client.key"), "info"},
                 dir_.path());
  EXPECT_EQ(token_env.exit_code, 0) << token_env.err;
  CommandResult no_cert = CliWith(TlsFlags(), {"--token=query-secret", "info"});
  EXPECT_EQ(no_cert.exit_code, 3) << no_cert.err;
  CommandResult rogue_cert = CliWith(TlsFlags("rogue"), {"--token=query-secret", "info"});
  EXPECT_EQ(rogue_cert.exit_code, 3) << rogue_cert.err;
  EXPECT_TRUE(server_.Running());
}

TEST_F(SecurityAuthTest, AClientOverItsQuotaIsRefusedAndOthersAreNot) {
  // Tokens without TLS on loopback: local credentials, so the gate runs.
  StartServer({"--auth_tokens=" + Cert("tokens"), "--quota_queries_per_second=2",
               "--quota_edits_per_second=1", "--quota_open_streams=1"});
  auto greedy = MakeClient(Security("query-secret", false));
  auto other = MakeClient(Security("other-query-secret", false));
  v1::GetWorldInfoResponse info;
  grpc::Status refused;
  int ok_calls = 0;
  // The bucket holds a second's worth (2 calls) and refills 2 per second: of the calls made
  // before the first refusal, exactly the burst plus what refilled meanwhile may pass.
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20 && refused.ok(); ++i) {
    grpc::Status s = greedy->GetWorldInfo(&info);
    if (s.ok())
      ++ok_calls;
    else
      refused = s;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_GE(ok_calls, 2);
  EXPECT_LE(ok_calls, 2 + int(2 * elapsed)) << "in " << elapsed << " s";
  EXPECT_NE(refused.error_message().find("retry after"), std::string::npos);
  EXPECT_NE(refused.error_message().find("reader"), std::string::npos);
  // Another identity has its own bucket.
  EXPECT_TRUE(other->GetWorldInfo(&info).ok());
  EXPECT_TRUE(other->GetWorldInfo(&info).ok());

  // Edit batches per second.
  auto builder = MakeClient(Security("edit-secret", false));
  v1::EditAck ack;
  grpc::Status edit_refused;
  int ok_edits = 0;
  const auto edits_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10 && edit_refused.ok(); ++i) {
    edit_refused = builder->FillBall(SmallBall(), &ack);
    if (edit_refused.ok()) ++ok_edits;
  }
  const double edits_elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - edits_start).count();
  EXPECT_EQ(edit_refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_GE(ok_edits, 1);  // burst of 1, refilled 1 per second
  EXPECT_LE(ok_edits, 1 + int(edits_elapsed)) << "in " << edits_elapsed << " s";

  // Open streams: the second Subscribe of one identity is refused while the first is open.
  auto admin = MakeClient(Security("admin-secret", false));
  ASSERT_TRUE(admin->GetWorldInfo(&info).ok());
  v1::SubscribeRequest from_now;
  from_now.set_from_version(info.version());
  grpc::ClientContext first_context, second_context, other_context;
  auto first = greedy->Subscribe(&first_context, from_now);
  v1::FillBallRequest change = SmallBall();
  change.set_material(5);  // differs from the balls above, so the feed has a change to send
  ASSERT_TRUE(admin->FillBall(change, &ack).ok());
  ASSERT_GT(ack.changed_chunks(), 0u);
  v1::SubscribeResponse event;
  ASSERT_TRUE(first->Read(&event));  // the first stream is open (and counted)
  auto second = greedy->Subscribe(&second_context, from_now);
  EXPECT_FALSE(second->Read(&event));
  grpc::Status second_status = second->Finish();
  EXPECT_EQ(second_status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << second_status.error_message();
  auto others = other->Subscribe(&other_context, from_now);
  EXPECT_TRUE(others->Read(&event));  // another identity's stream is served
  other_context.TryCancel();
  others->Finish();
  first_context.TryCancel();
  first->Finish();
}

// Issue 36: a call the gate refuses (no token, an unknown token, a role too low, over quota) never
// reaches a handler or the interceptors that log and count the others; each one is still in the
// server log (`event=refused` with its method and code) and in voxcol_rpc_calls_total with its
// code, as many times as the clients saw it.
TEST_F(SecurityAuthTest, RefusedCallsAreLoggedAndCountedWithTheirCode) {
  StartServer({"--auth_tokens=" + Cert("tokens"), "--quota_queries_per_second=2"});
  auto anonymous = MakeClient(Security("", false));
  auto stranger = MakeClient(Security("no-such-token", false));
  auto reader = MakeClient(Security("query-secret", false));
  v1::GetWorldInfoResponse info;
  v1::EditAck ack;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(anonymous->GetWorldInfo(&info).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(stranger->GetWorldInfo(&info).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(reader->FillBall(SmallBall(), &ack).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  // The reader's query bucket: 2 calls, refilled 2 per second; count what the client saw.
  int over_quota = 0, admitted = 0;
  for (int i = 0; i < 12; ++i) {
    const grpc::Status status = reader->GetWorldInfo(&info);
    if (status.ok()) {
      ++admitted;
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      ++over_quota;
    }
  }
  ASSERT_GT(over_quota, 0);

  const std::string metrics = testing::HttpGet(server_.metrics_port(), "/metrics");
  auto calls = [&](const std::string& method, const std::string& code) {
    return testing::MetricValue(
        metrics, "voxcol_rpc_calls_total{method=\"" + method + "\",code=\"" + code + "\"}");
  };
  EXPECT_EQ(calls("WorldService/GetWorldInfo", "UNAUTHENTICATED"), 5) << metrics;
  EXPECT_EQ(calls("EditService/FillBall", "PERMISSION_DENIED"), 2);
  EXPECT_EQ(calls("WorldService/GetWorldInfo", "RESOURCE_EXHAUSTED"), over_quota);
  EXPECT_EQ(calls("WorldService/GetWorldInfo", "OK"), admitted);

  server_.Stop();
  auto logged = [&](const std::string& method, const std::string& code) {
    int lines = 0;
    std::istringstream log(server_.Log());
    for (std::string line; std::getline(log, line);) {
      lines += line.find("event=refused") != std::string::npos &&
               line.find("method=" + method + " ") != std::string::npos &&
               line.find("code=" + code + " ") != std::string::npos;
    }
    return lines;
  };
  EXPECT_EQ(logged("/voxcol.v1.WorldService/GetWorldInfo", "UNAUTHENTICATED"), 5) << server_.Log();
  EXPECT_EQ(logged("/voxcol.v1.EditService/FillBall", "PERMISSION_DENIED"), 2);
  EXPECT_EQ(logged("/voxcol.v1.WorldService/GetWorldInfo", "RESOURCE_EXHAUSTED"), over_quota);
}

// A flood of refused calls is counted in full but logged at most 100 lines a second; the first
// line after a busier second says how many were left out, so logged + left out = refused.
TEST_F(SecurityAuthTest, AFloodOfRefusedCallsIsCountedInFullAndLoggedAtARate) {
  StartServer({"--auth_tokens=" + Cert("tokens")});
  auto anonymous = MakeClient(Security("", false));
  v1::GetWorldInfoResponse info;
  constexpr int kFlood = 300;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kFlood; ++i) {
    ASSERT_EQ(anonymous->GetWorldInfo(&info).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // One more after a quiet second reports what the last busy second left out.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(anonymous->GetWorldInfo(&info).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  const std::string metrics = testing::HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_EQ(
      testing::MetricValue(
          metrics,
          "voxcol_rpc_calls_total{method=\"WorldService/GetWorldInfo\",code=\"UNAUTHENTICATED\"}"),
      kFlood + 1);
  server_.Stop();
  int logged = 0;
  int64_t left_out = 0;
  std::istringstream log(server_.Log());
  for (std::string line; std::getline(log, line);) {
    if (line.find("event=refused ") != std::string::npos) ++logged;
    const size_t at = line.find("event=refusals_not_logged count=");
    if (at != std::string::npos) left_out += std::stoll(line.substr(at + 32));
  }
  std::printf("%d refused calls in %.2f s: %d logged, %lld left out of the log\n", kFlood + 1,
              seconds, logged, static_cast<long long>(left_out));
  EXPECT_EQ(logged + left_out, kFlood + 1);
  // At most 100 lines in each second the flood touched (and the last call's own line).
  EXPECT_LE(logged, 100 * (int(seconds) + 2) + 1);
  if (seconds < 1.0) EXPECT_GT(left_out, 0);
}

TEST_F(SecurityAuthTest, ANonLoopbackAddressNeedsTlsAndTokensOrInsecure) {
  const std::string data = "--data_dir=" + dir_.path() + "/data";
  CommandResult refused = RunCommand({VOXCOL_SERVER_PATH, data, "--world_size=64,64,64",
                                      "--listen=0.0.0.0:0", "--metrics_listen="},
                                     dir_.path());
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("refusing to serve on the non-loopback address 0.0.0.0:0"),
            std::string::npos)
      << refused.err;
  CommandResult tokens_in_clear =
      RunCommand({VOXCOL_SERVER_PATH, data, "--world_size=64,64,64", "--listen=0.0.0.0:0",
                  "--metrics_listen=", "--auth_tokens=" + Cert("tokens")},
                 dir_.path());
  EXPECT_EQ(tokens_in_clear.exit_code, 2) << tokens_in_clear.err;

  StartServer({"--listen=0.0.0.0:0", "--insecure"});
  EXPECT_NE(server_.Log().find("ERROR event=INSECURE"), std::string::npos) << server_.Log();
  server_.Stop();
  StartServer({"--listen=0.0.0.0:0", "--tls_cert=" + Cert("server.crt"),
               "--tls_key=" + Cert("server.key"), "--auth_tokens=" + Cert("tokens")});
  EXPECT_EQ(server_.Log().find("INSECURE"), std::string::npos);
  EXPECT_EQ(CliWith(TlsFlags(), {"--token=query-secret", "info"}).exit_code, 0);
}

TEST_F(SecurityAuthTest, ASecondServerOnATakenPortExitsWithAClearMessage) {
  StartServer({});
  const std::string taken = "--listen=" + server_.address();
  CommandResult second = RunCommand({VOXCOL_SERVER_PATH, "--data_dir=" + dir_.path() + "/second",
                                     "--world_size=64,64,64", taken, "--metrics_listen="},
                                    dir_.path());
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("event=listen_failed address=" + server_.address()), std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("already in use"), std::string::npos) << second.err;
  EXPECT_EQ(second.err.find("event=serving"), std::string::npos) << second.err;
  EXPECT_TRUE(server_.Running());
}

}  // namespace
}  // namespace voxcol
