#include "profile/telemetry/gpu_probe.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace refenc::profile {

// NVML's structures as nvml.h declares them (outside the anonymous namespace: GpuProbe::Fns, a member
// type of a class with linkage, names them).
struct NvmlUtilization {
  unsigned int gpu, memory;  // percent of the last sample period
};
struct NvmlMemory {
  unsigned long long total, free, used;  // bytes
};

namespace {

// NVML's return codes as nvml.h declares them.
constexpr int nvml_success = 0;
constexpr int nvml_error_not_supported = 3;

constexpr double bytes_per_mib = 1024.0 * 1024.0;

std::size_t at(GpuMetric m) { return static_cast<std::size_t>(m); }

}  // namespace

struct GpuProbe::Fns {
  using Init = int (*)();
  using Shutdown = int (*)();
  using Count = int (*)(unsigned int*);
  using Handle = int (*)(unsigned int, void**);
  using Name = int (*)(void*, char*, unsigned int);
  using ErrorString = const char* (*)(int);
  using Util = int (*)(void*, NvmlUtilization*);
  using Mem = int (*)(void*, NvmlMemory*);
  using Power = int (*)(void*, unsigned int*);         // milliwatts
  using Energy = int (*)(void*, unsigned long long*);  // millijoules since the driver loaded
  Init init = nullptr;
  Shutdown shutdown = nullptr;
  Count count = nullptr;
  Handle handle = nullptr;
  Name name = nullptr;
  ErrorString error_string = nullptr;
  Util util = nullptr;
  Mem mem = nullptr;
  Power power = nullptr;
  Energy energy = nullptr;
};

GpuProbe::GpuProbe(const std::string& library) : fns_(std::make_unique<Fns>()) {
  lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    const char* e = dlerror();
    reason_ = "NVML not loadable (" + library + "): " + (e ? e : "unknown error");
    return;
  }
  auto sym = [&](auto& fn, const char* n) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib_, n));
  };
  sym(fns_->init, "nvmlInit_v2");
  sym(fns_->shutdown, "nvmlShutdown");
  sym(fns_->count, "nvmlDeviceGetCount_v2");
  sym(fns_->handle, "nvmlDeviceGetHandleByIndex_v2");
  sym(fns_->name, "nvmlDeviceGetName");
  sym(fns_->error_string, "nvmlErrorString");
  sym(fns_->util, "nvmlDeviceGetUtilizationRates");
  sym(fns_->mem, "nvmlDeviceGetMemoryInfo");
  sym(fns_->power, "nvmlDeviceGetPowerUsage");
  sym(fns_->energy, "nvmlDeviceGetTotalEnergyConsumption");
  if (!fns_->init || !fns_->shutdown || !fns_->count || !fns_->handle) {
    reason_ = "NVML library (" + library +
              ") lacks nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2 or "
              "nvmlDeviceGetHandleByIndex_v2";
    return;
  }
  if (int rc = fns_->init(); rc != nvml_success) {
    reason_ = error_text("nvmlInit_v2", rc);
    fns_->shutdown = nullptr;  // nothing to shut down
    return;
  }
  unsigned int n = 0;
  if (int rc = fns_->count(&n); rc != nvml_success) {
    reason_ = error_text("nvmlDeviceGetCount_v2", rc);
    return;
  }
  if (n == 0) {
    reason_ = "no NVIDIA GPU visible to NVML";
    return;
  }
  if (int rc = fns_->handle(0, &device_); rc != nvml_success) {
    reason_ = error_text("nvmlDeviceGetHandleByIndex_v2", rc);
    return;
  }
  char buf[96] = {};
  if (fns_->name && fns_->name(device_, buf, sizeof buf) == nvml_success)
    name_ = std::string(buf, strnlen(buf, sizeof buf));
  available_ = true;
  const std::array<std::pair<bool, const char*>, gpu_metric_count> present{{
      {fns_->util != nullptr, "nvmlDeviceGetUtilizationRates"},
      {fns_->mem != nullptr, "nvmlDeviceGetMemoryInfo"},
      {fns_->power != nullptr, "nvmlDeviceGetPowerUsage"},
      {fns_->energy != nullptr, "nvmlDeviceGetTotalEnergyConsumption"},
  }};
  for (std::size_t i = 0; i < gpu_metric_count; ++i) {
    supported_[i] = present[i].first;
    if (!present[i].first) metric_reason_[i] = std::string(present[i].second) + " missing from the NVML library";
  }
}

GpuProbe::~GpuProbe() {
  if (lib_) {
    if (fns_->shutdown) fns_->shutdown();
    dlclose(lib_);
  }
}

std::string GpuProbe::error_text(const char* function, int rc) const {
  std::string text = std::string(function) + ": ";
  const char* s = fns_->error_string ? fns_->error_string(rc) : nullptr;
  if (s && *s) text += std::string(s) + " ";
  return text + "(NVML code " + std::to_string(rc) + ")";
}

