// A TCP proxy for network fault tests (issue 38): listens on 127.0.0.1:<free port> and forwards
// every connection to `target`, with faults switched on and off from the test thread at any time:
//
// - Partition(true): a dead network, not a clean close. New connections are still accepted (and
//   connected upstream) but nothing is forwarded in either direction: the proxy stops reading and
//   writing, so bytes are HELD (in the proxy's queues and, once those stop growing, in the
//   kernel's socket buffers, where TCP flow control stops the senders). No FIN, no RST: to gRPC
//   the peer just went silent. Partition(false) heals: the held bytes flow on in order, as TCP
//   retransmission delivers them after a real partition heals.
// - SetDelay(d): every chunk read from then on is delivered d after it was read, in order (a
//   shorter delay never lets a later chunk overtake an earlier one).
// - SetThrottle(b): each direction of each connection forwards at most b bytes per second
//   (token bucket, bursts of b / 10); 0 = unlimited.
// - ResetAll(): every open connection is reset on both sides (SO_LINGER 0, then close: an RST,
//   queued bytes discarded); returns once done. New connections work as before.
//
// One thread runs everything with poll(); controls wake it through a pipe. The destructor stops
// and joins it and closes every socket.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace voxcol::testing {

class FaultProxy {
 public:
  // `target` is "127.0.0.1:<port>" (IPv4 literal and port). Check ok() after construction.
  explicit FaultProxy(const std::string& target);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  bool ok() const { return port_ > 0; }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  void Partition(bool on);
  void SetDelay(std::chrono::milliseconds delay);
  void SetThrottle(int64_t bytes_per_second);
  // Clears every fault: no partition, no delay, no throttle.
  void Heal();
  void ResetAll();

  uint64_t connections_accepted() const { return accepted_.load(); }
  uint64_t connections_reset() const { return reset_.load(); }
  size_t open_connections() const { return open_.load(); }
  uint64_t bytes_to_target() const { return bytes_up_.load(); }  // client -> target, forwarded
  uint64_t bytes_to_client() const { return bytes_down_.load(); }
  // Bytes read from either side but never delivered because ResetAll cut their connection.
  uint64_t bytes_discarded() const { return discarded_.load(); }

  struct Connection;  // fault_proxy.cc

 private:
  void Run();
  void Wake();
  void AcceptAll();
  void ResetConnections();
  // Forwards what each connection can; drops the finished ones. Returns the poll timeout (ms).
  int Pump(std::chrono::steady_clock::time_point now);

  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  int port_ = 0;
  uint32_t target_ip_ = 0;  // network byte order
  uint16_t target_port_ = 0;
  std::thread thread_;
  std::vector<std::unique_ptr<Connection>> connections_;  // the proxy thread's only

  std::atomic<bool> stop_{false};
  std::atomic<bool> partitioned_{false};
  std::atomic<int64_t> delay_ms_{0};
  std::atomic<int64_t> throttle_{0};
  std::mutex reset_mu_;
  std::condition_variable reset_cv_;
  uint64_t reset_requested_ = 0;  // guarded by reset_mu_
  uint64_t reset_done_ = 0;       // guarded by reset_mu_

  std::atomic<uint64_t> accepted_{0}, reset_{0}, bytes_up_{0}, bytes_down_{0}, discarded_{0};
  std::atomic<size_t> open_{0};
};

}  // namespace voxcol::testing
