#include "profile/render/reuse_text.hpp"

#include <sstream>

#include <fmt/format.h>

namespace refenc::profile {

std::string reuse_table(const RunRecord& run) {
  std::ostringstream os;
  bool any = false;
  for (const Cell& c : run.cells) {
    if (!c.reuse) continue;
    const CacheReuse& r = *c.reuse;
    if (!any)
      os << "\nMemory-tier reuse: each cell's measured hit ratio (memory hits / requests with a cache key) beside "
            "the LRU miss-ratio curve's prediction from the same request trace at the cell's bounds (the curve "
            "assumes no concurrency: compare at concurrency 1):\n\n"
            "| cell | requests | distinct keys | working set (bytes) | max_bytes | hit ratio | predicted | "
            "difference (points) |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    any = true;
    os << fmt::format("| {} | {} | {} | {} | {} | {:.1f}% | {:.1f}% | {:+.1f} |\n", c.key.id(), r.requests, r.distinct,
                      r.working_set_bytes, r.max_bytes, 100 * r.hit_ratio(), 100 * r.predicted_hit_ratio,
                      100 * (r.hit_ratio() - r.predicted_hit_ratio));
  }
  return os.str();
}

}  // namespace refenc::profile
