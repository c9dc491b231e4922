// The gRPC port's Listener (server/app/listener.h) with an in-process gRPC server: connections
// that arrive when the process has no file descriptor left are accepted on the reserved one and
// closed at once (counted as refused) instead of waiting in the backlog, and accepting goes on
// once descriptors free up. (gRPC 1.51's own listener stops accepting for good at EMFILE.)
#include "server/app/listener.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"

namespace voxcol::server {
namespace {

int OpenFds() {
  int n = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (readdir(dir) != nullptr) ++n;
  closedir(dir);
  return n - 3;  // ".", ".." and the directory's own fd
}

// What the client of `fd` has seen: 1 data (served: gRPC's SETTINGS), 0 closed, -1 nothing yet.
int Seen(int fd) {
  char buffer[4096];
  const ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n > 0) return 1;
  if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return 0;
  return -1;
}

class Serving final : public grpc::health::v1::Health::Service {
  grpc::Status Check(grpc::ServerContext*, const grpc::health::v1::HealthCheckRequest*,
                     grpc::health::v1::HealthCheckResponse* response) override {
    response->set_status(grpc::health::v1::HealthCheckResponse::SERVING);
    return grpc::Status::OK;
  }
};

TEST(ListenerTest, ConnectionsBeyondTheFileLimitAreClosedAndAcceptingGoesOn) {
  constexpr int kClients = 60, kServerFds = 20;
  Listener listener(/*max_connections=*/100000);  // only the file limit bounds it here
  Serving health_service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&health_service);
  absl::StatusOr<int> port =
      listener.Bind("127.0.0.1:0", false, grpc::InsecureServerCredentials(), builder);
  ASSERT_TRUE(port.ok()) << port.status();
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  listener.Start();

  // The clients' sockets exist before the limit drops, so that only the server runs out.
  std::vector<int> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(socket(AF_INET, SOCK_STREAM, 0));
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = rlim_t(OpenFds() + kServerFds);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(*port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  static const char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0";
  for (int fd : clients) {
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    send(fd, kPreface, sizeof kPreface - 1, MSG_NOSIGNAL);
  }
  // Every client is either served or told (closed) within 2 s: none waits in the backlog.
  int served = 0, closed = 0;
  std::vector<int> seen(kClients, -1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (served + closed < kClients && std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < kClients; ++i) {
      if (seen[i] != -1) continue;
      seen[i] = Seen(clients[i]);
      served += seen[i] == 1 ? 1 : 0;
      closed += seen[i] == 0 ? 1 : 0;
    }
    poll(nullptr, 0, 10);
  }
  const ConnectionStats stats = listener.stats();
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  std::printf("file limit %d: %d clients served, %d closed, refused %d\n", int(low.rlim_cur),
              served, closed, int(stats.refused));
  EXPECT_EQ(served + closed, kClients) << "connections left waiting in the backlog";
  EXPECT_GT(served, 0);
  EXPECT_GT(closed, 0);
  EXPECT_EQ(stats.refused, uint64_t(closed));

  // Descriptors free again: a new client is served.
  for (int fd : clients) close(fd);
  auto health = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(*port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status =
      health->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  listener.Stop();
  server->Shutdown();
}

TEST(ListenerTest, EffectiveLimitIsAtMostThreeQuartersOfTheFileLimit) {
  EXPECT_EQ(EffectiveConnectionLimit(10000, 1024), 768);
  EXPECT_EQ(EffectiveConnectionLimit(10000, 1048576), 10000);
  EXPECT_EQ(EffectiveConnectionLimit(0, 1048576), 1);
}

}  // namespace
}  // namespace voxcol::server
