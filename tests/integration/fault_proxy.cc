#include "tests/integration/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>

namespace voxcol::testing {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadSize = 16 * 1024;
// A direction stops reading its source while this much waits in the proxy: beyond it the kernel
// buffers and then TCP flow control hold the sender back.
constexpr size_t kMaxQueued = 1 << 20;

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// close() that sends an RST (and discards unsent bytes) instead of a FIN.
void CloseWithReset(int fd) {
  if (fd < 0) return;
  linger hard{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  close(fd);
}

int MillisUntil(Clock::time_point now, Clock::time_point then) {
  if (then <= now) return 0;
  return int(std::chrono::ceil<std::chrono::milliseconds>(then - now).count());
}

}  // namespace

struct FaultProxy::Connection {
  struct Chunk {
    Clock::time_point due;
    std::string bytes;
  };
  // One direction: bytes read from `from`, queued, written to `to`.
  struct Direction {
    Direction(int* from_fd, int* to_fd) : from(from_fd), to(to_fd) {}
    int* from;
    int* to;
    std::atomic<uint64_t>* counter = nullptr;
    std::deque<Chunk> queue;
    size_t offset = 0;  // into queue.front()
    size_t queued = 0;
    bool eof = false;      // `from` sent its FIN
    bool shut = false;     // the FIN was passed on (shutdown of `to`)
    bool blocked = false;  // the last write of `to` would have blocked: wait for POLLOUT
    double tokens = 0;     // throttle budget (bytes)
    Clock::time_point refilled = Clock::now();
  };
  int client = -1;
  int target = -1;
  bool connecting = true;  // the connect to the target is in progress
  bool dead = false;
  Direction up{&client, &target};
  Direction down{&target, &client};
};

FaultProxy::FaultProxy(const std::string& target) {
  const size_t colon = target.rfind(':');
  in_addr ip{};
  if (colon == std::string::npos || inet_pton(AF_INET, target.substr(0, colon).c_str(), &ip) != 1) {
    return;
  }
  target_ip_ = ip.s_addr;
  target_port_ = htons(uint16_t(std::stoi(target.substr(colon + 1))));
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 128) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      pipe2(wake_pipe_, O_NONBLOCK | O_CLOEXEC) != 0) {
    return;
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Run(); });
}

FaultProxy::~FaultProxy() {
  stop_ = true;
  Wake();
  if (thread_.joinable()) thread_.join();
  for (auto& c : connections_) {
    if (c->client >= 0) close(c->client);
    if (c->target >= 0) close(c->target);
  }
  for (int fd : {listen_fd_, wake_pipe_[0], wake_pipe_[1]}) {
    if (fd >= 0) close(fd);
  }
}

void FaultProxy::Wake() {
  if (wake_pipe_[1] >= 0) (void)!write(wake_pipe_[1], "x", 1);
}

void FaultProxy::Partition(bool on) {
  partitioned_ = on;
  Wake();
}

void FaultProxy::SetDelay(std::chrono::milliseconds delay) {
  delay_ms_ = delay.count();
  Wake();
}

void FaultProxy::SetThrottle(int64_t bytes_per_second) {
  throttle_ = bytes_per_second;
  Wake();
}

void FaultProxy::Heal() {
  partitioned_ = false;
  delay_ms_ = 0;
  throttle_ = 0;
  Wake();
}

void FaultProxy::ResetAll() {
  std::unique_lock<std::mutex> lock(reset_mu_);
  const uint64_t ticket = ++reset_requested_;
  Wake();
  reset_cv_.wait(lock, [&] { return reset_done_ >= ticket; });
}

void FaultProxy::ResetConnections() {
  for (auto& c : connections_) {
    discarded_.fetch_add(c->up.queued + c->down.queued);
    CloseWithReset(c->client);
    CloseWithReset(c->target);
    c->client = c->target = -1;
    reset_.fetch_add(1);
  }
  connections_.clear();
  open_ = 0;
}

void FaultProxy::AcceptAll() {
  while (true) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto c = std::make_unique<Connection>();
    c->up.counter = &bytes_up_;
    c->down.counter = &bytes_down_;
    c->client = fd;
    c->target = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = target_ip_;
    addr.sin_port = target_port_;
    SetNoDelay(c->client);
    SetNoDelay(c->target);
    if (c->target < 0 ||
        (connect(c->target, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 &&
         errno != EINPROGRESS)) {
      c->dead = true;  // the target refuses: the client gets an RST
    }
    accepted_.fetch_add(1);
    connections_.push_back(std::move(c));
  }
}

