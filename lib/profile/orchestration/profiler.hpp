// Profiler: runs a manifest's cells against model backends and writes the run folder with the gate.
//
// Cells run model by model, then phase, concurrency, repeat, with the arms interleaved innermost so
// slow drift of the machine hits both arms alike. Per cell: a fresh service (cold: empty tiers;
// warm: the measured references encoded first, untimed; warm-disk: a disk tier in a temp folder
// populated by one service, measured through a new service over it; warm-shared: replica A, with a
// disk folder of its own and the shared tier of cache.shared, encodes them untimed, and replica B, with
// empty memory and disk tiers over the same shared tier, is measured); warmup requests from references
// outside the measured set (by default as many as the cell's concurrency); stats snapshot; the
// measured requests (runner + modelled synthesis); stats delta and CPU/GPU telemetry; for M4b, the
// parity check of the batched artifacts against single encodes, after the timed window. A private
// redis-server for cache.shared "local" (SharedTierServer) lives as long as the run, failed or not.
// When `stop` turns true the current cell ends early and a partial report marked "interrupted" is
// written.
//
//   ProfileOptions o{.out_dir = "runs/x"};
//   ProfileResult r = run_profile(load_manifest("workloads/smoke.json"), my_factory, o);
//   int exit_code = r.run.gate->exit_code;  // r.run is the typed record written to runs/x
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "profile/record/run_record.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/model_backend.hpp"
#include "profile/telemetry/proc_sampler.hpp"

namespace refenc::profile {

/// Where and how a profile runs.
struct ProfileOptions {
  std::string out_dir;                      ///< Run folder to write (required).
  const std::atomic<bool>* stop = nullptr;  ///< Ctrl-C / SIGTERM flag.
  bool progress = false;                    ///< Progress line on stderr (only when it is a terminal).
  std::string tmp_root;         ///< Parent of warm-disk and warm-shared tier folders and of a private Redis server's.
  bool sleep_synthesis = true;  ///< false: modelled synthesis is computed, not slept (tests).
  /// Asked at the start and the end of the run for the tensor library's version and threads (the
  /// encoders' LibTorch, from the CLI); absent: recorded as unavailable.
  std::function<LibraryContext()> library_context;
  /// Reads the machine's load before and after each cell (read_proc_snapshot from the CLI; a fake in
  /// tests). A cell over the manifest's contamination thresholds is re-run up to its bound and then kept
  /// marked contaminated. Absent: no host load is recorded and nothing is judged contaminated.
  HostProbe host_probe;
};

/// What a profile produced.
struct ProfileResult {
  RunRecord run;  ///< The record written (with its raw requests and the gate).
  bool interrupted = false;
  std::string dir;
};

/// Whether a model may get the M4b arm, and why.
/// `info.eligibility.reason` is the backend's batching note; a default reason when it is empty.
Eligibility eligibility(const ModelEntry& info);

/// M4b's batch workers when the manifest leaves them at 0 (matched compute): on a GPU device one (one
/// stream), on the CPU as many as the encodes M4a runs at once at `concurrency`, at most `cores`.
int matched_batch_workers(int concurrency, const std::string& device, unsigned cores);

/// Runs every cell of `manifest`, evaluates the gate and writes the run folder to options.out_dir.
ProfileResult run_profile(const Manifest& manifest, const BackendFactory& factory, const ProfileOptions& options);

}  // namespace refenc::profile
