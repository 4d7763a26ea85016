#include "profile/manifest/noise_manifest.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "profile/manifest/manifest_reader.hpp"

namespace refenc::profile {
using nlohmann::json;

NoiseSettings parse_noise_settings(const json& j, const std::string& path, int repeats, const std::vector<Arm>& arms) {
  const ManifestReader f(path);
  NoiseSettings n;
  auto runs = [&](Arm a) { return std::find(arms.begin(), arms.end(), a) != arms.end(); };
  n.aa_arms.clear();
  if (auto it = j.find("aa"); it != j.end()) {
    if (!it->is_array()) f.fail("aa", "must be an array of arm names (empty: no A/A cells)");
    for (std::size_t i = 0; i < it->size(); ++i) {
      std::string w = fmt::format("aa[{}]", i);
      if (!(*it)[i].is_string()) f.fail(w, "must be an arm name");
      Arm a;
      try {
        a = parse_arm((*it)[i].get<std::string>());
      } catch (const std::exception& e) {
        f.fail(w, e.what());
      }
      if (!runs(a)) f.fail(w, fmt::format("arm {} is not in arms", to_string(a)));
      if (std::find(n.aa_arms.begin(), n.aa_arms.end(), a) != n.aa_arms.end()) f.fail(w, "listed twice");
      n.aa_arms.push_back(a);
    }
  } else if (runs(Arm::m4a)) {
    n.aa_arms.push_back(Arm::m4a);
  }
  if (auto it = j.find("contamination"); it != j.end()) {
    f.object(*it, "contamination",
             {"enabled", "max_other_cores", "max_steal_share", "max_load_per_core", "max_reruns"});
    ContaminationSpec& c = n.contamination;
    if (auto e = it->find("enabled"); e != it->end()) {
      if (!e->is_boolean()) f.fail("contamination.enabled", "must be true or false");
      c.enabled = e->get<bool>();
    }
    c.max_other_cores = f.num(*it, "contamination", "max_other_cores", c.max_other_cores, 0, 4096);
    c.max_steal_share = f.num(*it, "contamination", "max_steal_share", c.max_steal_share, 0, 1);
    c.max_load_per_core = f.num(*it, "contamination", "max_load_per_core", c.max_load_per_core, 0, 1000);
    c.max_reruns = static_cast<int>(f.integer(*it, "contamination", "max_reruns", c.max_reruns, 0, 20));
  }
  n.stopping.max_repeats = repeats;
  if (auto it = j.find("stopping"); it != j.end()) {
    f.object(*it, "stopping", {"max_repeats", "target_width"});
    n.stopping.max_repeats = static_cast<int>(f.integer(*it, "stopping", "max_repeats", repeats, 1, 100));
    if (n.stopping.max_repeats < repeats)
      f.fail("stopping.max_repeats", fmt::format("must be >= repeats ({})", repeats));
    if (it->find("target_width") == it->end()) f.fail("stopping.target_width", "required");
    n.stopping.target_width = f.num(*it, "stopping", "target_width", 0, 0, 100);
    if (!(n.stopping.target_width > 0)) f.fail("stopping.target_width", "must be > 0");
  }
  return n;
}

}  // namespace refenc::profile
