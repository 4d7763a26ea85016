// Manifest: a profiling workload read from JSON (schema in reports/manifest.md), validated field by field.
//
// Every violation is an Error(bad_input) whose message names the file and the JSON path of the field,
// e.g. "workloads/x.json: phases[1].concurrency[0]: must be >= 1".
//
//   refenc::profile::Manifest m = refenc::profile::load_manifest("workloads/nightly.json");
//   for (const auto& model : m.models) std::cout << model.name << ": scale " << model.encoder.scale << '\n';
//   bool cold_first = m.phases[0].kind == refenc::profile::Phase::cold;
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/batch_coalescer.hpp"
#include "profile/record/labels.hpp"
#include "profile/record/noise_record.hpp"
#include "profile/record/workload_specs.hpp"
#include "profile/manifest/shared_cache_value.hpp"
#include "profile/manifest/capacity_spec.hpp"

namespace refenc::profile {

struct ModelSpec {
  std::string name;  ///< Encoder registry name: fish-s2-pro, qwen3-tts, moss-tts-local, or a test name.
  EncoderSpec encoder;
  /// Intra-op thread counts profiled as a dimension (encoder.threads given as a list; encoder.threads
  /// is then its first); empty: threads are not a dimension.
  std::vector<int> thread_levels;
  SynthesisSpec synthesis;
};

struct PhaseSpec {
  Phase kind = Phase::cold;
  std::vector<int> concurrency;  ///< Concurrency levels (each >= 1).
  int requests = 32;             ///< Measured requests per cell.
  int distinct = 0;              ///< Distinct references among them (requests cycle over them).
};

/// M4b's batching defaults when a manifest's m4b arm does not set them.
inline constexpr int default_m4b_max_batch_size = 8;
inline constexpr double default_m4b_max_batch_wait_ms = 4;
/// Batched requests an M4b cell outside the cold phase compares with single encodes (cold: all).
inline constexpr int default_parity_sample = 8;

struct ArmSpec {
  Arm arm = Arm::m4a;
  int max_batch_size = 1;                     ///< 1 for m4a; m4b: >= 2, default default_m4b_max_batch_size.
  double max_batch_wait_ms = 0;               ///< 0 for m4a; m4b: >= 0, default default_m4b_max_batch_wait_ms.
  bool cache_batched = true;                  ///< m4b: false = batched artifacts answer callers but are not cached.
  int batch_workers = 0;                      ///< m4b: batch worker threads; 0 = matched (matched_batch_workers).
  BatchGrouping group_by_length;              ///< m4b: "exact", or a number = the largest padded fraction of a batch.
  int parity_sample = default_parity_sample;  ///< m4b: parity checks per non-cold cell (cold: every one).
};

struct ArrivalSpec {
  bool open_loop = false;  ///< false: closed loop with `concurrency` workers.
  double rate_per_s = 0;   ///< Open loop: Poisson arrival rate (> 0).
};

/// ReferenceSpec::warmup's default: warm each cell up with as many requests as its concurrency.
inline constexpr int warmup_concurrency = -1;
/// References the set must hold beyond the measured ones when warmup is warmup_concurrency.
inline constexpr int min_warmup_references = 2;

/// One line of a request trace: when the request arrives and which reference it sends.
struct TraceLine {
  double t = 0;           ///< Arrival, seconds (non-decreasing).
  std::string reference;  ///< Any id; equal ids send the same reference.
};

struct ReferenceSpec {
  std::vector<std::string> clips;  ///< Clip paths, resolved against the manifest's folder.
  int variants = 0;                ///< Distinct derived variants (0 = the clips themselves).
  double variant_gain_db = 0.5;    ///< Largest seeded gain change of a variant.
  /// Warmup requests per cell, from references outside the measured set; warmup_concurrency (the
  /// default): as many as the cell's concurrency, over as many distinct references as the set holds
  /// beyond the measured ones.
  int warmup = warmup_concurrency;
  std::optional<double> zipf;          ///< Popularity: reference rank r (from 0) drawn with weight 1/(r+1)^s
                                       ///< over the phase's `distinct`; absent: request j uses j mod distinct.
  double never_seen_share = 0;         ///< Share (0..1) of a phase's requests sent with a fresh reference.
  std::string trace;                   ///< Request trace file (JSONL), resolved; empty: none.
  std::vector<TraceLine> trace_lines;  ///< Its lines: they set each phase's references and arrival times.
};

struct CacheSpec {
  std::size_t max_items = 4096;
  std::size_t max_bytes = std::size_t(512) << 20;
  /// The tier shared by replicas, for warm-shared phases: "" (none), local_shared_cache, or a
  /// redis://[user@]host[:port][/db] URL without a password (that comes from the environment).
  std::string shared;
  /// Set by the profiler for the services of a warm-shared cell (empty otherwise): the URL of the
  /// server to use and the key prefix of the cell, so that cells and runs never see each other's values.
  std::string shared_url, shared_prefix;
};

struct Manifest {
  std::string path;    ///< As given to load_manifest.
  std::string sha256;  ///< Digest of the file's bytes.
  std::string name;
  std::uint64_t seed = 1;
  std::vector<ModelSpec> models;
  ReferenceSpec references;
  std::vector<std::string> texts;
  std::vector<PhaseSpec> phases;
  std::vector<ArmSpec> arms;
  int repeats = 1;
  ArrivalSpec arrivals;
  GateSpec gate;
  CacheSpec cache;
  NoiseSettings noise;  ///< A/A arms, contamination thresholds, the stopping rule ("aa", "contamination", "stopping").
  nlohmann::json raw;   ///< The manifest as parsed (kept in the report).

  std::optional<CapacitySpec> capacity;  ///< Open-loop rate sweeps per arm (cold phase), when asked for.

  /// Measured references needed: the largest `distinct` of any phase.
  int measured_references() const;
  /// References the set holds (variants, or the clips themselves).
  int available_references() const;
  /// Distinct warmup references: `warmup` when set, else up to the largest concurrency, as many as the
  /// set holds beyond the measured ones.
  int warmup_references() const;
  /// Warmup requests of a cell at `concurrency`.
  int warmup_requests(int concurrency) const {
    return references.warmup == warmup_concurrency ? concurrency : references.warmup;
  }
  /// Never-seen references needed after the measured and warmup ones: the most any phase sends.
  int never_seen_references() const;
};

/// Parses and validates a manifest. `path` names it in errors and resolves clip paths.
Manifest parse_manifest(const nlohmann::json& j, const std::string& path);

/// Reads, parses and validates a manifest file. Throws Error(bad_input) naming the file and field.
Manifest load_manifest(const std::string& path);

}  // namespace refenc::profile
