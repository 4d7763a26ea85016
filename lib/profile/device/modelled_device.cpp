#include "profile/device/modelled_device.hpp"

#include <algorithm>
#include <chrono>

namespace refenc::profile {

void ModelledDevice::run(const CostSurface& surface, int batch, double length_s, std::uint64_t content) const {
  if (shared)
    shared->run(surface.call_seconds(batch, length_s), length_s, batch, standard_normal(content));
  else
    queue->run(std::chrono::duration_cast<DeviceQueue::Clock::duration>(
        std::chrono::duration<double>(surface.device_seconds(batch, length_s))));
}

ModelledDevice make_modelled_device(const Calibration& c) {
  ModelledDevice d;
  if (!c.sharing.capacity.empty() || !c.sharing.slowdown.empty()) {
    d.shared =
        std::make_shared<SharedDevice>(c.sharing.capacity, c.lengths_s, c.sharing.slowdown, c.sharing.batch_slowdown);
    d.parallel = std::max(1, c.context.cores);
  } else {
    d.queue = std::make_shared<DeviceQueue>(c.sharing.streams);
    d.parallel = d.queue->streams();
  }
  return d;
}

}  // namespace refenc::profile
