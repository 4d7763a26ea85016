// RunRecord: a profile run as typed data -- what report.json and requests.jsonl hold. The profiler
// builds it, record_json.hpp is the only code that turns it into JSON or back, and the gate, compare,
// the text summary and the HTML page read it.
//
//   RunRecord run = load_run("runs/20261202-143000-nightly");   // run_folder.hpp
//   for (const Cell& c : run.cells) std::cout << c.key.id() << ' ' << c.stage(Stage::e2e).p95 << '\n';
//   double first = run.requests_of(run.cells[0].key)[0].e2e_s;
//   Verdict v = run.gate->models[0].verdict;
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/record/capacity_record.hpp"
#include "profile/record/cell_key.hpp"
#include "profile/record/gate_report.hpp"
#include "profile/record/host_load.hpp"
#include "profile/record/labels.hpp"
#include "profile/record/noise_record.hpp"
#include "profile/record/request_record.hpp"
#include "profile/record/telemetry_summary.hpp"
#include "profile/record/workload_specs.hpp"
#include "profile/stats/percentile.hpp"

namespace refenc::profile {

/// report.json's "schema_version" written by this code; version 1 reports are read as well.
inline constexpr int report_schema_version = 1;

/// Whether the load generator kept to its schedule (open loop).
struct GeneratorLag {
  bool behind = false;
  std::size_t late = 0;
  double max_lag_s = 0;
};

/// Parity of a cell's batched artifacts with single encodes of the same requests (M4b cells),
/// checked after the timed window: every batched request in cold cells, the first `sample` elsewhere.
/// A request is identical (bit-exact), within_tolerance (no integer differs and float differences are
/// at most `tolerance`, the manifest's per-model encoder.parity_tolerance), mismatched, or error (the
/// single encode or the comparison failed).
struct ParitySummary {
  std::size_t batched = 0;  ///< Requests whose artifact a batch produced (leaders).
  std::size_t checked = 0;  ///< Of them, compared with a single encode.
  std::size_t identical = 0;
  std::size_t within_tolerance = 0;
  std::size_t mismatched = 0;
  std::size_t errors = 0;
  std::uint64_t mismatched_codes = 0;  ///< Summed over the checked requests.
  double max_abs_diff = 0;             ///< Largest over the checked requests.
  double tolerance = 0;
  std::size_t sample = 0;  ///< Most requests checked (0 = all).

  /// True when every checked request is identical or within tolerance.
  bool holds() const { return mismatched == 0 && errors == 0; }
};

/// The compute a cell's encodes got. Matched compute: M4b's batch workers default to the encode
/// threads M4a gets at the same concurrency (orchestration/profiler.hpp, matched_batch_workers).
struct ArmCompute {
  int encode_threads = 0;    ///< Encodes that can run at once: M4a the cell's concurrency, M4b its batch workers.
  int batch_workers = 0;     ///< M4b's batch worker threads; 0 for M4a.
  int intra_op_threads = 0;  ///< The encoder library's intra-op threads (0 = unknown).
  std::string device;        ///< The encoder's device ("cpu", "cuda:0").
};

/// A cell's memory-tier reuse: its measured hit ratio beside the LRU miss-ratio curve of its own
/// request trace (stats/miss_ratio_curve.hpp). Both count the successful requests that had a cache key,
/// in send order, each as (key, stored_bytes); a hit is outcome "hit" (a merge or a disk hit is not).
/// The curve assumes a tier that starts empty and sees no concurrency: compare it with cold cells run
/// at concurrency 1.
struct CacheReuse {
  std::size_t requests = 0;             ///< Successful requests with a cache key.
  std::size_t hits = 0;                 ///< Of which memory hits.
  std::size_t distinct = 0;             ///< Distinct keys among them.
  std::uint64_t working_set_bytes = 0;  ///< Stored bytes of the distinct keys.
  std::uint64_t max_bytes = 0;          ///< The cell's memory-tier bounds.
  std::uint64_t max_items = 0;
  double predicted_hit_ratio = 0;                        ///< The curve at (max_bytes, max_items).
  std::vector<std::pair<std::uint64_t, double>> points;  ///< (max_bytes, hit ratio) at max_items.

  /// hits / requests (0 when none).
  double hit_ratio() const { return requests ? static_cast<double>(hits) / static_cast<double>(requests) : 0.0; }
};

/// One cell's figures (schema: reports/report.schema.json, "cells" items).
struct Cell {
  CellKey key;
  bool open_loop = false;
  bool batching_active = false;
  std::size_t count = 0;                        ///< Requests sent.
  std::size_t errors = 0;                       ///< Failed requests.
  std::map<std::string, std::size_t> outcomes;  ///< Requests per outcome.
  double wall_s = 0;
  double throughput_rps = 0;
  double audio_seconds_per_s = 0;
  std::map<Stage, Summary> stages;             ///< The reported stages, over successful requests.
  std::map<std::string, std::uint64_t> cache;  ///< Service counter deltas by name.
  std::vector<std::uint64_t> batch_size_histogram;
  GeneratorLag generator;
  TelemetrySummary telemetry;
  std::optional<ParitySummary> parity;  ///< M4b cells with batching active.
  std::optional<ArmCompute> compute;    ///< Absent in reports written before it was recorded.
  bool interrupted = false;
  std::vector<std::string> warnings;
  std::optional<CacheReuse> reuse;         ///< Absent when the requests carry no cache keys.
  bool aa = false;                         ///< An A/A twin: the same arm run again beside its cell.
  std::optional<HostLoad> host_load;       ///< The machine during the kept attempt (absent in older reports).
  bool contaminated = false;               ///< Over the contamination thresholds even after the re-runs.
  std::vector<std::string> contamination;  ///< Why, one line per threshold crossed.
  std::vector<HostLoad> discarded;         ///< Earlier attempts re-run because they were contaminated.

