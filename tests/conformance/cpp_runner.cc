// The C++ SDK's conformance runner, the suite's reference (tests/conformance/README.md): runs one
// scenario file through voxcol::client::Client and writes one JSON line per step. With
// --throughput_seconds it measures rays per second through the QueryBatcher instead.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "client/query_batcher.h"
#include "client/voxcol_client.h"

namespace voxcol::conformance {
namespace {

namespace v1 = voxcol::v1;
using google::protobuf::Message;
using google::protobuf::Struct;
using google::protobuf::Value;

struct Flags {
  std::string target, scenario, out, secure_target, ca, token;
  double throughput_seconds = 0;
  bool throughput_packed = false;  // the rays as packed arrays (QueryBatcher::Raycasts)
};

// What one step answered: its final status and every response, as proto3 JSON.
struct StepResult {
  grpc::Status status;
  std::vector<std::string> responses;
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "cpp_runner: %s\n", message.c_str());
  std::exit(2);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) Die("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ToJson(const Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = false;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) {
    Die("cannot print a " + message.GetTypeName());
  }
  return json;
}

void FromJson(const Value& json, Message* message) {
  if (!google::protobuf::util::JsonStringToMessage(ToJson(json), message).ok()) {
    Die("the scenario's request is not a " + message->GetTypeName() + ": " + ToJson(json));
  }
}

const Value& Field(const Struct& step, const std::string& name) {
  auto it = step.fields().find(name);
  if (it == step.fields().end()) Die("a step has no \"" + name + "\"");
  return it->second;
}

// A unary call of the client: parse the request, call, print the response.
template <typename Request, typename Response>
std::function<StepResult(const Struct&)> Unary(
    std::function<grpc::Status(const Request&, Response*)> call) {
  return [call](const Struct& step) {
    Request request;
    FromJson(Field(step, "request"), &request);
    Response response;
    StepResult result{call(request, &response), {}};
    if (result.status.ok()) result.responses.push_back(ToJson(response));
    return result;
  };
}

StepResult Subscribe(client::Client& client, const Struct& step) {
  v1::SubscribeRequest request;
  FromJson(Field(step, "request"), &request);
  const int take = int(Field(step, "take").number_value());
  grpc::ClientContext context;  // a feed that never sends `take` responses fails, not hangs
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto reader = client.Subscribe(&context, request);
  StepResult result;
  v1::SubscribeResponse response;
  while (int(result.responses.size()) < take && reader->Read(&response)) {
    result.responses.push_back(ToJson(response));
  }
  if (int(result.responses.size()) == take) context.TryCancel();
  grpc::Status status = reader->Finish();
  if (int(result.responses.size()) != take) result.status = status;
  return result;
}

// Writes every request, half-closes, reads every response (EditStream, Query).
template <typename Request, typename Response, typename Stream>
StepResult Bidi(const Struct& step, Stream stream) {
  for (const Value& json : Field(step, "requests").list_value().values()) {
    Request request;
    FromJson(json, &request);
    if (!stream->Write(request)) break;
  }
  stream->WritesDone();
  StepResult result;
  Response response;
  while (stream->Read(&response)) result.responses.push_back(ToJson(response));
  result.status = stream->Finish();
  return result;
}

using Steps = std::map<std::string, std::function<StepResult(const Struct&)>>;

