#include "profile/record/cell_key.hpp"

namespace refenc::profile {

std::string GroupKey::label() const {
  return model + "/" + std::string(to_string(arm)) + "/" + std::string(to_string(phase)) + "/c" +
         std::to_string(concurrency) + (threads > 0 ? "/t" + std::to_string(threads) : "");
}

std::string CellKey::id() const { return group().label() + "/r" + std::to_string(repeat); }

}  // namespace refenc::profile
