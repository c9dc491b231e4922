// Starts the real voxcol_server binary on a free loopback port and runs the real CLI against it.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace voxcol::testing {

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "voxcol-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a program with arguments; captures stdout and stderr separately.
inline CommandResult RunCommand(const std::vector<std::string>& argv,
                                const std::string& scratch_dir) {
  std::string cmd;
  for (const std::string& a : argv) cmd += ShellQuote(a) + " ";
  std::string err_file = scratch_dir + "/stderr.txt";
  cmd += "2>" + ShellQuote(err_file);
  CommandResult result;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return result;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.out.append(buf, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_file);
  std::stringstream ss;
  ss << err.rdbuf();
  result.err = ss.str();
  return result;
}

class ServerProcess {
 public:
  // Starts the server with `args` plus --listen on a free loopback port and --port_file; waits
  // until the port file appears (the server writes it once serving). Call it from the thread
  // that outlives the server (the test's): the server is killed when that thread ends.
  bool Start(const std::string& binary, const std::vector<std::string>& args,
             const std::string& scratch_dir) {
    port_file_ = scratch_dir + "/port";
    std::remove(port_file_.c_str());
    log_file_ = scratch_dir + "/server.log";
    std::vector<std::string> full = {binary, "--listen=127.0.0.1:0", "--port_file=" + port_file_,
                                     "--metrics_listen=127.0.0.1:0"};
    full.insert(full.end(), args.begin(), args.end());
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      // The server dies with the test process however that ends (a CTest timeout kills the test
      // with SIGKILL, and no destructor runs): no server outlives its test.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);  // the test died before prctl took effect
      FILE* log = std::fopen(log_file_.c_str(), "w");
      if (log) dup2(fileno(log), STDERR_FILENO);
      std::vector<char*> cargs;
      for (std::string& a : full) cargs.push_back(a.data());
      cargs.push_back(nullptr);
      execv(cargs[0], cargs.data());
      _exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(port_file_);
      if (in >> port_ && port_ > 0) return true;
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // Sends `sig` and waits up to `timeout` for the exit; returns the exit code, or -1 on timeout or
  // death by signal.
  int Stop(int sig = SIGTERM, std::chrono::seconds timeout = std::chrono::seconds(20)) {
    if (pid_ <= 0) return -1;
    kill(pid_, sig);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return -1;
  }

  bool Running() {
    if (pid_ <= 0) return false;
    int status;
    return waitpid(pid_, &status, WNOHANG) == 0;
  }

  ~ServerProcess() { Stop(SIGKILL, std::chrono::seconds(5)); }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // Port of the Prometheus endpoint, read from the server's startup log line.
  int metrics_port() const {
    std::string log = Log();
    size_t at = log.find("event=metrics_serving");
    if (at == std::string::npos) return 0;
    size_t p = log.find("port=", at);
    return p == std::string::npos ? 0 : std::atoi(log.c_str() + p + 5);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string Log() const {
    std::ifstream in(log_file_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Whether the log holds `needle` within `timeout` (polled every 20 ms): for a line the server
  // writes just after the state a test waited for became visible (a replica logs its re-seed
  // after the re-seeded version already answers queries).
  bool WaitForLog(const std::string& needle,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (Log().find(needle) != std::string::npos) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string port_file_;
  std::string log_file_;
};

}  // namespace voxcol::testing
