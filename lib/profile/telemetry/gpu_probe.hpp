// GPU telemetry through NVML, loaded at run time with dlopen: GpuProbe reads device 0's utilisation,
// memory, power and energy counter, each metric on its own, so that a missing symbol or an
// NVML_ERROR_NOT_SUPPORTED answer loses that metric only; GpuAccumulator turns a cell's readings into
// its GpuSummary (means, maxima, energy by the counter or by integrating power).
//
//   GpuProbe probe;                      // libnvidia-ml.so.1; tests pass the path of a fake NVML
//   GpuAccumulator acc(probe);
//   acc.add(probe.read(), 0.0);          // seconds since the cell started
//   acc.add(probe.read(), 0.25);
//   GpuSummary g = acc.summary();        // g.util_mean, g.power_mean_w, g.energy_j, g.energy_method
#pragma once

#include <array>
#include <memory>
#include <string>

#include "profile/record/telemetry_summary.hpp"

namespace refenc::profile {

/// The metrics GpuProbe reads, in GpuReading's order.
enum class GpuMetric { utilization, memory, power, energy };
inline constexpr std::size_t gpu_metric_count = 4;

/// One reading of device 0: a value per metric, or why there is none this time.
struct GpuReading {
  enum class State {
    ok,          ///< The call returned a value.
    failed,      ///< The call returned an NVML error this time (counted; the next reading asks again).
    unavailable  ///< Not asked: no GPU, the symbol is missing or the device said NOT_SUPPORTED.
  };
  std::array<State, gpu_metric_count> states{State::unavailable, State::unavailable, State::unavailable,
                                             State::unavailable};
  double util_percent = 0;
  double memory_used_mib = 0, memory_total_mib = 0;
  double power_w = 0;    ///< nvmlDeviceGetPowerUsage's milliwatts / 1000.
  double energy_mj = 0;  ///< nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver loaded.

  State state(GpuMetric m) const { return states[static_cast<std::size_t>(m)]; }
  bool ok(GpuMetric m) const { return state(m) == State::ok; }
};

/// NVML through dlopen. `library` is the shared object to load (overridable for tests). Needs
/// nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2 and nvmlDeviceGetHandleByIndex_v2; each metric's
/// function, nvmlDeviceGetName and nvmlErrorString are optional.
class GpuProbe {
 public:
  explicit GpuProbe(const std::string& library = "libnvidia-ml.so.1");
  ~GpuProbe();
  GpuProbe(const GpuProbe&) = delete;
  GpuProbe& operator=(const GpuProbe&) = delete;

  bool available() const noexcept { return available_; }
  /// Why the GPU is not available (library, symbols, init, no device).
  const std::string& reason() const noexcept { return reason_; }
  const std::string& name() const noexcept { return name_; }
  /// Reads every supported metric of device 0 once. A metric answering NVML_ERROR_NOT_SUPPORTED is
  /// not asked again; any other error is a failed reading of that metric only.
  GpuReading read();
  /// Why a metric is not read (missing symbol, not supported), else its last error; empty if neither.
  const std::string& metric_reason(GpuMetric m) const { return metric_reason_[static_cast<std::size_t>(m)]; }

 private:
  struct Fns;
  /// "<function>: <nvmlErrorString> (NVML code <rc>)".
  std::string error_text(const char* function, int rc) const;
  /// Records a call's result for metric `m`; true on NVML_SUCCESS.
  bool check(GpuMetric m, const char* function, int rc, GpuReading& out);

  void* lib_ = nullptr;
  std::unique_ptr<Fns> fns_;
  void* device_ = nullptr;
  bool available_ = false;
  std::string reason_;
  std::string name_;
  std::array<bool, gpu_metric_count> supported_{};
  std::array<std::string, gpu_metric_count> metric_reason_;
};

/// A cell's GPU readings summarised. Energy is the difference of the first and last counter readings
/// ("counter"); when the counter has fewer than two readings or went backwards, power is integrated
/// over the intervals between power readings ("power_integrated"); with neither there is no energy.
class GpuAccumulator {
 public:
  /// Takes availability, name and per-metric reasons from `probe` (which must outlive it).
  explicit GpuAccumulator(const GpuProbe& probe) : probe_(probe) {}

  /// Adds a reading taken `t_s` seconds into the cell (non-decreasing from call to call).
  void add(const GpuReading& r, double t_s);
  GpuSummary summary() const;

 private:
  GpuMetricStatus& status(GpuSummary& s, GpuMetric m) const;

  const GpuProbe& probe_;
  GpuSummary s_;
  double util_sum_ = 0, power_sum_ = 0;
  double energy_first_mj_ = 0, energy_last_mj_ = 0;
  bool counter_backwards_ = false;
  double power_last_w_ = 0, power_last_t_ = 0, power_integral_j_ = 0;
};

}  // namespace refenc::profile