// Every RPC of the proto, through the client's own method for it. Query goes on the client's
// channel as a raw stream: the reference answers each batch exactly as sent (batch ids, read_at,
// world, timeouts), which the QueryBatcher would rewrite.
Steps StepsOf(client::Client& c) {
  Steps steps;
  steps["WorldService.GetWorldInfo"] = Unary<v1::GetWorldInfoRequest, v1::GetWorldInfoResponse>(
      [&c](const auto& q, auto* r) { return c.GetWorldInfo(q, r); });
  steps["WorldService.CreateWorld"] = Unary<v1::CreateWorldRequest, v1::WorldSummary>(
      [&c](const auto& q, auto* r) { return c.CreateWorld(q, r); });
  steps["WorldService.DeleteWorld"] = Unary<v1::DeleteWorldRequest, v1::DeleteWorldResponse>(
      [&c](const auto& q, auto*) { return c.DeleteWorld(q.world()); });
  steps["WorldService.ListWorlds"] = Unary<v1::ListWorldsRequest, v1::ListWorldsResponse>(
      [&c](const auto& q, auto* r) { return c.ListWorlds(q, r); });
  steps["QueryService.Raycast"] = Unary<v1::RaycastRequest, v1::RaycastResponse>(
      [&c](const auto& q, auto* r) { return c.Raycast(q, r); });
  steps["QueryService.Sweep"] = Unary<v1::SweepRequest, v1::SweepResponse>(
      [&c](const auto& q, auto* r) { return c.Sweep(q, r); });
  steps["QueryService.Overlap"] = Unary<v1::OverlapRequest, v1::OverlapResponse>(
      [&c](const auto& q, auto* r) { return c.Overlap(q, r); });
  steps["QueryService.Contacts"] = Unary<v1::ContactsRequest, v1::ContactsResponse>(
      [&c](const auto& q, auto* r) { return c.Contacts(q, r); });
  steps["QueryService.Probe"] = Unary<v1::ProbeRequest, v1::ProbeResponse>(
      [&c](const auto& q, auto* r) { return c.Probe(q, r); });
  steps["QueryService.MoveCharacters"] =
      Unary<v1::MoveCharactersRequest, v1::MoveCharactersResponse>(
          [&c](const auto& q, auto* r) { return c.MoveCharacters(q, r); });
  steps["QueryService.FindPath"] = Unary<v1::FindPathRequest, v1::FindPathResponse>(
      [&c](const auto& q, auto* r) { return c.FindPath(q, r); });
  steps["BodyService.UpdateBodies"] = Unary<v1::UpdateBodiesRequest, v1::UpdateBodiesResponse>(
      [&c](const auto& q, auto* r) { return c.UpdateBodies(q, r); });
  steps["BodyService.ListBodies"] = Unary<v1::ListBodiesRequest, v1::ListBodiesResponse>(
      [&c](const auto& q, auto* r) { return c.ListBodies(q, r); });
  steps["QueryService.ValidateHit"] = Unary<v1::ValidateHitRequest, v1::ValidateHitResponse>(
      [&c](const auto& q, auto* r) { return c.ValidateHit(q, r); });
  steps["EditService.FillBall"] = Unary<v1::FillBallRequest, v1::EditAck>(
      [&c](const auto& q, auto* r) { return c.FillBall(q, r); });
  steps["EditService.ApplyEdits"] = Unary<v1::ApplyEditsRequest, v1::EditAck>(
      [&c](const auto& q, auto* r) { return c.ApplyEdits(q, r); });
  steps["EditService.ReadVoxels"] = Unary<v1::ReadVoxelsRequest, v1::ReadVoxelsResponse>(
      [&c](const auto& q, auto* r) { return c.ReadVoxels(q, r); });
  steps["EditService.WriteVoxels"] = Unary<v1::WriteVoxelsRequest, v1::EditAck>(
      [&c](const auto& q, auto* r) { return c.WriteVoxels(q, r); });
  steps["AdminService.CreateCheckpoint"] =
      Unary<v1::CreateCheckpointRequest, v1::CreateCheckpointResponse>(
          [&c](const auto& q, auto* r) { return c.CreateCheckpoint(q, r); });
  steps["AdminService.ExportRegion"] = Unary<v1::ExportRegionRequest, v1::ExportRegionResponse>(
      [&c](const auto& q, auto* r) { return c.ExportRegion(q, r); });
  steps["AdminService.ImportRegion"] = Unary<v1::ImportRegionRequest, v1::EditAck>(
      [&c](const auto& q, auto* r) { return c.ImportRegion(q, r); });
  steps["ReplicaService.GetReplicaStatus"] =
      Unary<v1::GetReplicaStatusRequest, v1::GetReplicaStatusResponse>(
          [&c](const auto&, auto* r) { return c.GetReplicaStatus(r); });
  steps["EditService.Subscribe"] = [&c](const Struct& step) { return Subscribe(c, step); };
  steps["QueryService.GetNavMesh"] = Unary<v1::GetNavMeshRequest, v1::GetNavMeshResponse>(
      [&c](const auto& q, auto* r) { return c.GetNavMesh(q, r); });
  steps["QueryService.WatchPaths"] = [&c](const Struct& step) {
    grpc::ClientContext context;
    return Bidi<v1::WatchPathsRequest, v1::WatchPathsResponse>(step, c.WatchPaths(&context));
  };
  steps["EditService.EditStream"] = [&c](const Struct& step) {
    grpc::ClientContext context;
    return Bidi<v1::EditStreamRequest, v1::EditStreamResponse>(step, c.EditStream(&context));
  };
  steps["QueryService.Query"] = [&c](const Struct& step) {
    grpc::ClientContext context;
    auto stub = v1::QueryService::NewStub(c.channel());
    return Bidi<v1::QueryBatchRequest, v1::QueryBatchResponse>(step, stub->Query(&context));
  };
  return steps;
}

std::string Quoted(const std::string& text) {
  Value value;
  value.set_string_value(text);
  return ToJson(value);
}

