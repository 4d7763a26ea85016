// Calibration: an encoder's measured (or published) cost surface and the context it was taken in, as
// the versioned JSON file `refenc calibrate` writes and a modelled device reads (schema in
// reports/calibration.md). This module is the only code that knows the file's keys.
//
//   refenc::profile::Calibration c = refenc::profile::load_calibration("cal.json");
//   double ms = c.time_ms[0][1];                 // batch c.batch_sizes[0], length c.lengths_s[1]
//   std::string who = c.context.host + " / " + c.context.device_name;
//   refenc::profile::save_calibration(c, "out/fish.json");   // atomic: temp file + rename
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace refenc::profile {

/// The calibration file's format version (the `schema_version` key).
inline constexpr int calibration_schema_version = 1;

/// Where and with what the surface was taken.
struct CalibrationContext {
  std::string host;           ///< Host name ("published" for presets).
  std::string device;         ///< "cpu", "cuda:0", or the published device ("gpu").
  std::string device_name;    ///< CPU model or GPU name ("NVIDIA H200" for a preset).
  std::string libtorch;       ///< LibTorch version ("" when not measured).
  std::string module_sha256;  ///< SHA-256 of the TorchScript module; "" for the seeded proxy.
  std::string scale;          ///< Proxy scale measured ("" for a module or a preset).
  int threads = 0;            ///< Intra-op threads during the measurement (0 = unknown).
  int cores = 0;              ///< Logical CPUs of the host (0 = unknown).
  std::string date_utc;       ///< ISO 8601.
};

/// Latency under load at one concurrency: with `concurrency` callers of batch 1 cycling through every
/// length, a call of lengths_s[l] lasted factor[l] times its alone time (time_ms[0][l]), on average.
/// `spread` is how those latencies varied around their length's mean: the standard deviation of the
/// natural log of a call's latency from the mean log of its length's calls in the same round, pooled
/// over lengths and rounds (the overlap of calls, content and moment; not the drift between rounds).
struct SlowdownLevel {
  int concurrency = 1;
  std::vector<double> factor;  ///< One per length (aligned with Calibration::lengths_s), each > 0.
  double spread = 0;           ///< In [0, 3]; 0: not measured.

  bool operator==(const SlowdownLevel&) const = default;
};

/// Latency of batches under load: with `concurrency` callers each making calls of `batch` references
/// cycling through every length, a call of lengths_s[l] lasted factor[l] times its alone time (the
/// grid's time_ms for that batch size and length), on average; `spread` as in SlowdownLevel.
struct BatchSlowdown {
  int batch = 2;
  int concurrency = 2;
  std::vector<double> factor;  ///< One per length (aligned with Calibration::lengths_s), each > 0.
  double spread = 0;           ///< In [0, 3]; 0: not measured.

  bool operator==(const BatchSlowdown&) const = default;
};

/// How calls share the device. Without a capacity curve: `streams` calls run at once, first come
/// first served, each lasting the surface's time times `stream_slowdown` (a GPU: one stream). With
/// one: every call in flight shares the device (a CPU's cores), n calls together completing
/// effective(n) lone calls' worth of work (processor sharing, SharedDevice); with a `slowdown` table
/// as well, a call of length L among n in flight lasts its alone time times slowdown(n, L) instead,
/// and with `batch_slowdown` a batch call takes its factor from the rows of its batch size.
struct CalibrationSharing {
  int streams = 1;               ///< Calls running at once (a GPU stream: 1).
  double stream_slowdown = 1;    ///< Factor on each call's time while it shares the device (>= 1 typical).
  int measured_concurrency = 1;  ///< Concurrent callers the sharing was measured with (1: not measured).
  double throughput_per_s = 0;   ///< Calls per second measured at that concurrency (0: not measured).
  /// Measured (concurrency, effective) points: calls per second at that concurrency over calls per
  /// second alone. Empty: first come first served over `streams`.
  std::vector<std::pair<int, double>> capacity;
  /// Measured latency under load per length, concurrency ascending and distinct (optional; empty for
  /// presets and files written before it was measured).
  std::vector<SlowdownLevel> slowdown;
  /// Measured latency of batch calls under load per length, by batch size then concurrency, both
  /// ascending (optional: only with `slowdown`; each batch one of batch_sizes, above 1).
  std::vector<BatchSlowdown> batch_slowdown;
};

struct Calibration {
  int schema_version = calibration_schema_version;
  std::string name;    ///< Preset name or "<model>-<scale>-<device>".
  std::string model;   ///< Encoder registry name (fish-s2-pro, qwen3-tts, moss-tts-local).
  std::string origin;  ///< "measured" (refenc calibrate) or "published" (a preset from cited figures).
  std::string source;  ///< Citation of the figures, or the command that measured them.
  std::vector<std::string> assumptions;  ///< What is extrapolated rather than measured or published.
  CalibrationContext context;
  CalibrationSharing sharing;
  std::vector<int> batch_sizes;              ///< Ascending, distinct, first 1.
  std::vector<double> lengths_s;             ///< Ascending, distinct reference lengths (seconds), >= 1 entry.
  std::vector<std::vector<double>> time_ms;  ///< [batch][length]: one call's device time, ms (> 0).
  double overhead_ms = 0;                    ///< Per-call overhead: the fit's intercept at batch 1.
  double per_audio_second_ms = 0;            ///< The fit's slope at batch 1: ms per second of reference.
  std::uint64_t peak_memory_bytes = 0;       ///< Peak memory during the measurement (0: not read).
  std::string peak_memory_kind;              ///< "rss", "cuda" or "" (not read).

  std::string path;    ///< The file it was read from (not stored in the file).
  std::string sha256;  ///< Digest of the file's bytes (not stored); "" for an in-memory preset.

  /// "modelled device (calibration FILE, HOST, DEVICE_NAME)": the evidence grade of verdicts from it.
  std::string evidence_grade() const;
};

/// Parses and validates a calibration; errors are Error(bad_input) "<path>: <field>: <reason>".
Calibration parse_calibration(const nlohmann::json& j, const std::string& path);
/// Reads a calibration file (and its digest); throws Error(bad_input) naming the file and the field.
Calibration load_calibration(const std::string& path);
/// The file's JSON.
nlohmann::json calibration_to_json(const Calibration& c);
/// Writes the file atomically (temp file + rename); throws Error(io) naming the path.
void save_calibration(const Calibration& c, const std::string& path);

/// Least-squares line through (x, y): {intercept, slope}; slope 0 when every x is equal.
std::pair<double, double> fit_line(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace refenc::profile
