// The fault proxy itself (tests/integration/fault_proxy.h) between two plain sockets of the test:
// forwarding and clean close, partition (held, not dropped or closed), delay, throttle, reset.
#include "tests/integration/fault_proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

namespace voxcol::testing {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The proxy counts after its send() returned, possibly after the receiver already read the bytes.
template <typename Condition>
bool Eventually(Condition condition) {
  const auto end = Clock::now() + std::chrono::seconds(5);
  while (!condition() && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return condition();
}

// A listening socket of the test (the proxy's target) and one client connection through the
// proxy, accepted on it: `client` talks to the proxy, `server` is the accepted end.
class ProxiedPair : public ::testing::Test {
 protected:
  void SetUp() override {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(listen(listener_, 8), 0);
    ASSERT_EQ(getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    proxy_ = std::make_unique<FaultProxy>("127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
    ASSERT_TRUE(proxy_->ok());
    Connect();
  }
  void TearDown() override {
    for (int fd : {client_, server_, listener_}) {
      if (fd >= 0) close(fd);
    }
  }
  void Connect() {
    client_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(uint16_t(proxy_->port()));
    ASSERT_EQ(connect(client_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    server_ = accept(listener_, nullptr, nullptr);
    ASSERT_GE(server_, 0);
  }
  static void Send(int fd, const std::string& bytes) {
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
  }
  // Reads exactly `n` bytes (or until EOF, an error or `timeout`); errno of a failed read in
  // `*error`.
  static std::string Receive(int fd, size_t n, std::chrono::milliseconds timeout,
                             int* error = nullptr) {
    std::string out;
    const auto end = Clock::now() + timeout;
    while (out.size() < n && Clock::now() < end) {
      pollfd p{fd, POLLIN, 0};
      const int left =
          int(std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count());
      if (poll(&p, 1, std::max(left, 1)) <= 0) continue;
      char buf[65536];
      const ssize_t got = read(fd, buf, std::min(sizeof buf, n - out.size()));
      if (got <= 0) {
        if (error != nullptr) *error = got < 0 ? errno : 0;
        break;
      }
      out.append(buf, size_t(got));
    }
    return out;
  }

  int listener_ = -1, client_ = -1, server_ = -1;
  std::unique_ptr<FaultProxy> proxy_;
};

TEST_F(ProxiedPair, ForwardsBothWaysAndPassesTheCloseOn) {
  Send(client_, "hello");
  EXPECT_EQ(Receive(server_, 5, std::chrono::seconds(5)), "hello");
  Send(server_, "world!");
  EXPECT_EQ(Receive(client_, 6, std::chrono::seconds(5)), "world!");
  EXPECT_EQ(proxy_->connections_accepted(), 1u);
  EXPECT_TRUE(Eventually([&] { return proxy_->bytes_to_target() == 5; }));
  EXPECT_TRUE(Eventually([&] { return proxy_->bytes_to_client() == 6; }));
  shutdown(client_, SHUT_WR);  // a FIN arrives as a FIN (read returns 0), not as an error
  int error = -1;
  EXPECT_EQ(Receive(server_, 1, std::chrono::seconds(5), &error), "");
  EXPECT_EQ(error, 0);
}

TEST_F(ProxiedPair, PartitionHoldsBytesUntilHealedWithoutClosing) {
  proxy_->Partition(true);
  Send(client_, "during");
  Send(server_, "reply");
  EXPECT_EQ(Receive(server_, 6, std::chrono::milliseconds(300)), "");
  EXPECT_EQ(Receive(client_, 5, std::chrono::milliseconds(300)), "");
  // A new connection is accepted while partitioned; nothing it sends is forwarded either.
  const int old_client = client_, old_server = server_;
  Connect();
  Send(client_, "late");
  EXPECT_TRUE(Eventually([&] { return proxy_->connections_accepted() == 2; }));
  EXPECT_EQ(proxy_->bytes_to_target() + proxy_->bytes_to_client(), 0u);
  proxy_->Partition(false);
  EXPECT_EQ(Receive(old_server, 6, std::chrono::seconds(5)), "during");
  EXPECT_EQ(Receive(old_client, 5, std::chrono::seconds(5)), "reply");
  EXPECT_EQ(Receive(server_, 4, std::chrono::seconds(5)), "late");
  close(old_client);
  close(old_server);
}

TEST_F(ProxiedPair, DelayKeepsOrderAndAddsLatency) {
  proxy_->SetDelay(std::chrono::milliseconds(200));
  const auto start = Clock::now();
  Send(client_, "a");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // read by the proxy meanwhile
  proxy_->SetDelay(std::chrono::milliseconds(0));              // a later chunk does not overtake
  Send(client_, "b");
  EXPECT_EQ(Receive(server_, 2, std::chrono::seconds(5)), "ab");
  EXPECT_GE(SecondsSince(start), 0.19);
}

TEST_F(ProxiedPair, ThrottleLimitsTheRate) {
  proxy_->SetThrottle(100000);
  const std::string bytes(150000, 'x');
  const auto start = Clock::now();
  Send(client_, bytes);
  EXPECT_EQ(Receive(server_, bytes.size(), std::chrono::seconds(10)).size(), bytes.size());
  // 150 kB at 100 kB/s with bursts of 10 kB: at least 1.4 s.
  EXPECT_GE(SecondsSince(start), 1.3);
  proxy_->SetThrottle(0);
  const auto fast = Clock::now();
  Send(client_, bytes);
  EXPECT_EQ(Receive(server_, bytes.size(), std::chrono::seconds(10)).size(), bytes.size());
  EXPECT_LT(SecondsSince(fast), 1.0);
}

TEST_F(ProxiedPair, ResetAllSendsAnRstBothWaysAndNewConnectionsWork) {
  proxy_->SetDelay(std::chrono::milliseconds(500));
  Send(client_, "in flight");  // held in the proxy's delay queue when the reset comes
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  proxy_->ResetAll();
  EXPECT_EQ(proxy_->connections_reset(), 1u);
  EXPECT_EQ(proxy_->bytes_discarded(), 9u);
  EXPECT_EQ(proxy_->open_connections(), 0u);
  int error = 0;
  EXPECT_EQ(Receive(client_, 1, std::chrono::seconds(5), &error), "");
  EXPECT_EQ(error, ECONNRESET);
  error = 0;
  EXPECT_EQ(Receive(server_, 1, std::chrono::seconds(5), &error), "");
  EXPECT_EQ(error, ECONNRESET);
  close(client_);
  close(server_);
  proxy_->Heal();
  Connect();
  Send(client_, "again");
  EXPECT_EQ(Receive(server_, 5, std::chrono::seconds(5)), "again");
}

}  // namespace
}  // namespace voxcol::testing