  /// A stage's summary, all zero when the cell has none.
  const Summary& stage(Stage s) const;
};

/// Whether a model may get the M4b arm, and why.
struct Eligibility {
  bool eligible = false;
  std::string reason;
};

/// The calibration behind a modelled device: which file (or preset), its digest, context and citation.
struct CalibrationRef {
  std::string name;         ///< The calibration's name (a preset's name for presets).
  std::string path;         ///< The file read; "" for a preset.
  std::string sha256;       ///< The file's digest; "" for a preset.
  std::string origin;       ///< "measured" or "published".
  std::string host;         ///< Where it was measured ("published" for presets).
  std::string device_name;  ///< The device it describes.
  std::string source;       ///< Citation or the measuring command.
};

/// A profiled model: what it is, how it was built, and its evidence grade.
struct ModelEntry {
  std::string name;
  std::string scale;
  std::string evidence_grade;  ///< "proxy scale tiny (seeded weights)" or "real module <path>".
  bool real_weights = false;
  int sample_rate = 0;
  double frame_rate = 0;
  bool can_encode_batch = false;
  bool has_internal_batching = false;
  Eligibility eligibility;
  EncoderSpec encoder;
  SynthesisSpec synthesis;
  std::optional<CalibrationRef> calibration;  ///< Set for a modelled device (encoder.device "modelled").
};

/// An arm that was not run for a model, with the reason.
struct SkippedArm {
  std::string model;
  Arm arm = Arm::m4b;
  std::string reason;
};

/// LibTorch as the run saw it, with the malloc its CPU buffers come from (or why it could not be asked).
struct LibraryContext {
  std::string version;
  std::string blas;
  int intra_op_threads = 0;
  int blas_threads = 0;  ///< OpenBLAS's threads (0: not OpenBLAS, or not recorded).
  std::string allocator;  ///< The process's malloc, e.g. "tcmalloc_minimal", "glibc" (empty: not recorded).
  std::string parallel_info;
  std::string reason;  ///< Set when the version is "unavailable".
};

/// One encoder's scale and evidence, repeated in the context for a reader of the context alone.
struct EncoderContext {
  std::string model, scale, evidence;
  bool real_weights = false;
};

/// Where and how the run happened.
struct RunContext {
  std::string host;
  std::string cpu_model;
  unsigned cores = 0;
  std::optional<LibraryContext> libtorch;
  std::string git_revision;
  std::string manifest_path;
  std::string manifest_sha256;
  std::uint64_t seed = 1;
  std::string started_utc;
  std::vector<EncoderContext> encoders;
  std::string shared_cache;  ///< The warm-shared cells' Redis server (no password); empty: none.
};

/// The manifest as the run recorded it.
struct ManifestSummary {
  std::string name, path, sha256;  ///< The manifest's name, the path it was read from, its file's SHA-256.
  std::uint64_t seed = 1;          ///< Seeds reference variants, open-loop schedules and the gate's bootstrap.
  GateSpec gate;                   ///< The gate's thresholds and bootstrap settings.
  std::map<Phase, std::vector<int>> levels;  ///< Profiled concurrency levels per phase kind, in manifest order.
  nlohmann::json content;                    ///< The manifest file as parsed (kept verbatim).
};

/// A whole run: what report.json holds, with the raw requests of requests.jsonl.
struct RunRecord {
  std::string dir;  ///< The folder it was loaded from or written to.
  int schema_version = report_schema_version;
  std::string status = "complete";  ///< "complete" or "interrupted".
  double wall_s = 0;
  RunContext context;
  ManifestSummary manifest;
  std::vector<ModelEntry> models;
  std::vector<Cell> cells;
  std::vector<Cell> aa_cells;  ///< A/A twins (not pooled into any group; requests under aa_cell_id).
  std::vector<SkippedArm> skipped;
  std::optional<GateReport> gate;
  std::optional<CapacityReport> capacity;                      ///< Rate sweeps, when the manifest asks for them.
  std::map<std::string, std::vector<RequestRecord>> requests;  ///< Raw requests by cell (or sweep step) id.
  bool have_requests = false;                                  ///< False when requests.jsonl was absent.
  std::optional<NoiseSettings> noise;  ///< Absent in reports written before A/A cells and contamination.

  /// The gate options of this run: the manifest's gate spec and the run's seed.
  GateOptions gate_options() const { return {manifest.gate, context.seed}; }
  /// The raw requests of a cell (empty when none).
  const std::vector<RequestRecord>& requests_of(const CellKey& key) const;
  /// The raw requests of `key`'s A/A twin (empty when none).
  const std::vector<RequestRecord>& aa_requests_of(const CellKey& key) const;
};

}  // namespace refenc::profile
