// Read replicas follow EVERY world of their primary (issue 22), end to end with the real binaries
// on loopback: a generated world and copies of a template world, edited before and after the
// replica sees them, answer random raycasts on the replica identically to the primary at the same
// version; read-your-writes through RoutedClient on a non-default world; DeleteWorld on the
// primary removes the world on the replica; kill -9 and restart of the replica resumes every
// world from its stored version; CreateWorld/DeleteWorld on the replica are refused naming the
// primary.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/routing.h"
#include "client/voxcol_client.h"
#include "tests/integration/http_get.h"
#include "tests/integration/replica_queries.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/replica_service.grpc.pb.h"

namespace voxcol {
namespace {

using Clock = std::chrono::steady_clock;
using testing::DownRay;
using testing::RandomRay;
using testing::RunBatch;
using testing::ServerProcess;
using testing::SetVec;
using testing::TempDir;

// id -> version of every world on a server (empty map if unreachable).
std::map<std::string, uint64_t> Worlds(client::Client& client) {
  v1::ListWorldsResponse list;
  std::map<std::string, uint64_t> out;
  if (!client.ListWorlds(&list).ok()) return out;
  for (const v1::WorldSummary& w : list.worlds()) out[w.world()] = w.version();
  return out;
}

// Waits until the replica lists exactly the primary's worlds at the primary's versions.
bool WaitForSameWorlds(client::Client& primary, client::Client& replica,
                       std::chrono::seconds timeout) {
  const auto end = Clock::now() + timeout;
  while (Clock::now() < end) {
    const auto p = Worlds(primary);
    if (!p.empty() && Worlds(replica) == p) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// A ball edit in `world`; returns its version (0 on failure).
uint64_t Ball(client::Client& client, const std::string& world, double x, double y, double z,
              int material, grpc::Status* status = nullptr) {
  v1::FillBallRequest request;
  SetVec(request.mutable_center(), x, y, z);
  request.set_radius(3);
  request.set_material(material);
  request.set_world(world);
  v1::EditAck ack;
  grpc::Status s = client.FillBall(request, &ack);
  if (status != nullptr) *status = s;
  return s.ok() ? ack.version() : 0;
}

// Random balls all over `world` (digging and building) on the primary.
void EditWorld(client::Client& primary, const std::string& world, int count, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-56, 56), h(-20, 20);
  for (int i = 0; i < count; ++i) {
    // A ball may change nothing (digging air): then it makes no version, so check the status.
    grpc::Status status;
    Ball(primary, world, u(rng), h(rng), u(rng), i % 2 ? 0 : 2, &status);
    ASSERT_TRUE(status.ok()) << world << ": " << status.error_message();
  }
}

// `count` random raycasts in `world` at `version` against both servers, field by field.
void ExpectSameAnswers(client::Client& a, client::Client& b, const std::string& world,
                       uint64_t version, int count) {
  std::mt19937 rng(77);
  int hits = 0;
  for (int done = 0; done < count; done += 500) {
    v1::QueryBatchRequest request;
    request.set_world(world);
    request.set_min_version(version);
    for (int i = 0; i < 500; ++i) *request.add_queries() = RandomRay(rng);
    v1::QueryBatchResponse ra = RunBatch(a, request), rb = RunBatch(b, request);
    ASSERT_EQ(ra.code(), 0) << world << ": " << ra.message();
    ASSERT_EQ(rb.code(), 0) << world << ": " << rb.message();
    ASSERT_EQ(ra.version(), version) << world;
    ASSERT_EQ(rb.version(), version) << world;
    ASSERT_EQ(ra.results_size(), rb.results_size());
    for (int i = 0; i < ra.results_size(); ++i) {
      hits += ra.results(i).raycast().hit();
      ASSERT_TRUE(google::protobuf::util::MessageDifferencer::Equals(ra.results(i), rb.results(i)))
          << world << " query " << done + i << ":\n"
          << ra.results(i).DebugString() << "vs\n"
          << rb.results(i).DebugString();
    }
  }
  EXPECT_GT(hits, count / 10) << world;  // the comparison covered surfaces, not only misses
}

// Every world of the primary answered identically by the replica.
void ExpectAllWorldsSame(client::Client& p, client::Client& r, int count) {
  for (const auto& [world, version] : Worlds(p)) {
    ExpectSameAnswers(p, r, world, version, count);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

grpc::Status CreateWorld(client::Client& client, const std::string& id, uint64_t seed,
                         const std::string& template_world) {
  v1::CreateWorldRequest request;
  request.set_world(id);
  if (template_world.empty()) {
    request.mutable_settings()->set_seed(seed);
  } else {
    request.set_template_world(template_world);
  }
  v1::WorldSummary summary;
  return client.CreateWorld(request, &summary);
}

struct Cluster {
  TempDir dir;
  ServerProcess primary, replica;
  std::vector<std::string> ReplicaArgs() const {
    return {"--data_dir=" + dir.path() + "/r/data", "--replica_of=" + primary.address(),
            "--query_threads=2"};
  }
  bool StartReplica() {
    std::filesystem::create_directories(dir.path() + "/r");
    return replica.Start(VOXCOL_SERVER_PATH, ReplicaArgs(), dir.path() + "/r");
  }
};

TEST(ReplicaWorldsTest, ReplicaFollowsEveryWorld) {
  Cluster c;
  ASSERT_TRUE(c.primary.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + c.dir.path() + "/p", "--seed=5",
                               "--world_size=128,96,128", "--query_threads=2"},
                              c.dir.path()));
  client::Client p(c.primary.address());
  // Before the replica exists: a generated world, a template, and two copies of the edited
  // template, all edited (the copies after they were made). match-1 was copied before the
  // template's last edits, so no replica template is ever at its version: the replica copies it
  // from the primary (ExportRegion). match-2 was copied from the template as it still is: the
  // replica copies it from its own template.
  ASSERT_TRUE(CreateWorld(p, "gen", 11, "").ok());
  ASSERT_TRUE(CreateWorld(p, "tmpl", 23, "").ok());
  EditWorld(p, "gen", 10, 1);
  EditWorld(p, "tmpl", 12, 2);
  ASSERT_TRUE(CreateWorld(p, "match-1", 0, "tmpl").ok());
  EditWorld(p, "tmpl", 3, 3);
  ASSERT_TRUE(CreateWorld(p, "match-2", 0, "tmpl").ok());
  EditWorld(p, "match-1", 6, 4);
  EditWorld(p, "match-2", 4, 5);
  EditWorld(p, "", 4, 6);

  ASSERT_TRUE(c.StartReplica());
  client::Client r(c.replica.address());
  // Generous: a starved host (benchmarks beside the tests) makes this take 10x its ~1 s.
  ASSERT_TRUE(WaitForSameWorlds(p, r, std::chrono::seconds(60))) << c.replica.Log();
  EXPECT_TRUE(c.replica.WaitForLog("event=replica_reseeded world=match-1")) << c.replica.Log();
  EXPECT_TRUE(c.replica.WaitForLog("event=replica_world_copied world=match-2")) << c.replica.Log();
  // After the replica saw them: more edits, and a third copy made while the replica runs (from
  // the replica's own template; had the template been edited before the replica's next poll, it
  // would be copied from the primary), then the template edited (never in the copies).
  EditWorld(p, "gen", 5, 7);
  EditWorld(p, "match-1", 5, 8);
  EditWorld(p, "match-2", 3, 9);
  ASSERT_TRUE(CreateWorld(p, "match-3", 0, "tmpl").ok());
  EditWorld(p, "match-3", 5, 10);
  ASSERT_TRUE(WaitForSameWorlds(p, r, std::chrono::seconds(30))) << c.replica.Log();
  EXPECT_TRUE(c.replica.WaitForLog("event=replica_world_copied world=match-3")) << c.replica.Log();
  EditWorld(p, "tmpl", 3, 11);
  ASSERT_TRUE(WaitForSameWorlds(p, r, std::chrono::seconds(30))) << c.replica.Log();
  EXPECT_EQ(Worlds(r).size(), 6u);
  ExpectAllWorldsSame(p, r, 2000);
  ASSERT_FALSE(HasFatalFailure());
  {  // What the replica polls: the same worlds and versions without the resident-chunk walk.
    v1::ListWorldsRequest request;
    request.set_skip_resident_bytes(true);
    v1::ListWorldsResponse cheap;
    grpc::ClientContext context;
    ASSERT_TRUE(v1::WorldService::NewStub(p.channel())->ListWorlds(&context, request, &cheap).ok());
    std::map<std::string, uint64_t> versions;
    for (const v1::WorldSummary& w : cheap.worlds()) {
      versions[w.world()] = w.version();
      EXPECT_EQ(w.resident_bytes(), 0u) << w.world();
    }
    EXPECT_EQ(versions, Worlds(p));
    v1::ListWorldsResponse full;
    ASSERT_TRUE(p.ListWorlds(&full).ok());
    EXPECT_GT(full.worlds(0).resident_bytes(), 0u) << full.worlds(0).world();
  }
  {  // Copies made from the replica's template say so, like the primary's.
    v1::ListWorldsResponse mine, theirs;
    ASSERT_TRUE(r.ListWorlds(&mine).ok());
    ASSERT_TRUE(p.ListWorlds(&theirs).ok());
    ASSERT_EQ(mine.worlds_size(), theirs.worlds_size());
    for (int i = 0; i < mine.worlds_size(); ++i) {
      const v1::WorldSummary &a = mine.worlds(i), &b = theirs.worlds(i);
      if (a.world() != "match-2" && a.world() != "match-3") continue;
      EXPECT_EQ(a.template_world(), b.template_world()) << a.world();
      EXPECT_EQ(a.template_version(), b.template_version()) << a.world();
    }
  }

  // Per-world status and metrics.
  {
    v1::GetReplicaStatusResponse status;
    grpc::ClientContext context;
    ASSERT_TRUE(
        v1::ReplicaService::NewStub(r.channel())->GetReplicaStatus(&context, {}, &status).ok());
    ASSERT_EQ(status.worlds_size(), 6);
    const auto primary_worlds = Worlds(p);
    for (const v1::WorldReplicaStatus& w : status.worlds()) {
      EXPECT_EQ(w.applied_version(), primary_worlds.at(w.world())) << w.world();
      EXPECT_EQ(w.lag_versions(), 0u) << w.world();
      if (w.world() == "match-1") {
        EXPECT_EQ(w.reseeds(), 1u) << "seeded from ExportRegion";
      }
      if (w.world() == "match-2") {
        EXPECT_EQ(w.reseeds(), 0u) << "copied from the local template";
      }
    }
    EXPECT_EQ(status.applied_version(), primary_worlds.at("default"));
    const std::string metrics = testing::HttpGet(c.replica.metrics_port(), "/metrics");
    EXPECT_EQ(testing::MetricValue(metrics, "voxcol_replica_world_applied_version{world=\"gen\"}"),
              double(primary_worlds.at("gen")));
  }

  // CreateWorld, DeleteWorld and edits on the replica are refused naming the primary.
  for (const grpc::Status& refused : {CreateWorld(r, "other", 3, ""), r.DeleteWorld("gen"), [&] {
                                        grpc::Status s;
                                        Ball(r, "match-1", 0, 30, 0, 3, &s);
                                        return s;
                                      }()}) {
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(refused.error_message().find(c.primary.address()), std::string::npos)
        << refused.error_message();
  }

  // Read-your-writes through RoutedClient on a non-default world: every batch is answered by the
  // replica (the primary's batch counter does not move).
  {
    client::RoutingTargets targets;
    targets.primary = c.primary.address();
    targets.replicas = {c.replica.address()};
    client::RoutedClient routed(targets);
    const double primary_batches = testing::MetricValue(
        testing::HttpGet(c.primary.metrics_port(), "/metrics"), "voxcol_batches_total");
    const uint64_t default_floor = routed.read_floor();
    for (int k = 0; k < 20; ++k) {
      const double x = -50.5 + 5 * k, z = 10.5;
      v1::FillBallRequest edit;
      SetVec(edit.mutable_center(), x, 38.5, z);
      edit.set_radius(1.5f);
      edit.set_material(2);
      edit.set_world("match-1");
      v1::EditAck ack;
      ASSERT_TRUE(routed.FillBall(edit, &ack).ok());
      EXPECT_EQ(routed.read_floor("match-1"), ack.version());
      v1::QueryBatchRequest batch;
      batch.set_world("match-1");
      *batch.add_queries() = DownRay(x, z);
      v1::QueryBatchResponse response;
      ASSERT_TRUE(routed.Query(batch, &response).ok()) << response.message();
      EXPECT_GE(response.version(), ack.version());
      ASSERT_TRUE(response.results(0).raycast().hit());
      EXPECT_GE(response.results(0).raycast().first().position().y(), 39.5) << "ball " << k;
    }
    EXPECT_EQ(routed.read_floor(), default_floor);  // other worlds' floors did not move
    EXPECT_EQ(testing::MetricValue(testing::HttpGet(c.primary.metrics_port(), "/metrics"),
                                   "voxcol_batches_total"),
              primary_batches);
  }

  // DeleteWorld on the primary removes the world on the replica.
  ASSERT_TRUE(p.DeleteWorld("gen").ok());
  ASSERT_TRUE(WaitForSameWorlds(p, r, std::chrono::seconds(20))) << c.replica.Log();
  EXPECT_EQ(Worlds(r).count("gen"), 0u);
  {
    v1::QueryBatchRequest batch;
    batch.set_world("gen");
    *batch.add_queries() = DownRay(0.5, 0.5);
    EXPECT_EQ(RunBatch(r, batch).code(), int(grpc::StatusCode::NOT_FOUND));
  }

  // A world deleted and at once created again under the same id (another seed, a lower version)
  // replaces the replica's old one.
  ASSERT_TRUE(p.DeleteWorld("match-2").ok());
  ASSERT_TRUE(CreateWorld(p, "match-2", 99, "").ok());
  EditWorld(p, "match-2", 3, 16);
  ASSERT_TRUE(WaitForSameWorlds(p, r, std::chrono::seconds(20))) << c.replica.Log();
  ExpectSameAnswers(p, r, "match-2", Worlds(p).at("match-2"), 2000);
  ASSERT_FALSE(HasFatalFailure());

  // kill -9 of the replica; edits while it is down; the restart resumes every world from its
  // stored version (no world is copied again) and converges.
  c.replica.Stop(SIGKILL);
  EditWorld(p, "match-1", 5, 12);
  EditWorld(p, "match-3", 5, 13);
  EditWorld(p, "tmpl", 5, 14);
  EditWorld(p, "", 5, 15);
  ASSERT_TRUE(c.StartReplica());
  client::Client restarted(c.replica.address());
  ASSERT_TRUE(WaitForSameWorlds(p, restarted, std::chrono::seconds(30))) << c.replica.Log();
  EXPECT_EQ(c.replica.Log().find("event=replica_reseeded"), std::string::npos) << c.replica.Log();
  EXPECT_EQ(c.replica.Log().find("event=replica_world_created"), std::string::npos);
  EXPECT_EQ(c.replica.Log().find("event=replica_world_copied"), std::string::npos);
  ExpectAllWorldsSame(p, restarted, 2000);
}

}  // namespace
}  // namespace voxcol
