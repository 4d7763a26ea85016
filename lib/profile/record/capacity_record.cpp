#include "profile/record/capacity_record.hpp"

namespace refenc::profile {

std::string CapacitySweep::id() const {
  return model + "/" + std::string(to_string(arm)) + "/capacity/c" + std::to_string(concurrency);
}

std::string CapacitySweep::step_id(int index) const { return id() + "/step" + std::to_string(index); }

}  // namespace refenc::profile
