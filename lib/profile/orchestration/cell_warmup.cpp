#include "profile/orchestration/cell_warmup.hpp"

#include <algorithm>

namespace refenc::profile {

CallShape largest_calls(const ArmSpec& arm, int conc, int threads) {
  if (arm.arm == Arm::m4b && arm.max_batch_size > 1)
    return {arm.max_batch_size, std::max(1, arm.batch_workers), threads};
  return {1, std::max(1, conc), threads};
}

void CellWarmup::run(ServiceHandle& service, const std::vector<WorkItem>& warmup, CallShape shape, RunOptions options,
                     double frame_rate) {
  if (warmup.empty()) return;
  if (primed_.insert(shape).second) {
    std::vector<WorkItem> longest = warmup;
    std::stable_sort(longest.begin(), longest.end(), [](const WorkItem& a, const WorkItem& b) {
      return a.reference->seconds > b.reference->seconds;
    });
    longest.resize(std::min<std::size_t>(longest.size(), static_cast<std::size_t>(std::max(1, shape.batch))));
    service.prime(longest, shape.calls);
  }
  options.concurrency = std::min<int>(options.concurrency, static_cast<int>(warmup.size()));
  run_requests(service, warmup, options, nullptr, frame_rate);
}

}  // namespace refenc::profile
