// RedisEndpoint: where the shared tier's Redis server is and how to log in, parsed from a URL.
//
// `redis://[user[:password]@]host[:port][/db]` (port 6379, db 0 by default; `[::1]` for IPv6). A
// password missing from the URL is taken from $REFENC_SHARED_CACHE_PASSWORD, a user from
// $REFENC_SHARED_CACHE_USER. The password never appears in `display()` nor in any error message.
//
//   store::RedisEndpoint e = store::RedisEndpoint::parse("redis://cache:s3cret@10.0.0.5:6380/2");
//   e.display();        // "redis://cache:***@10.0.0.5:6380/2"
//   e.is_loopback();    // false: without a password it would need RedisTierOptions::allow_insecure
#pragma once

#include <string>
#include <string_view>

namespace refenc::store {

/// Environment variables read by RedisEndpoint::parse.
inline constexpr const char* kSharedCachePasswordEnv = "REFENC_SHARED_CACHE_PASSWORD";
inline constexpr const char* kSharedCacheUserEnv = "REFENC_SHARED_CACHE_USER";

struct RedisEndpoint {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string user;      ///< ACL user; empty: the default user.
  std::string password;  ///< Empty: no AUTH.

  /// Parses `url`; a password or user absent from it comes from the environment (when
  /// `use_environment`). Throws Error(config) naming the problem, never echoing the URL.
  static RedisEndpoint parse(std::string_view url, bool use_environment = true);

  /// The URL with the password replaced by "***" (safe to print and log).
  std::string display() const;
  /// True for localhost, 127.0.0.0/8 and ::1.
  bool is_loopback() const;
  /// True when AUTH will be sent.
  bool authenticates() const { return !password.empty(); }
};

}  // namespace refenc::store
