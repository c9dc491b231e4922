#include "server/app/listener.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/telemetry/log.h"
#include "server/telemetry/metrics.h"

namespace voxcol::server {
namespace {

// The inode of the file `fd` refers to; 0 if it is not open.
uint64_t InodeOf(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? uint64_t(st.st_ino) : 0;
}

struct HostPort {
  std::string host;
  std::string port;
};

// "host:port", "[v6]:port" or ":port".
absl::StatusOr<HostPort> SplitListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    return absl::InvalidArgumentError("expected host:port, [address]:port or :port");
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return HostPort{host, listen.substr(colon + 1)};
}

// A listening socket on `address`; -errno on failure.
int ListenOn(const sockaddr* address, socklen_t length, bool reuseport) {
  const int fd = socket(address->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  int one = 1, zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as gRPC does
  if (reuseport) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (address->sa_family == AF_INET6) {
    // The wildcard :: takes IPv4 too, as gRPC's wildcard does; ::1 and others only IPv6.
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    const bool any = IN6_IS_ADDR_UNSPECIFIED(&v6->sin6_addr);
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, any ? &zero : &one, sizeof one);
  }
  if (bind(fd, address, length) != 0 || listen(fd, SOMAXCONN) != 0) {
    const int error = errno;
    close(fd);
    return -error;
  }
  return fd;
}

// The addresses `listen` names, each with its port (0 if it picks one). 0.0.0.0, :: and an
// empty host are the wildcard, as in gRPC: [::] taking IPv4 too, then 0.0.0.0 (which binds only
// where there is no IPv6, the port being taken by [::] otherwise).
absl::StatusOr<std::vector<sockaddr_storage>> Resolve(const HostPort& at) {
  std::vector<sockaddr_storage> out;
  if (at.host.empty() || at.host == "0.0.0.0" || at.host == "::") {
    int port = 0;
    if (!absl::SimpleAtoi(at.port, &port) || port < 0 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("bad port ", at.port));
    }
    sockaddr_storage any6{}, any4{};
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&any6);
    v6->sin6_family = AF_INET6;
    v6->sin6_addr = in6addr_any;
    v6->sin6_port = htons(uint16_t(port));
    auto* v4 = reinterpret_cast<sockaddr_in*>(&any4);
    v4->sin_family = AF_INET;
    v4->sin_addr.s_addr = htonl(INADDR_ANY);
    v4->sin_port = htons(uint16_t(port));
    return std::vector<sockaddr_storage>{any6, any4};
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int e = getaddrinfo(at.host.c_str(), at.port.c_str(), &hints, &found); e != 0) {
    return absl::InvalidArgumentError(gai_strerror(e));
  }
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    sockaddr_storage address{};
    std::memcpy(&address, a->ai_addr, a->ai_addrlen);
    out.push_back(address);
  }
  freeaddrinfo(found);
  return out;
}

void SetPort(sockaddr_storage* address, int port) {
  if (address->ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(address)->sin6_port = htons(uint16_t(port));
  } else {
    reinterpret_cast<sockaddr_in*>(address)->sin_port = htons(uint16_t(port));
  }
}

int PortOf(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  return ntohs(address.ss_family == AF_INET6
                   ? reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port
                   : reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

}  // namespace

uint64_t FileLimit() {
  rlimit limit{};
  return getrlimit(RLIMIT_NOFILE, &limit) == 0 ? uint64_t(limit.rlim_cur) : 1024;
}

uint64_t RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  const uint64_t before = limit.rlim_cur;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  LogInfo("event=file_limit soft_before=%d soft=%d hard=%d", before, uint64_t(limit.rlim_cur),
          uint64_t(limit.rlim_max));
  return limit.rlim_cur;
}

int64_t EffectiveConnectionLimit(int64_t max_connections, uint64_t file_limit) {
  const int64_t fds = int64_t(std::min<uint64_t>(file_limit, uint64_t(1) << 40));
  return std::max<int64_t>(1, std::min(max_connections, fds / 4 * 3));
}

