// The manifest's noise blocks: "aa" (arms run twice per cell, A/A), "contamination" (thresholds
// over which a cell is re-run and then decides nothing) and "stopping" (repeat cold cells until the
// gate's intervals are narrow enough). Schema in reports/manifest.md.
//
//   nlohmann::json j = nlohmann::json::parse(R"({"aa": ["m4a"], "stopping": {"max_repeats": 4, "target_width": 0.1}})");
//   NoiseSettings n = parse_noise_settings(j, "workloads/x.json", /*repeats=*/1, {Arm::m4a, Arm::m4b});
//   int most = n.stopping.max_repeats;  // 4
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/record/noise_record.hpp"

namespace refenc::profile {

/// Reads the noise blocks of manifest `j` (absent blocks take their defaults; the default A/A arm is
/// m4a when the manifest runs it). Throws Error(bad_input) "<path>: <field>: <why>".
NoiseSettings parse_noise_settings(const nlohmann::json& j, const std::string& path, int repeats,
                                   const std::vector<Arm>& arms);

}  // namespace refenc::profile
