// The gRPC port: the server accepts its connections itself and hands them to gRPC (an external
// connection acceptor), so that a connection flood is bounded (--max_connections) and can never
// stop the server from accepting.
//
// Why not gRPC's own listener: in gRPC 1.51 (src/core/lib/iomgr/tcp_server_posix.cc, on_read)
// any accept4() error other than EAGAIN, ECONNABORTED or EINTR, EMFILE included, ends that
// listening socket for good: it logs "Failed accept4: Too many open files" and never polls the
// socket again, so a flood that reaches the file limit once leaves a server that accepts no
// connection until it restarts (measured: with RLIMIT_NOFILE 1,024, 1,500 connections did that,
// and a health check on a new channel then timed out). Its accept loop also takes every
// connection waiting in the backlog before anything can close one, so a cap applied after
// gRPC's accept (a socket mutator) still reached EMFILE. gRPC 1.51 has no argument to cap incoming
// connections either (grpc.max_allowed_incoming_connections came later).
//
// Here one thread accepts: a connection beyond the limit is closed at once (the client sees the
// connection closed) and counted; on EMFILE or ENFILE the waiting connection is accepted on a
// reserved descriptor and closed, and accepting goes on.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace voxcol::server {

class Metrics;

// Raises this process's soft RLIMIT_NOFILE to its hard limit (systemd and many shells start
// services at 1,024) and logs both; returns the soft limit in force afterwards.
uint64_t RaiseFileLimit();

// This process's soft RLIMIT_NOFILE.
uint64_t FileLimit();

// The connections accepted at most: `max_connections`, lowered to three quarters of
// `file_limit` (the rest is for the world stores, replicas' and the metrics server's sockets),
// and at least 1.
int64_t EffectiveConnectionLimit(int64_t max_connections, uint64_t file_limit);

struct ConnectionStats {
  int64_t limit = 0;
  int64_t open = 0;       // handed to gRPC and not yet closed
  uint64_t accepted = 0;  // ever handed to gRPC
  uint64_t refused = 0;   // closed at once: `limit` were open, or no descriptor was left
};

class Listener {
 public:
  // Accepts EffectiveConnectionLimit(max_connections, the soft RLIMIT_NOFILE now) connections.
  explicit Listener(int64_t max_connections);
  ~Listener();  // Stop()
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds `listen` (host:port, [v6 address]:port or :port; 0.0.0.0, :: and an empty host listen
  // on every address; port 0 picks a free port) and adds an acceptor with `credentials` to
  // `builder`; call before BuildAndStart. Returns the port, or why no address could be bound.
  absl::StatusOr<int> Bind(const std::string& listen, bool reuseport,
                           std::shared_ptr<grpc::ServerCredentials> credentials,
                           grpc::ServerBuilder& builder);
  // Starts accepting; call once the server is started.
  void Start();
  // Stops accepting and closes the listening sockets (open connections stay); call before the
  // server shuts down.
  void Stop();

  ConnectionStats stats();  // counts the open connections afresh
  int64_t limit() const { return limit_; }
  // voxcol_connections_open, _limit, _accepted_total and _refused_total, read when scraped.
  void RegisterMetrics(Metrics& registry);

 private:
  void Run();
  // Accepts what waits on `listen_fd`; false when it must back off (no descriptor left).
  bool AcceptAll(int listen_fd);
  // Hands `fd` to gRPC, or closes it if `limit_` connections are open.
  void Admit(int listen_fd, int fd);
  // Forgets the connections gRPC has closed since; at most once per 20 ms unless `force`.
  void PruneLocked(bool force) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Refused(const char* why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int64_t limit_;
  std::vector<int> listen_fds_;
  int wake_[2] = {-1, -1};  // a pipe: Stop() writes to it
  int reserve_fd_ = -1;     // given up to accept and close a connection on EMFILE
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::thread thread_;
  absl::Mutex mu_;
  // The connections handed to gRPC and not seen closed: fd -> its socket's inode. gRPC closes a
  // connection without telling anyone; an fd that no longer refers to that socket (closed, or
  // open again for another file) is gone.
  absl::flat_hash_map<int, uint64_t> open_ ABSL_GUARDED_BY(mu_);
  absl::Time last_prune_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time last_refusal_log_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  uint64_t accepted_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace voxcol::server