int RunScenario(const Flags& flags) {
  Struct scenario;
  if (!google::protobuf::util::JsonStringToMessage(ReadFile(flags.scenario), &scenario).ok()) {
    Die(flags.scenario + " is not JSON");
  }
  const std::string name = Field(scenario, "name").string_value();
  auto secure_field = scenario.fields().find("secure");
  const bool secure = secure_field != scenario.fields().end() && secure_field->second.bool_value();
  client::ChannelSecurity security;
  std::string target = flags.target;
  if (secure) {
    if (flags.secure_target.empty()) Die(name + " needs --secure_target, --ca and --token");
    target = flags.secure_target;
    security.tls = true;
    security.ca_pem = ReadFile(flags.ca);
    security.token = flags.token;
  }
  client::Client client(target, std::chrono::seconds(10), security);
  Steps steps = StepsOf(client);
  std::ofstream out(flags.out);
  int index = 0;
  for (const Value& json : Field(scenario, "steps").list_value().values()) {
    const Struct& step = json.struct_value();
    const std::string call = Field(step, "call").string_value();
    auto it = steps.find(call);
    if (it == steps.end()) Die("unknown call " + call);
    const StepResult result = it->second(step);
    out << "{\"scenario\": " << Quoted(name) << ", \"step\": " << index++
        << ", \"call\": " << Quoted(call) << ", \"code\": " << int(result.status.error_code())
        << ", \"message\": " << Quoted(result.status.error_message()) << ", \"responses\": [";
    for (size_t i = 0; i < result.responses.size(); ++i) {
      out << (i ? ", " : "") << result.responses[i];
    }
    out << "]}" << std::endl;
  }
  return out ? 0 : 2;
}

// Rays per second through the QueryBatcher: each round sends 256 rays straight down from y 40, x
// and z uniform in [-60, 60) from a fixed seed, as 256 Raycast queries and a Flush (or, packed,
// one Raycasts call), with at most 4 rounds in flight; counted for `seconds` after one second of
// warm-up. The same loop as every client's runner.
int RunThroughput(const Flags& flags) {
  client::Client client(flags.target);
  client::QueryBatcher batcher(client);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> coordinate(-60.0f, 60.0f);
  struct Round {
    std::vector<std::future<client::QueryAnswer>> answers;
    std::future<client::BatchAnswer> packed;
  };
  std::deque<Round> in_flight;
  using Clock = std::chrono::steady_clock;
  const auto counting = Clock::now() + std::chrono::seconds(1);
  const auto end = counting + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(flags.throughput_seconds));
  int64_t rays = 0;
  auto finish_oldest = [&] {
    Round& round = in_flight.front();
    int answered = 0;
    for (auto& answer : round.answers) answered += answer.get().status.ok() ? 1 : 0;
    if (round.packed.valid()) {
      const client::BatchAnswer batch = round.packed.get();
      answered = batch.status.ok() ? batch.raycasts.codes_size() : 0;
    }
    if (answered != 256) Die("a throughput batch failed");
    if (Clock::now() >= counting) rays += answered;
    in_flight.pop_front();
  };
  while (Clock::now() < end) {
    Round round;
    v1::RaycastArrays arrays;
    for (int i = 0; i < 256; ++i) {
      const float x = coordinate(rng), z = coordinate(rng);
      if (flags.throughput_packed) {
        for (float f : {x, 40.0f, z}) arrays.add_origins(f);
        for (float f : {0.0f, -1.0f, 0.0f}) arrays.add_directions(f);
        continue;
      }
      v1::RaycastRequest ray;
      ray.mutable_origin()->set_x(x);
      ray.mutable_origin()->set_y(40);
      ray.mutable_origin()->set_z(z);
      ray.mutable_direction()->set_y(-1);
      ray.set_max_distance(90);
      round.answers.push_back(batcher.Raycast(std::move(ray)));
    }
    if (flags.throughput_packed) {
      arrays.add_max_distances(90);
      round.packed = batcher.Raycasts(std::move(arrays));
    } else {
      batcher.Flush();
    }
    in_flight.push_back(std::move(round));
    if (in_flight.size() >= 4) finish_oldest();
  }
  while (!in_flight.empty()) finish_oldest();
  const double counted = std::chrono::duration<double>(Clock::now() - counting).count();
  std::printf("rays_per_second=%.0f\n", double(rays) / counted);
  return 0;
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  std::map<std::string, std::string*> strings = {
      {"--target", &flags.target}, {"--scenario", &flags.scenario},
      {"--out", &flags.out},       {"--secure_target", &flags.secure_target},
      {"--ca", &flags.ca},         {"--token", &flags.token}};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    if (name == "--throughput_seconds") {
      flags.throughput_seconds = std::stod(argv[i + 1]);
    } else if (name == "--throughput_packed") {
      flags.throughput_packed = std::string(argv[i + 1]) == "1";
    } else if (auto it = strings.find(name); it != strings.end()) {
      *it->second = argv[i + 1];
    } else {
      Die("unknown flag " + name);
    }
  }
  if (argc % 2 == 0) Die("flags come in pairs: --name value");
  if (flags.target.empty()) Die("--target is required");
  if (flags.throughput_seconds <= 0 && (flags.scenario.empty() || flags.out.empty())) {
    Die("--scenario and --out are required (or --throughput_seconds)");
  }
  return flags;
}

}  // namespace
}  // namespace voxcol::conformance

int main(int argc, char** argv) {
  using namespace voxcol::conformance;
  const Flags flags = ParseFlags(argc, argv);
  return flags.throughput_seconds > 0 ? RunThroughput(flags) : RunScenario(flags);
}
