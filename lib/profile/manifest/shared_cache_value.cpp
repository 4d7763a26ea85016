#include "profile/manifest/shared_cache_value.hpp"

namespace refenc::profile {

std::string shared_cache_problem(const std::string& value) {
  if (value == local_shared_cache) return "";
  const std::string scheme = "redis://";
  if (value.rfind(scheme, 0) != 0)
    return std::string("must be \"") + local_shared_cache + "\" or a redis://[user@]host[:port][/db] URL (got '" +
           value + "')";
  std::string rest = value.substr(scheme.size());
  const auto at = rest.rfind('@');
  if (at != std::string::npos) {
    if (rest.substr(0, at).find(':') != std::string::npos)
      return "no password in a manifest (report.json copies it): set $REFENC_SHARED_CACHE_PASSWORD instead";
    rest = rest.substr(at + 1);
  }
  if (rest.empty() || rest[0] == ':' || rest[0] == '/') return "the URL names no host";
  return "";
}

}  // namespace refenc::profile
