// RequestRecord: one measured request of a cell, as the runner records it and requests.jsonl holds it.
//
//   RequestRecord r;  r.outcome = "encoded";  r.e2e_s = 1.2;
//   bool ok = r.ok();                  // false only for "failed"
//   double e2e = r.seconds(Stage::e2e);  // 1.2
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "profile/record/labels.hpp"

namespace refenc::profile {

/// One request: its reference, its stages in seconds, its outcome.
struct RequestRecord {
  std::size_t index = 0;
  std::string reference;  ///< Reference id.
  double ref_seconds = 0;
  int text_tokens = 0;
  double scheduled_s = 0;        ///< Scheduled send, from the cell's start.
  double queue_s = 0;            ///< Scheduled send to the service call.
  double preprocessing_s = 0;    ///< Measured.
  double encode_s = 0;           ///< Measured.
  double synthesis_first_s = 0;  ///< Modelled (0 when no synthesis).
  double synthesis_end_s = 0;    ///< Modelled.
  double ttfa_s = 0;
  double e2e_s = 0;
  double audio_seconds = 0;  ///< Modelled audio produced.
  std::string outcome;       ///< hit, disk_hit, encoded, merged, uncacheable, failed.
  int batch_size = 0;
  double batch_padding = 0;  ///< Padded fraction of its batch (M4b), 0 when not batched.
  std::string error;         ///< Set when failed.
  /// Its batch's id within the cell (from 1; equal ids: one encode call), 0 when not batched.
  std::uint64_t batch_id = 0;
  /// Parity of its batched artifact with a single encode of the same request (M4b): "" = not
  /// checked, else identical, within_tolerance, mismatched or error (see ParitySummary).
  std::string parity;
  std::uint64_t parity_mismatched_codes = 0;  ///< Integer elements (or shapes, fields) that differ.
  double parity_max_abs_diff = 0;             ///< Largest float difference.
  std::string parity_error;                   ///< Why the check could not run (parity "error").
  std::string key;  ///< The cache key's digest (empty: uncacheable, failed before keying, or an old run).
  std::uint64_t stored_bytes = 0;  ///< Stored size of the artifact served (0 when none or unknown).
  int worker = -1;                 ///< The runner's worker (thread) that sent it, from 0; -1 when not recorded.
  int rate_step = -1;              ///< Its step of a capacity sweep (CapacitySweep::steps index); -1: a cell's.
  double rate_per_s = 0;           ///< That step's offered arrival rate (0 for a cell's request).
  /// The compute its arm had (the cell's ArmCompute): M4b's batch workers (0 for M4a), -1 when not
  /// recorded (older runs); and the encoder library's intra-op threads (0 = unknown).
  int batch_workers = -1;
  int intra_op_threads = 0;
  bool aa = false;                 ///< Sent by an A/A twin cell.
  bool contaminated = false;       ///< Its cell stayed over the contamination thresholds.
  int attempt = 0;                 ///< Its cell's attempt (0 first; re-runs of contaminated cells count up).

  bool ok() const { return outcome != "failed"; }
  /// The time of one stage, in seconds.
  double seconds(Stage stage) const;
};

/// Samples of one stage over the successful records.
std::vector<double> stage_samples(const std::vector<RequestRecord>& records, Stage stage);

}  // namespace refenc::profile
