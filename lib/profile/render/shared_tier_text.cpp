#include "profile/render/shared_tier_text.hpp"

#include <sstream>

#include <fmt/format.h>

namespace refenc::profile {
namespace {

double count_of(const std::map<std::string, std::size_t>& m, const char* name) {
  auto it = m.find(name);
  return it == m.end() ? 0.0 : static_cast<double>(it->second);
}

std::uint64_t counter(const Cell& c, const char* name) {
  auto it = c.cache.find(name);
  return it == c.cache.end() ? 0 : it->second;
}

}  // namespace

double hit_requests(const Cell& cell) {
  const auto& o = cell.outcomes;
  return count_of(o, "hit") + count_of(o, "disk_hit") + count_of(o, "shared_hit") + count_of(o, "merged");
}

double shared_hit_share(const Cell& cell) {
  return cell.count ? count_of(cell.outcomes, "shared_hit") / static_cast<double>(cell.count) : 0.0;
}

std::string shared_tier_lines(const RunRecord& run) {
  std::ostringstream os;
  bool header = false;
  for (const Cell& c : run.cells) {
    if (c.key.phase != Phase::warm_shared) continue;
    if (!header)
      os << "Shared tier (warm-shared: replica A filled it untimed; replica B, empty memory and disk, measured):\n";
    header = true;
    const auto& o = c.outcomes;
    os << fmt::format(
        "  {:<32} from shared {:.0f} of {} ({:.0f}%), memory {:.0f}, disk {:.0f}, encoded {:.0f}, merged {:.0f} | "
        "shared hits {}, misses {}, errors {}, lease waits {}, takeovers {}\n",
        c.key.id(), count_of(o, "shared_hit"), c.count, 100 * shared_hit_share(c), count_of(o, "hit"),
        count_of(o, "disk_hit"), count_of(o, "encoded"), count_of(o, "merged"), counter(c, "shared_hits"),
        counter(c, "shared_misses"), counter(c, "shared_errors"), counter(c, "shared_lease_waits"),
        counter(c, "shared_lease_takeovers"));
  }
  return os.str();
}

}  // namespace refenc::profile
