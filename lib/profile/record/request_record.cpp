#include "profile/record/request_record.hpp"

namespace refenc::profile {

double RequestRecord::seconds(Stage stage) const {
  switch (stage) {
    case Stage::preprocessing: return preprocessing_s;
    case Stage::encode: return encode_s;
    case Stage::synthesis_first_audio: return synthesis_first_s;
    case Stage::synthesis_end: return synthesis_end_s;
    case Stage::ttfa: return ttfa_s;
    case Stage::e2e: return e2e_s;
    case Stage::queue: return queue_s;
  }
  return 0;
}

std::vector<double> stage_samples(const std::vector<RequestRecord>& records, Stage stage) {
  std::vector<double> v;
  v.reserve(records.size());
  for (const auto& r : records)
    if (r.ok()) v.push_back(r.seconds(stage));
  return v;
}

}  // namespace refenc::profile
