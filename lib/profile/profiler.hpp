// Profiler: runs a manifest's cells against model backends and writes the run folder with the gate.
//
// Cells run model by model, then phase, concurrency, repeat, with the arms interleaved innermost so
// slow drift of the machine hits both arms alike. Per cell: a fresh service (cold: empty tiers;
// warm: the measured references encoded first, untimed; warm-disk: a disk tier in a temp folder
// populated by one service, measured through a new service over it); warmup requests from references
// outside the measured set; stats snapshot; the measured requests (runner + modelled synthesis);
// stats delta and CPU/GPU telemetry. When `stop` turns true the current cell ends early and a partial
// report marked "interrupted" is written.
//
//   ProfileOptions o{.out_dir = "runs/x"};
//   ProfileResult r = run_profile(load_manifest("workloads/smoke.json"), my_factory, o);
//   r.gate.exit_code;
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/gate.hpp"
#include "profile/manifest.hpp"
#include "profile/model_backend.hpp"

namespace refenc::profile {

struct ProfileOptions {
  std::string out_dir;                      ///< Run folder to write (required).
  const std::atomic<bool>* stop = nullptr;  ///< Ctrl-C / SIGTERM flag.
  bool progress = false;                    ///< Progress line on stderr (only when it is a terminal).
  std::string tmp_root;                     ///< Parent of warm-disk tier folders (default: system temp).
  bool sleep_synthesis = true;              ///< false: modelled synthesis is computed, not slept (tests).
};

struct ProfileResult {
  nlohmann::json report;
  std::map<std::string, std::vector<RequestRecord>> requests;
  GateResult gate;
  bool interrupted = false;
  std::string dir;
};

/// The eligibility block of a model for M4b: {"eligible": bool, "reason": text}.
nlohmann::json eligibility(const ModelInfo& info);

ProfileResult run_profile(const Manifest& manifest, const BackendFactory& factory, const ProfileOptions& options);

}  // namespace refenc::profile
