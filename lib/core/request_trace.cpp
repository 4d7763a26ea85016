#include "core/request_trace.hpp"

namespace refenc {

std::string_view to_string(RequestOutcome o) noexcept {
  switch (o) {
    case RequestOutcome::none: return "none";
    case RequestOutcome::hit: return "hit";
    case RequestOutcome::disk_hit: return "disk_hit";
    case RequestOutcome::encoded: return "encoded";
    case RequestOutcome::merged: return "merged";
    case RequestOutcome::uncacheable: return "uncacheable";
    case RequestOutcome::failed: return "failed";
    case RequestOutcome::shared_hit: return "shared_hit";
  }
  return "none";
}

}  // namespace refenc