namespace {

// Writes the due, budgeted bytes of `d`; returns the ms until it can write more (-1: no timer).
// Sets `dead` on a write error.
int WriteDue(FaultProxy::Connection::Direction& d, Clock::time_point now, int64_t throttle,
             bool* dead) {
  if (throttle > 0) {
    const double burst = std::max(1.0, double(throttle) / 10);
    d.tokens =
        std::min(burst, d.tokens + double(throttle) *
                                       std::chrono::duration<double>(now - d.refilled).count());
  }
  d.refilled = now;
  while (!d.queue.empty() && !d.blocked) {
    auto& front = d.queue.front();
    if (front.due > now) return MillisUntil(now, front.due);
    size_t n = front.bytes.size() - d.offset;
    if (throttle > 0) {
      if (d.tokens < 1) return std::max(1, int(1000 * (1 - d.tokens) / double(throttle)));
      n = std::min(n, size_t(d.tokens));
    }
    const ssize_t sent = send(*d.to, front.bytes.data() + d.offset, n, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        d.blocked = true;
      } else if (errno != EINTR) {
        *dead = true;
      }
      return -1;
    }
    d.counter->fetch_add(uint64_t(sent));
    if (throttle > 0) d.tokens -= double(sent);
    d.offset += size_t(sent);
    d.queued -= size_t(sent);
    if (d.offset == front.bytes.size()) {
      d.queue.pop_front();
      d.offset = 0;
    }
  }
  if (d.queue.empty() && d.eof && !d.shut) {
    shutdown(*d.to, SHUT_WR);  // pass the FIN on once everything before it was delivered
    d.shut = true;
  }
  return -1;
}

// Reads what `d`'s source has; sets `dead` on a read error (e.g. an RST from that side).
void ReadSource(FaultProxy::Connection::Direction& d, Clock::time_point due, bool* dead) {
  while (d.queued < kMaxQueued) {
    std::string buf(kReadSize, '\0');
    const ssize_t got = read(*d.from, buf.data(), buf.size());
    if (got > 0) {
      buf.resize(size_t(got));
      d.queued += buf.size();
      d.queue.push_back({due, std::move(buf)});
      continue;
    }
    if (got == 0) {
      d.eof = true;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      *dead = true;
    }
    return;
  }
}

bool WantsRead(const FaultProxy::Connection& c, const FaultProxy::Connection::Direction& d) {
  return !d.eof && d.queued < kMaxQueued && !(c.connecting && &d == &c.down);
}

}  // namespace

int FaultProxy::Pump(Clock::time_point now) {
  int timeout = -1;
  auto earliest = [&timeout](int ms) {
    if (ms >= 0 && (timeout < 0 || ms < timeout)) timeout = ms;
  };
  const int64_t throttle = throttle_.load();
  for (auto& c : connections_) {
    if (c->dead) continue;
    if (!c->connecting) earliest(WriteDue(c->up, now, throttle, &c->dead));
    earliest(WriteDue(c->down, now, throttle, &c->dead));
  }
  // A connection ends when both FINs were passed on (a clean close), or with an RST on both
  // sides when either side failed.
  auto finished = [this](std::unique_ptr<Connection>& c) {
    if (c->dead) {
      CloseWithReset(c->client);
      CloseWithReset(c->target);
    } else if (c->up.shut && c->down.shut) {
      close(c->client);
      close(c->target);
    } else {
      return false;
    }
    open_.fetch_sub(1);
    return true;
  };
  connections_.erase(std::remove_if(connections_.begin(), connections_.end(), finished),
                     connections_.end());
  return timeout;
}

void FaultProxy::Run() {
  std::vector<pollfd> fds;
  while (!stop_) {
    {
      std::lock_guard<std::mutex> lock(reset_mu_);
      if (reset_requested_ > reset_done_) {
        ResetConnections();
        reset_done_ = reset_requested_;
        reset_cv_.notify_all();
      }
    }
    const bool partitioned = partitioned_.load();
    const int timeout = partitioned ? -1 : Pump(Clock::now());
    fds.assign({{wake_pipe_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}});
    for (auto& c : connections_) {
      short client_events = 0, target_events = 0;
      if (!partitioned) {
        if (WantsRead(*c, c->up)) client_events |= POLLIN;
        if (c->down.blocked) client_events |= POLLOUT;
        if (WantsRead(*c, c->down)) target_events |= POLLIN;
        if (c->connecting || c->up.blocked) target_events |= POLLOUT;
      }
      // A negative fd is skipped by poll(): a partitioned connection reports nothing, not even
      // its peer's hang-up, until healed.
      fds.push_back({client_events != 0 ? c->client : -1, client_events, 0});
      fds.push_back({target_events != 0 ? c->target : -1, target_events, 0});
    }
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return;
    char drain[64];
    while (read(wake_pipe_[0], drain, sizeof drain) > 0) {
    }
    if (fds[1].revents & POLLIN) {
      const size_t before = connections_.size();
      AcceptAll();
      open_.fetch_add(connections_.size() - before);
    }
    if (partitioned_.load()) continue;
    const Clock::time_point due = Clock::now() + std::chrono::milliseconds(delay_ms_.load());
    for (size_t i = 0; i < connections_.size() && 2 + 2 * i + 1 < fds.size(); ++i) {
      Connection& c = *connections_[i];
      const short client_ready = fds[2 + 2 * i].revents, target_ready = fds[3 + 2 * i].revents;
      if (c.connecting && target_ready != 0) {
        int error = 0;
        socklen_t len = sizeof error;
        getsockopt(c.target, SOL_SOCKET, SO_ERROR, &error, &len);
        c.connecting = false;
        if (error != 0) c.dead = true;
      }
      if (client_ready & POLLOUT) c.down.blocked = false;
      if ((target_ready & POLLOUT) && !c.connecting) c.up.blocked = false;
      if (client_ready & (POLLIN | POLLHUP | POLLERR)) ReadSource(c.up, due, &c.dead);
      if (!c.connecting && (target_ready & (POLLIN | POLLHUP | POLLERR))) {
        ReadSource(c.down, due, &c.dead);
      }
    }
  }
}

}  // namespace voxcol::testing
