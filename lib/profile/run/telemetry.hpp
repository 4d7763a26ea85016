// Telemetry: CPU utilisation (this process and the whole system, from /proc) and GPU utilisation and
// memory (NVML, loaded at run time with dlopen) sampled in the background while a cell runs.
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

namespace refenc::profile {

/// NVML through dlopen. `library` is the shared object to load (overridable for tests).
class GpuProbe {
 public:
  explicit GpuProbe(const std::string& library = "libnvidia-ml.so.1");
  ~GpuProbe();
  GpuProbe(const GpuProbe&) = delete;
  GpuProbe& operator=(const GpuProbe&) = delete;

  bool available() const noexcept { return available_; }
  const std::string& reason() const noexcept { return reason_; }
  const std::string& name() const noexcept { return name_; }
  /// Samples device 0: utilisation percent, used and total memory in MiB. False on an NVML error.
  bool sample(double& util, double& used_mib, double& total_mib);

 private:
  struct Fns;
  void* lib_ = nullptr;
  std::unique_ptr<Fns> fns_;
  void* device_ = nullptr;
  bool available_ = false;
  std::string reason_;
  std::string name_;
};

/// Background sampler: starts on construction, stop() (or the destructor) ends it.
class TelemetrySampler {
 public:
  explicit TelemetrySampler(std::chrono::milliseconds interval = std::chrono::milliseconds(250),
                            const std::string& nvml_library = "libnvidia-ml.so.1");
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  /// Stops sampling and summarises (idempotent: later calls return the same summary).
  TelemetrySummary stop();

 private:
  void loop();
  void take_cpu_sample();

  std::chrono::milliseconds interval_;
  GpuProbe gpu_;
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
  double gpu_util_sum_ = 0;
};

/// CPU seconds (user + system) used by this process so far; false when /proc is unreadable.
bool process_cpu_seconds(double& seconds);
/// Busy and total jiffies of all CPUs from /proc/stat; false when unreadable.
bool system_cpu_jiffies(unsigned long long& busy, unsigned long long& total);

}  // namespace refenc::profile
