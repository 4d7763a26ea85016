#include "store/redis_endpoint.hpp"

#include <arpa/inet.h>

#include <cctype>
#include <cstdlib>

#include "core/error.hpp"

namespace refenc::store {
namespace {

[[noreturn]] void bad(const std::string& why) {
  throw Error(ErrorKind::config, "shared cache URL: " + why + " (expected redis://[user[:password]@]host[:port][/db])");
}

int parse_number(std::string_view text, int max, const char* what) {
  if (text.empty() || text.size() > 9) bad(std::string(what) + " is not a number");
  int n = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) bad(std::string(what) + " is not a number");
    n = n * 10 + (c - '0');
  }
  if (n > max) bad(std::string(what) + " is out of range");
  return n;
}

/// %XX escapes in the user-info part of a URL.
std::string percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

RedisEndpoint RedisEndpoint::parse(std::string_view url, bool use_environment) {
  constexpr std::string_view scheme = "redis://";
  if (url.substr(0, scheme.size()) != scheme) bad("not a redis:// URL");
  std::string_view rest = url.substr(scheme.size());
  RedisEndpoint e;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db.empty()) e.db = parse_number(db, 1 << 20, "database");
  }
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view info = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (const auto colon = info.find(':'); colon != std::string_view::npos) {
      e.user = percent_decode(info.substr(0, colon));
      e.password = percent_decode(info.substr(colon + 1));
    } else {
      e.user = percent_decode(info);
    }
  }
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) bad("unterminated [IPv6] host");
    e.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') bad("unexpected text after the host");
      e.port = parse_number(rest.substr(1), 65535, "port");
    }
  } else if (const auto colon = rest.find(':'); colon != std::string_view::npos) {
    e.host = std::string(rest.substr(0, colon));
    e.port = parse_number(rest.substr(colon + 1), 65535, "port");
  } else {
    e.host = std::string(rest);
  }
  if (e.host.empty()) bad("no host");
  for (char c : e.host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != ':' && c != '_')
      bad("the host holds characters a host name cannot");
  if (e.port == 0) bad("port 0");
  if (use_environment) {
    if (e.password.empty()) e.password = env(kSharedCachePasswordEnv);
    if (e.user.empty()) e.user = env(kSharedCacheUserEnv);
  }
  return e;
}

std::string RedisEndpoint::display() const {
  std::string out = "redis://";
  if (!user.empty() || !password.empty()) {
    out += user;
    if (!password.empty()) out += ":***";
    out += '@';
  }
  out += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  out += ':' + std::to_string(port);
  if (db != 0) out += '/' + std::to_string(db);
  return out;
}

bool RedisEndpoint::is_loopback() const {
  if (host == "localhost" || host == "::1") return true;
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
  return false;
}

}  // namespace refenc::store
