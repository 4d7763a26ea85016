#include "profile/record/noise_record.hpp"

#include <algorithm>

namespace refenc::profile {

bool NoiseSettings::runs_aa(Arm arm) const { return std::find(aa_arms.begin(), aa_arms.end(), arm) != aa_arms.end(); }

std::string aa_cell_id(const CellKey& key) { return key.id() + "/aa"; }

}  // namespace refenc::profile
