// Telemetry: CPU utilisation (this process and the whole system, from /proc) and GPU utilisation,
// memory, power and energy (NVML, loaded at run time with dlopen: gpu_probe.hpp) sampled in the
// background while a cell runs. The GPU is read once at the start, every interval, and once at stop.
//
// No GPU, no driver or no /proc is not an error: the summary says "unavailable" with the reason.
//
//   TelemetrySampler sampler;            // starts sampling every 250 ms
//   run_cell();
//   TelemetrySummary t = sampler.stop();  // t.cpu.process_mean, t.gpu.available, t.gpu.reason
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "profile/record/telemetry_summary.hpp"
#include "profile/telemetry/gpu_probe.hpp"

namespace refenc::profile {

/// Background sampler: starts on construction, stop() (or the destructor) ends it. An interval of
/// zero starts no thread: samples are then taken at construction, by sample_now() and at stop().
class TelemetrySampler {
 public:
  explicit TelemetrySampler(std::chrono::milliseconds interval = std::chrono::milliseconds(250),
                            const std::string& nvml_library = "libnvidia-ml.so.1");
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  /// Stops sampling and summarises (idempotent: later calls return the same summary).
  TelemetrySummary stop();
  /// Takes one CPU and GPU sample now (what the thread does each interval); ignored after stop().
  void sample_now();

 private:
  void loop();
  void take_cpu_sample();
  void take_gpu_sample();

  std::chrono::milliseconds interval_;
  GpuProbe gpu_;
  GpuAccumulator gpu_acc_{gpu_};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool stopped_ = false;
  TelemetrySummary summary_;
  std::thread thread_;
  // CPU state.
  bool cpu_ok_ = false;
  double last_proc_s_ = 0;
  unsigned long long last_busy_ = 0, last_total_ = 0;
  std::chrono::steady_clock::time_point last_wall_, first_wall_;
  double first_proc_s_ = 0;
  unsigned long long first_busy_ = 0, first_total_ = 0;
};

/// CPU seconds (user + system) used by this process so far; false when /proc is unreadable.
bool process_cpu_seconds(double& seconds);
/// Busy and total jiffies of all CPUs from /proc/stat; false when unreadable.
bool system_cpu_jiffies(unsigned long long& busy, unsigned long long& total);

}  // namespace refenc::profile