Listener::Listener(int64_t max_connections)
    : limit_(EffectiveConnectionLimit(max_connections, FileLimit())) {
  if (pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

Listener::~Listener() {
  Stop();
  for (int fd : {wake_[0], wake_[1], reserve_fd_}) {
    if (fd >= 0) close(fd);
  }
}

absl::StatusOr<int> Listener::Bind(const std::string& listen, bool reuseport,
                                   std::shared_ptr<grpc::ServerCredentials> credentials,
                                   grpc::ServerBuilder& builder) {
  absl::StatusOr<HostPort> at = SplitListen(listen);
  if (!at.ok()) return at.status();
  absl::StatusOr<std::vector<sockaddr_storage>> addresses = Resolve(*at);
  if (!addresses.ok()) return addresses.status();
  int port = 0, first_error = 0;
  // Like gRPC: every address that binds listens (port 0: the port the first one got), and one
  // is enough (e.g. localhost where IPv6 is off).
  for (sockaddr_storage& address : *addresses) {
    if (port != 0) SetPort(&address, port);
    const socklen_t length =
        address.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    const int fd = ListenOn(reinterpret_cast<const sockaddr*>(&address), length, reuseport);
    if (fd < 0) {
      if (first_error == 0) first_error = -fd;
      continue;
    }
    listen_fds_.push_back(fd);
    if (port == 0) port = PortOf(fd);
  }
  if (listen_fds_.empty()) {
    return absl::UnavailableError(first_error != 0 ? std::strerror(first_error) : "no address");
  }
  acceptor_ = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
      std::move(credentials));
  return port;
}

void Listener::Start() {
  if (listen_fds_.empty() || thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void Listener::Stop() {
  if (thread_.joinable()) {
    const char byte = 0;
    while (write(wake_[1], &byte, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
  for (int fd : listen_fds_) close(fd);
  listen_fds_.clear();
}

void Listener::Run() {
  std::vector<pollfd> polled;
  for (int fd : listen_fds_) polled.push_back({fd, POLLIN, 0});
  polled.push_back({wake_[0], POLLIN, 0});
  bool back_off = false;
  while (true) {
    // After an error that accepting again at once would repeat (no memory), only Stop() wakes
    // this for 100 ms.
    const int ready =
        back_off ? poll(&polled.back(), 1, 100) : poll(polled.data(), nfds_t(polled.size()), -1);
    if (ready < 0 && errno != EINTR) back_off = true;
    if (polled.back().revents != 0) return;
    back_off = false;
    for (size_t i = 0; i + 1 < polled.size(); ++i) {
      if (polled[i].revents != 0 && !AcceptAll(polled[i].fd)) back_off = true;
      polled[i].revents = 0;
    }
  }
}

bool Listener::AcceptAll(int listen_fd) {
  // A bounded round, then back to poll(): Stop() is seen even under a flood.
  for (int round = 0; round < 1024; ++round) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      Admit(listen_fd, fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    if (errno != EMFILE && errno != ENFILE) {
      LogError("event=accept_failed message=%s", std::string(std::strerror(errno)));
      return false;
    }
    // No descriptor left: take the waiting connection on the reserved one and close it, so that
    // its client is told now instead of waiting in the backlog; then carry on.
    absl::MutexLock lock(&mu_);
    if (reserve_fd_ < 0) reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (reserve_fd_ < 0) return false;
    close(reserve_fd_);
    const int taken = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (taken >= 0) close(taken);
    reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (taken >= 0) Refused("no file descriptor left");
    if (taken < 0 || reserve_fd_ < 0) return false;
  }
  return true;
}

void Listener::Admit(int listen_fd, int fd) {
  const uint64_t inode = InodeOf(fd);
  {
    absl::MutexLock lock(&mu_);
    open_.erase(fd);  // an fd number handed out again: its last connection is closed
    if (int64_t(open_.size()) >= limit_) PruneLocked(/*force=*/false);
    if (int64_t(open_.size()) >= limit_) {
      close(fd);  // the client sees the connection closed
      Refused("max_connections");
      return;
    }
    open_[fd] = inode;
    ++accepted_;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters connection;
  connection.listener_fd = listen_fd;
  connection.fd = fd;
  acceptor_->HandleNewConnection(&connection);  // gRPC owns fd from here
}

void Listener::Refused(const char* why) {
  ++refused_;
  const absl::Time now = absl::Now();
  if (now - last_refusal_log_ < absl::Seconds(10)) return;
  last_refusal_log_ = now;
  LogError("event=connections_refused reason=%s open=%d limit=%d refused_total=%d",
           std::string(why), int64_t(open_.size()), limit_, refused_);
}

void Listener::PruneLocked(bool force) {
  const absl::Time now = absl::Now();
  if (!force && now - last_prune_ < absl::Milliseconds(20)) return;
  last_prune_ = now;
  absl::erase_if(open_, [](const auto& entry) { return InodeOf(entry.first) != entry.second; });
}

ConnectionStats Listener::stats() {
  absl::MutexLock lock(&mu_);
  PruneLocked(/*force=*/true);
  return {limit_, int64_t(open_.size()), accepted_, refused_};
}

void Listener::RegisterMetrics(Metrics& registry) {
  registry.AddGauge("voxcol_connections_open",
                    "Client connections the gRPC server holds open (at most "
                    "voxcol_connections_limit)",
                    [this] { return double(stats().open); });
  registry.AddGauge("voxcol_connections_limit",
                    "Connections held open at most: --max_connections, lowered to 3/4 of the "
                    "file limit (RLIMIT_NOFILE)",
                    [this] { return double(limit_); });
  registry.AddCounterCallback("voxcol_connections_accepted_total",
                              "Client connections accepted and handed to gRPC",
                              [this] { return double(stats().accepted); });
  registry.AddCounterCallback(
      "voxcol_connections_refused_total",
      "Client connections closed at once: voxcol_connections_limit were open, or the process had "
      "no file descriptor left",
      [this] { return double(stats().refused); });
}

}  // namespace voxcol::server
