#include "profile/telemetry/telemetry.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace refenc::profile {

bool process_cpu_seconds(double& seconds) {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // Fields after the command: state(3) ... utime(14) stime(15); index 0 here is field 3.
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  long hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0) return false;
  seconds = static_cast<double>(utime + stime) / static_cast<double>(hz);
  return true;
}

bool system_cpu_jiffies(unsigned long long& busy, unsigned long long& total) {
  std::ifstream in("/proc/stat");
  std::string cpu;
  if (!in || !(in >> cpu) || cpu != "cpu") return false;
  unsigned long long v[10] = {};
  for (auto& x : v) in >> x;
  total = 0;
  for (auto x : v) total += x;
  total -= v[8] + v[9];  // guest time is already counted in user
  unsigned long long idle = v[3] + v[4];
  busy = total - idle;
  return true;
}

// ---- Sampler -----------------------------------------------------------------------------------------

TelemetrySampler::TelemetrySampler(std::chrono::milliseconds interval, const std::string& nvml_library)
    : interval_(interval), gpu_(nvml_library) {
  summary_.cpu.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  cpu_ok_ = process_cpu_seconds(first_proc_s_) && system_cpu_jiffies(first_busy_, first_total_);
  if (!cpu_ok_) summary_.cpu.reason = "/proc/self/stat or /proc/stat unreadable";
  last_proc_s_ = first_proc_s_;
  last_busy_ = first_busy_;
  last_total_ = first_total_;
  first_wall_ = last_wall_ = std::chrono::steady_clock::now();
  take_gpu_sample();
  if (interval_.count() > 0) thread_ = std::thread([this] { loop(); });
}

TelemetrySampler::~TelemetrySampler() { stop(); }

void TelemetrySampler::take_cpu_sample() {
  if (!cpu_ok_) return;
  double proc = 0;
  unsigned long long busy = 0, total = 0;
  if (!process_cpu_seconds(proc) || !system_cpu_jiffies(busy, total)) return;
  auto now = std::chrono::steady_clock::now();
  double wall = std::chrono::duration<double>(now - last_wall_).count();
  if (wall > 0.05) {
    summary_.cpu.process_max = std::max(summary_.cpu.process_max, (proc - last_proc_s_) / wall);
    if (total > last_total_)
      summary_.cpu.system_max =
          std::max(summary_.cpu.system_max, double(busy - last_busy_) / double(total - last_total_));
    last_proc_s_ = proc;
    last_busy_ = busy;
    last_total_ = total;
    last_wall_ = now;
  }
}

void TelemetrySampler::take_gpu_sample() {
  if (!gpu_.available()) return;
  GpuReading r = gpu_.read();
  gpu_acc_.add(r, std::chrono::duration<double>(std::chrono::steady_clock::now() - first_wall_).count());
}

void TelemetrySampler::sample_now() {
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  take_cpu_sample();
  take_gpu_sample();
}

void TelemetrySampler::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    cv_.wait_for(lock, interval_, [this] { return stopping_; });
    if (stopping_) break;
    take_cpu_sample();
    take_gpu_sample();
  }
}

TelemetrySummary TelemetrySampler::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return summary_;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  stopped_ = true;
  take_cpu_sample();
  if (cpu_ok_) {
    double proc = 0;
    unsigned long long busy = 0, total = 0;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_wall_).count();
    if (process_cpu_seconds(proc) && system_cpu_jiffies(busy, total) && wall > 0) {
      summary_.cpu.available = true;
      summary_.cpu.process_mean = (proc - first_proc_s_) / wall;
      summary_.cpu.system_mean = total > first_total_ ? double(busy - first_busy_) / double(total - first_total_) : 0;
      summary_.cpu.process_max = std::max(summary_.cpu.process_max, summary_.cpu.process_mean);
      summary_.cpu.system_max = std::max(summary_.cpu.system_max, summary_.cpu.system_mean);
    }
  }
  take_gpu_sample();
  summary_.gpu = gpu_acc_.summary();
  return summary_;
}

}  // namespace refenc::profile
