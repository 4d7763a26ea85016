// RedisClient: a small pool of hiredis connections with timeouts and a circuit breaker.
//
// Every command runs with the connect and command timeouts; a connection that failed or timed out is
// closed, never reused. When the server is unreachable, slow or refuses the login, the circuit opens:
// one warning is logged, and for a backoff (doubling from `backoff_initial` up to `backoff_max`) every
// command returns at once without touching the network; then one caller probes (half-open) and either
// closes the circuit or opens it again for longer. Callers never block longer than the timeouts and
// nothing is queued, so memory stays bounded while the server stalls. hiredis stays in the .cpp.
//
//   store::RedisClient redis({.endpoint = store::RedisEndpoint::parse("redis://127.0.0.1:6379")});
//   std::optional<store::RedisReply> r = redis.command({"GET", "some-key"});
//   if (!r) { /* down, slow or circuit open: go on without it */ }
//   else if (r->type == store::RedisReply::Type::string) use(r->str);
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/redis_endpoint.hpp"

namespace refenc::store {

/// One reply, copied out of hiredis.
struct RedisReply {
  enum class Type { nil, string, integer, status, array, error };
  Type type = Type::nil;
  std::string str;                   ///< string, status and error replies.
  long long integer = 0;             ///< integer replies.
  std::vector<RedisReply> elements;  ///< array replies.

  bool is_ok() const { return type == Type::status && str == "OK"; }
};

struct RedisClientOptions {
  RedisEndpoint endpoint;
  std::chrono::milliseconds connect_timeout{250};
  std::chrono::milliseconds command_timeout{250};
  std::size_t max_connections = 8;                 ///< Callers beyond this wait up to command_timeout.
  std::chrono::milliseconds backoff_initial{500};  ///< First time the circuit stays open.
  std::chrono::milliseconds backoff_max{30'000};
  std::string label = "shared cache";  ///< Names the server in the warning.
};

/// Counters of a RedisClient.
struct RedisClientStats {
  std::uint64_t commands = 0;       ///< Commands that got a reply (error replies included).
  std::uint64_t failures = 0;       ///< Connects and commands that failed or timed out.
  std::uint64_t skipped = 0;        ///< Commands not sent: circuit open, or no connection free in time.
  std::uint64_t circuit_opens = 0;  ///< Times the circuit opened.
};

class RedisClient {
 public:
  explicit RedisClient(RedisClientOptions options);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  /// Runs one command (arguments are binary safe). nullopt when it could not be sent or answered in
  /// time, or the circuit is open. Error replies (`-ERR ...`) are returned, not treated as failures.
  std::optional<RedisReply> command(std::initializer_list<std::string_view> args) noexcept;
  std::optional<RedisReply> command(const std::vector<std::string_view>& args) noexcept;

  /// Opens connections now until the pool holds `n` (at most max_connections), so that the first
  /// requests do not pay for connecting and logging in; returns how many the pool holds. Stops at the
  /// first failure (which opens the circuit as a failed command does). Never throws.
  std::size_t open_connections(std::size_t n) noexcept;
  /// False while the circuit is open (the server was found down, slow, or refused the login).
  bool available() const noexcept;
  /// Why the circuit last opened (never holds the password); empty if it never did.
  std::string last_failure() const;
  RedisClientStats stats() const noexcept;
  const RedisClientOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace refenc::store
