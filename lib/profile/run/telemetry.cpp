#include "profile/run/telemetry.hpp"

#include <dlfcn.h>
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

// ---- NVML ------------------------------------------------------------------------------------------

struct GpuProbe::Fns {
  using Init = int (*)();
  using Shutdown = int (*)();
  using Count = int (*)(unsigned*);
  using Handle = int (*)(unsigned, void**);
  using Util = int (*)(void*, unsigned*);  // nvmlUtilization_t = {unsigned gpu, memory}
  using Mem = int (*)(void*, unsigned long long*);  // nvmlMemory_t = {total, free, used}
  using Name = int (*)(void*, char*, unsigned);
  Init init = nullptr;
  Shutdown shutdown = nullptr;
  Count count = nullptr;
  Handle handle = nullptr;
  Util util = nullptr;
  Mem mem = nullptr;
  Name name = nullptr;
};

GpuProbe::GpuProbe(const std::string& library) : fns_(std::make_unique<Fns>()) {
  lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    const char* e = dlerror();
    reason_ = "NVML not loadable (" + library + "): " + (e ? e : "unknown error");
    return;
  }
  auto sym = [&](const char* n) { return dlsym(lib_, n); };
  fns_->init = reinterpret_cast<Fns::Init>(sym("nvmlInit_v2"));
  fns_->shutdown = reinterpret_cast<Fns::Shutdown>(sym("nvmlShutdown"));
  fns_->count = reinterpret_cast<Fns::Count>(sym("nvmlDeviceGetCount_v2"));
  fns_->handle = reinterpret_cast<Fns::Handle>(sym("nvmlDeviceGetHandleByIndex_v2"));
  fns_->util = reinterpret_cast<Fns::Util>(sym("nvmlDeviceGetUtilizationRates"));
  fns_->mem = reinterpret_cast<Fns::Mem>(sym("nvmlDeviceGetMemoryInfo"));
  fns_->name = reinterpret_cast<Fns::Name>(sym("nvmlDeviceGetName"));
  if (!fns_->init || !fns_->shutdown || !fns_->count || !fns_->handle || !fns_->util || !fns_->mem) {
    reason_ = "NVML library lacks the needed symbols";
    return;
  }
  if (int rc = fns_->init(); rc != 0) {
    reason_ = "nvmlInit failed (code " + std::to_string(rc) + ")";
    fns_->shutdown = nullptr;
    return;
  }
  unsigned n = 0;
  if (fns_->count(&n) != 0 || n == 0) {
    reason_ = "no NVIDIA GPU visible to NVML";
    return;
  }
  if (fns_->handle(0, &device_) != 0) {
    reason_ = "NVML could not open device 0";
    return;
  }
  char buf[96] = {};
  if (fns_->name && fns_->name(device_, buf, sizeof buf) == 0) name_ = buf;
  available_ = true;
}

GpuProbe::~GpuProbe() {
  if (lib_) {
    if (fns_->shutdown) fns_->shutdown();
    dlclose(lib_);
  }
}

bool GpuProbe::sample(double& util, double& used_mib, double& total_mib) {
  if (!available_) return false;
  unsigned u[2] = {};
  unsigned long long m[3] = {};
  if (fns_->util(device_, u) != 0 || fns_->mem(device_, m) != 0) return false;
  util = u[0];
  total_mib = static_cast<double>(m[0]) / (1024.0 * 1024.0);
  used_mib = static_cast<double>(m[2]) / (1024.0 * 1024.0);
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
  summary_.gpu.available = gpu_.available();
  summary_.gpu.reason = gpu_.reason();
  summary_.gpu.name = gpu_.name();
  thread_ = std::thread([this] { loop(); });
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
      summary_.cpu.system_max = std::max(summary_.cpu.system_max,
                                         double(busy - last_busy_) / double(total - last_total_));
    last_proc_s_ = proc;
    last_busy_ = busy;
    last_total_ = total;
    last_wall_ = now;
  }
}

void TelemetrySampler::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    cv_.wait_for(lock, interval_, [this] { return stopping_; });
    if (stopping_) break;
    take_cpu_sample();
    double util = 0, used = 0, total = 0;
    if (gpu_.sample(util, used, total)) {
      auto& g = summary_.gpu;
      ++g.samples;
      gpu_util_sum_ += util;
      g.util_max = std::max(g.util_max, util);
      g.memory_used_max_mib = std::max(g.memory_used_max_mib, used);
      g.memory_total_mib = total;
    }
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
  if (summary_.gpu.available && summary_.gpu.samples > 0) summary_.gpu.util_mean = gpu_util_sum_ / summary_.gpu.samples;
  if (summary_.gpu.available && summary_.gpu.samples == 0) {
    // A cell shorter than one interval: take one sample now so the report has a value.
    double util = 0, used = 0, total = 0;
    if (gpu_.sample(util, used, total)) {
      summary_.gpu.samples = 1;
      summary_.gpu.util_mean = summary_.gpu.util_max = util;
      summary_.gpu.memory_used_max_mib = used;
      summary_.gpu.memory_total_mib = total;
    }
  }
  return summary_;
}

}  // namespace refenc::profile
