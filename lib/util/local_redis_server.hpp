// LocalRedisServer: a private redis-server on a free loopback port in a temporary folder, for a
// profile run or a test, stopped whatever happens.
//
// Started as `redis-server --port P --bind 127.0.0.1 --save "" --appendonly no --dir TMP` with a
// memory bound and an LRU policy (plus any extra arguments, later ones win); it never listens on
// anything but loopback and never writes outside its folder. The destructor kills it (SIGKILL) and
// waits for it, so nothing listens on the port afterwards; the server also dies with the thread that
// started it (PR_SET_PDEATHSIG), so a crashed or killed owner leaves no server behind. No hiredis:
// readiness is a PING on a plain socket.
//
//   refenc::LocalRedisServer redis({"--maxmemory", "256mb"});    // throws Error(config) without redis-server
//   std::string url = redis.url();                                // "redis://127.0.0.1:<port>"
//   redis.kill_now();                                             // stopped: the port is free again
//   bool listening = refenc::loopback_port_answers(redis.port());  // false
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace refenc {

/// True when a Redis server can be run from PATH: `redis-server`, or `redis-check-rdb` (Debian's
/// redis-tools ships the server as that multi-call binary; run as "redis-server" it serves), so the
/// profiler needs no system service installed.
bool redis_server_available();

/// Major version of the server `redis_server_available` found (0 when unknown).
int redis_server_major();

/// A TCP port on 127.0.0.1 that nobody listens on now (bound to port 0, then released).
/// Throws Error(io) when none can be had.
int free_loopback_port();

/// True when something on 127.0.0.1:`port` accepts a connection and answers a PING line.
bool loopback_port_answers(int port);

class LocalRedisServer {
 public:
  /// Starts the server (see the banner) with `extra` arguments after the defaults, in a fresh folder
  /// under `parent` (default: the system temp folder), and waits until it answers. Throws
  /// Error(config) when redis-server is not installed or exits at start, Error(timeout) when it does
  /// not answer within 5 s (it is killed then).
  explicit LocalRedisServer(std::vector<std::string> extra = {}, std::string parent = "");
  /// Kills the server and removes its folder.
  ~LocalRedisServer();
  LocalRedisServer(const LocalRedisServer&) = delete;
  LocalRedisServer& operator=(const LocalRedisServer&) = delete;

  /// Starts it again (empty: nothing is saved) on the same port; a no-op while it runs.
  void start();
  /// Kills the server at once (SIGKILL) and waits for it; nothing listens on the port afterwards.
  void kill_now() noexcept;

  int port() const noexcept { return port_; }
  /// The server's process id, -1 when stopped.
  pid_t pid() const noexcept { return pid_; }
  /// Its folder (data and log file "redis.log").
  const std::string& dir() const noexcept { return dir_; }
  /// "redis://[userinfo@]127.0.0.1:<port>".
  std::string url(const std::string& userinfo = "") const;

 private:
  std::vector<std::string> extra_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace refenc
