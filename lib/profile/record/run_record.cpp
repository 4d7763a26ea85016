#include "profile/record/run_record.hpp"

namespace refenc::profile {

const Summary& Cell::stage(Stage s) const {
  static const Summary none;
  auto it = stages.find(s);
  return it == stages.end() ? none : it->second;
}

const std::vector<RequestRecord>& RunRecord::requests_of(const CellKey& key) const {
  static const std::vector<RequestRecord> none;
  auto it = requests.find(key.id());
  return it == requests.end() ? none : it->second;
}

}  // namespace refenc::profile

namespace refenc::profile {

const std::vector<RequestRecord>& RunRecord::aa_requests_of(const CellKey& key) const {
  static const std::vector<RequestRecord> none;
  auto it = requests.find(aa_cell_id(key));
  return it == requests.end() ? none : it->second;
}

}  // namespace refenc::profile
