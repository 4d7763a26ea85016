// RedisServer: a throwaway redis-server for tests, on a free loopback port in a temporary folder.
//
// refenc::LocalRedisServer (lib/util) with what the tests want on top: a 64 MB bound with an LRU
// policy unless the test says otherwise, and the DEBUG command on Redis 7 (for DEBUG SLEEP stalls).
// Killed by the destructor whatever happens; the child also dies with the test process. It never
// listens on anything but loopback.
//
//   RedisServer redis({"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"});
//   auto tier = store::open_redis_tier({.url = redis.url()});
//   redis.kill_now();   // the server dies mid-run
//   redis.start();      // and comes back empty on the same port
#pragma once

#include <string>
#include <vector>

#include "util/local_redis_server.hpp"

namespace refenc::store::test {

using refenc::free_loopback_port;
using refenc::redis_server_available;
using refenc::redis_server_major;

/// True when something answers a PING on 127.0.0.1:port.
inline bool redis_answers(int port) { return refenc::loopback_port_answers(port); }

/// The arguments every test server gets before its own (later arguments win).
inline std::vector<std::string> test_server_args(std::vector<std::string> extra) {
  std::vector<std::string> args{"--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"};
  if (redis_server_major() >= 7) args.insert(args.end(), {"--enable-debug-command", "yes"});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

class RedisServer : public refenc::LocalRedisServer {
 public:
  explicit RedisServer(std::vector<std::string> extra = {}) : LocalRedisServer(test_server_args(std::move(extra))) {}
};

}  // namespace refenc::store::test
