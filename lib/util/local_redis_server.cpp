#include "util/local_redis_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/error.hpp"

namespace refenc {
namespace {

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  return a;
}

std::string make_folder(const std::string& parent) {
  std::string base = parent.empty() ? std::filesystem::temp_directory_path().string() : parent;
  std::string tmpl = base + "/refenc-redis-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw Error(ErrorKind::io, tmpl + ": cannot create a folder for redis-server");
  return tmpl;
}

/// True when PATH holds an executable `name`.
bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (::access(((dir.empty() ? "." : dir) + "/" + name).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

/// The program run as the server: redis-server, else redis-check-rdb of Debian's redis-tools, the same
/// multi-call binary, which serves when its argv[0] is "redis-server" (so no system service is needed).
std::string server_program() {
  for (const char* name : {"redis-server", "redis-check-rdb"})
    if (on_path(name)) return name;
  return "";
}

/// The last non-empty line of the server's log (why it exited), or a note that there is none.
std::string last_log_line(const std::string& dir) {
  std::ifstream in(dir + "/redis.log");
  std::string line, last = "no log";
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

bool redis_server_available() { return !server_program().empty(); }

int redis_server_major() {
  // "Redis server v=7.0.15 ..." from redis-server; "redis-check-rdb 7.0.15" from the multi-call binary.
  const std::string program = server_program();
  if (program.empty()) return 0;
  FILE* p = ::popen((program + " --version 2>/dev/null").c_str(), "r");
  if (!p) return 0;
  char buf[256] = {0};
  std::string out = std::fgets(buf, sizeof buf, p) ? buf : "";
  ::pclose(p);
  const auto v = out.find("v=");
  if (v != std::string::npos) return std::atoi(out.c_str() + v + 2);
  const auto space = out.find(' ');
  return space == std::string::npos ? 0 : std::atoi(out.c_str() + space + 1);
}

int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = loopback(0);
  socklen_t len = sizeof a;
  const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok) throw Error(ErrorKind::io, "127.0.0.1: no free loopback port");
  return ntohs(a.sin_port);
}

bool loopback_port_answers(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = loopback(port);
  bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (ok) {
    const char ping[] = "PING\r\n";
    char buf[64];
    ok = ::write(fd, ping, sizeof ping - 1) == sizeof ping - 1 && ::read(fd, buf, sizeof buf) > 0;
  }
  if (fd >= 0) ::close(fd);
  return ok;
}

LocalRedisServer::LocalRedisServer(std::vector<std::string> extra, std::string parent)
    : extra_(std::move(extra)), dir_(make_folder(parent)) {
  try {
    if (!redis_server_available())
      throw Error(ErrorKind::config,
                  "redis-server: not found on PATH (Debian: apt-get install redis-tools, or redis-server)");
    for (int attempt = 1;; ++attempt) {  // another process may take the free port first
      port_ = free_loopback_port();
      try {
        start();
        break;
      } catch (const Error& e) {
        if (attempt == 3 || e.kind() != ErrorKind::config) throw;
      }
    }
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

LocalRedisServer::~LocalRedisServer() {
  kill_now();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string LocalRedisServer::url(const std::string& userinfo) const {
  return "redis://" + (userinfo.empty() ? "" : userinfo + "@") + "127.0.0.1:" + std::to_string(port_);
}

void LocalRedisServer::start() {
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
                                   dir_,
                                   "--daemonize",
                                   "no",
                                   "--protected-mode",
                                   "yes",
                                   "--logfile",
                                   dir_ + "/redis.log",
                                   "--maxmemory",
                                   "256mb",
                                   "--maxmemory-policy",
                                   "allkeys-lru"};
  args.insert(args.end(), extra_.begin(), extra_.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string program = server_program();
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    pid_ = -1;
    throw Error(ErrorKind::io, "redis-server: fork failed");
  }
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::syscall(SYS_close_range, 3u, ~0u, 0u);  // no inherited sockets or file locks
    ::execvp(program.c_str(), argv.data());
    ::_exit(127);
  }
  for (int i = 0; i < 500; ++i) {
    if (loopback_port_answers(port_)) return;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw Error(ErrorKind::config,
                  "redis-server on 127.0.0.1:" + std::to_string(port_) + " exited at start: " + last_log_line(dir_));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill_now();
  throw Error(ErrorKind::timeout, "redis-server on 127.0.0.1:" + std::to_string(port_) + " did not answer within 5 s");
}

void LocalRedisServer::kill_now() noexcept {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  pid_ = -1;
}

}  // namespace refenc
