// RedisServer: a throwaway redis-server for tests, on a free loopback port in a temporary folder.
//
// Started with `--save "" --appendonly no --bind 127.0.0.1 --port P --dir TMP` (plus any extra
// arguments) and killed by the destructor whatever happens; the child also dies with the test process
// (PR_SET_PDEATHSIG). It never listens on anything but loopback.
//
//   RedisServer redis({"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"});
//   auto tier = store::open_redis_tier({.url = redis.url()});
//   redis.kill_now();   // the server dies mid-run
//   redis.start();      // and comes back empty on the same port
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace refenc::store::test {

/// True when a redis-server binary can be run.
inline bool redis_server_available() { return std::system("redis-server --version >/dev/null 2>&1") == 0; }

/// Major version of redis-server (0 when unknown).
inline int redis_server_major() {
  FILE* p = ::popen("redis-server --version 2>/dev/null", "r");
  if (!p) return 0;
  char buf[256] = {0};
  std::string out = std::fgets(buf, sizeof buf, p) ? buf : "";
  ::pclose(p);
  const auto v = out.find("v=");
  return v == std::string::npos ? 0 : std::atoi(out.c_str() + v + 2);
}

/// A port nobody listens on now (bound to 127.0.0.1:0, then released).
inline int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("no free loopback port");
  ::close(fd);
  return ntohs(a.sin_port);
}

/// True when something answers "+PONG" (or any reply) to PING on 127.0.0.1:port.
inline bool redis_answers(int port, const std::string& password = "") {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (ok) {
    const char ping[] = "PING\r\n";
    char buf[64];
    ok = ::write(fd, ping, sizeof ping - 1) == sizeof ping - 1 && ::read(fd, buf, sizeof buf) > 0;
  }
  if (fd >= 0) ::close(fd);
  return ok;
}

class RedisServer {
 public:
  explicit RedisServer(std::vector<std::string> extra = {}) : extra_(std::move(extra)), port_(free_loopback_port()) {
    start();
  }
  ~RedisServer() { kill_now(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  /// Starts the server (empty: nothing is saved) and waits until it answers.
  void start() {
    if (pid_ > 0) return;
    std::vector<std::string> args = {"redis-server",
                                     "--port",
                                     std::to_string(port_),
                                     "--bind",
                                     "127.0.0.1",
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--dir",
                                     dir_.path.string(),
                                     "--daemonize",
                                     "no",
                                     "--protected-mode",
                                     "yes",
                                     "--logfile",
                                     (dir_.path / "redis.log").string()};
    // A bound and an LRU policy unless the test says otherwise (later arguments win).
    args.insert(args.end(), {"--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"});
    if (redis_server_major() >= 7) args.insert(args.end(), {"--enable-debug-command", "yes"});
    args.insert(args.end(), extra_.begin(), extra_.end());
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execvp("redis-server", argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 500; ++i) {
      if (redis_answers(port_)) return;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("redis-server exited at start");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill_now();
    throw std::runtime_error("redis-server did not answer within 5 s");
  }

  /// Kills the server at once (SIGKILL) and waits for it; nothing listens on the port afterwards.
  void kill_now() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url(const std::string& userinfo = "") const {
    return "redis://" + (userinfo.empty() ? "" : userinfo + "@") + "127.0.0.1:" + std::to_string(port_);
  }

 private:
  TempDir dir_;
  std::vector<std::string> extra_;
  int port_;
  pid_t pid_ = -1;
};

}  // namespace refenc::store::test