bool GpuProbe::check(GpuMetric m, const char* function, int rc, GpuReading& out) {
  std::size_t i = at(m);
  if (rc == nvml_success) {
    out.states[i] = GpuReading::State::ok;
    return true;
  }
  metric_reason_[i] = error_text(function, rc);
  if (rc == nvml_error_not_supported) {
    supported_[i] = false;
    out.states[i] = GpuReading::State::unavailable;
  } else {
    out.states[i] = GpuReading::State::failed;
  }
  return false;
}

GpuReading GpuProbe::read() {
  GpuReading r;
  if (!available_) return r;
  if (supported_[at(GpuMetric::utilization)]) {
    NvmlUtilization u{};
    if (check(GpuMetric::utilization, "nvmlDeviceGetUtilizationRates", fns_->util(device_, &u), r))
      r.util_percent = u.gpu;
  }
  if (supported_[at(GpuMetric::memory)]) {
    NvmlMemory m{};
    if (check(GpuMetric::memory, "nvmlDeviceGetMemoryInfo", fns_->mem(device_, &m), r)) {
      r.memory_used_mib = static_cast<double>(m.used) / bytes_per_mib;
      r.memory_total_mib = static_cast<double>(m.total) / bytes_per_mib;
    }
  }
  if (supported_[at(GpuMetric::power)]) {
    unsigned int mw = 0;
    if (check(GpuMetric::power, "nvmlDeviceGetPowerUsage", fns_->power(device_, &mw), r)) r.power_w = mw / 1000.0;
  }
  if (supported_[at(GpuMetric::energy)]) {
    unsigned long long mj = 0;
    if (check(GpuMetric::energy, "nvmlDeviceGetTotalEnergyConsumption", fns_->energy(device_, &mj), r))
      r.energy_mj = static_cast<double>(mj);
  }
  return r;
}

// ---- Accumulator --------------------------------------------------------------------------------

GpuMetricStatus& GpuAccumulator::status(GpuSummary& s, GpuMetric m) const {
  switch (m) {
    case GpuMetric::utilization: return s.metrics.utilization;
    case GpuMetric::memory: return s.metrics.memory;
    case GpuMetric::power: return s.metrics.power;
    case GpuMetric::energy: break;
  }
  return s.metrics.energy;
}

void GpuAccumulator::add(const GpuReading& r, double t_s) {
  if (!probe_.available()) return;
  ++s_.samples;
  for (std::size_t i = 0; i < gpu_metric_count; ++i) {
    auto m = static_cast<GpuMetric>(i);
    if (r.ok(m)) ++status(s_, m).samples;
    if (r.state(m) == GpuReading::State::failed) ++status(s_, m).failures;
  }
  if (r.ok(GpuMetric::utilization)) {
    util_sum_ += r.util_percent;
    s_.util_max = std::max(s_.util_max, r.util_percent);
  }
  if (r.ok(GpuMetric::memory)) {
    s_.memory_used_max_mib = std::max(s_.memory_used_max_mib, r.memory_used_mib);
    s_.memory_total_mib = r.memory_total_mib;
  }
  if (r.ok(GpuMetric::power)) {
    if (s_.metrics.power.samples > 1) power_integral_j_ += 0.5 * (power_last_w_ + r.power_w) * (t_s - power_last_t_);
    power_sum_ += r.power_w;
    s_.power_max_w = std::max(s_.power_max_w, r.power_w);
    power_last_w_ = r.power_w;
    power_last_t_ = t_s;
  }
  if (r.ok(GpuMetric::energy)) {
    if (s_.metrics.energy.samples == 1)
      energy_first_mj_ = r.energy_mj;
    else if (r.energy_mj < energy_last_mj_)
      counter_backwards_ = true;
    energy_last_mj_ = r.energy_mj;
  }
}

GpuSummary GpuAccumulator::summary() const {
  GpuSummary s = s_;
  s.available = probe_.available();
  s.reason = probe_.reason();
  s.name = probe_.name();
  if (!s.available) return s;
  if (s.metrics.utilization.samples > 0) s.util_mean = util_sum_ / s.metrics.utilization.samples;
  if (s.metrics.power.samples > 0) s.power_mean_w = power_sum_ / s.metrics.power.samples;
  for (std::size_t i = 0; i < gpu_metric_count; ++i) {
    auto m = static_cast<GpuMetric>(i);
    GpuMetricStatus& st = status(s, m);
    if (st.samples > 0) continue;
    const std::string& why = probe_.metric_reason(m);
    if (why.empty())
      st.unavailable = "unavailable: not read";
    else if (st.failures > 0)
      st.unavailable = "unavailable: every reading failed, last " + why;
    else
      st.unavailable = "unavailable: " + why;
  }
  if (s.metrics.energy.samples == 1)
    s.metrics.energy.unavailable = "unavailable: one counter reading in the cell, a difference needs two";
  if (counter_backwards_) s.metrics.energy.unavailable = "unavailable: the counter went backwards during the cell";
  if (s.metrics.energy.samples >= 2 && !counter_backwards_) {
    s.energy_j = (energy_last_mj_ - energy_first_mj_) / 1000.0;
    s.energy_method = energy_method_counter;
  } else if (s.metrics.power.samples >= 2) {
    s.energy_j = power_integral_j_;
    s.energy_method = energy_method_power_integrated;
  }
  return s;
}

}  // namespace refenc::profile
