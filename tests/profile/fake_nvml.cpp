// A fake NVML for the telemetry tests: a shared library exporting, with C linkage and NVML's
// signatures, the functions GpuProbe loads, answering from a script the test sets before loading it.
// Built twice: fake_nvml (every function) and fake_nvml_minimal (FAKE_NVML_MINIMAL: no
// nvmlErrorString, nvmlDeviceGetName, nvmlDeviceGetPowerUsage or nvmlDeviceGetTotalEnergyConsumption).
//
// The script, a JSON object (every field optional):
//   {"init": 0,                      nvmlInit_v2's return code
//    "count": 1, "count_error": 0,   devices, and nvmlDeviceGetCount_v2's return code
//    "name": "Fake GPU",
//    "utilization": [10, {"error": 999}, 30],   one step per call: a value (NVML_SUCCESS) or an
//    "memory_used_mib": [...], "memory_total_mib": 1024,   error code; the last step repeats; a
//    "power_mw": [...], "energy_mj": [...]}     missing list answers NVML_ERROR_NOT_SUPPORTED
//
//   void* lib = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);   // the same handle GpuProbe gets
//   auto script = reinterpret_cast<int (*)(const char*)>(dlsym(lib, "fake_nvml_script"));
//   script(R"({"utilization": [10, 30]})");                      // 0 when the script parses
//   GpuProbe probe(FAKE_NVML_PATH);
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

constexpr int nvml_success = 0;
constexpr int nvml_error_invalid_argument = 2;
constexpr int nvml_error_not_supported = 3;
constexpr int nvml_error_insufficient_size = 7;

struct Step {
  int rc = nvml_success;
  double value = 0;
};

struct Script {
  int init = nvml_success;
  unsigned count = 1;
  int count_error = nvml_success;
  std::string name = "Fake GPU";
  std::map<std::string, std::vector<Step>> steps;  // by metric
  std::map<std::string, std::size_t> next;
  double memory_total_mib = 1024;
};

std::mutex mutex;
Script script;
std::map<std::string, unsigned> calls;
char device_token;  // device 0's handle is its address

/// The next step of `metric` (NOT_SUPPORTED when the script has none); counts the call.
Step next_step(const std::string& metric, const char* function) {
  std::lock_guard lock(mutex);
  ++calls[function];
  auto it = script.steps.find(metric);
  if (it == script.steps.end() || it->second.empty()) return {nvml_error_not_supported, 0};
  std::size_t& i = script.next[metric];
  Step s = it->second[std::min(i, it->second.size() - 1)];
  ++i;
  return s;
}

void count_call(const char* function) {
  std::lock_guard lock(mutex);
  ++calls[function];
}

bool is_device(void* device) { return device == &device_token; }

}  // namespace

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

extern "C" {

/// Replaces the script and resets the call counts; 0 when `text` parses, -1 otherwise.
__attribute__((visibility("default"))) int fake_nvml_script(const char* text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return -1;
  Script s;
  s.init = j.value("init", nvml_success);
  s.count = j.value("count", 1u);
  s.count_error = j.value("count_error", nvml_success);
  s.name = j.value("name", s.name);
  s.memory_total_mib = j.value("memory_total_mib", s.memory_total_mib);
  for (const char* metric : {"utilization", "memory_used_mib", "power_mw", "energy_mj"}) {
    if (!j.contains(metric)) continue;
    for (const auto& step : j[metric]) {
      if (step.is_number())
        s.steps[metric].push_back({nvml_success, step.get<double>()});
      else if (step.is_object() && step.contains("error"))
        s.steps[metric].push_back({step["error"].get<int>(), 0});
      else
        return -1;
    }
  }
  std::lock_guard lock(mutex);
  script = std::move(s);
  calls.clear();
  return 0;
}

/// How many times `function` was called since the last script.
__attribute__((visibility("default"))) unsigned fake_nvml_calls(const char* function) {
  std::lock_guard lock(mutex);
  auto it = calls.find(function);
  return it == calls.end() ? 0 : it->second;
}

__attribute__((visibility("default"))) int nvmlInit_v2() {
  count_call("nvmlInit_v2");
  std::lock_guard lock(mutex);
  return script.init;
}

__attribute__((visibility("default"))) int nvmlShutdown() {
  count_call("nvmlShutdown");
  return nvml_success;
}

__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned int* count) {
  count_call("nvmlDeviceGetCount_v2");
  std::lock_guard lock(mutex);
  if (!count) return nvml_error_invalid_argument;
  if (script.count_error != nvml_success) return script.count_error;
  *count = script.count;
  return nvml_success;
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  count_call("nvmlDeviceGetHandleByIndex_v2");
  std::lock_guard lock(mutex);
  if (!device || index >= script.count) return nvml_error_invalid_argument;
  *device = &device_token;
  return nvml_success;
}

__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void* device, nvmlUtilization_t* u) {
  if (!is_device(device) || !u) return nvml_error_invalid_argument;
  Step s = next_step("utilization", "nvmlDeviceGetUtilizationRates");
  if (s.rc == nvml_success) *u = {static_cast<unsigned>(s.value), 0};
  return s.rc;
}

__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* device, nvmlMemory_t* m) {
  if (!is_device(device) || !m) return nvml_error_invalid_argument;
  Step s = next_step("memory_used_mib", "nvmlDeviceGetMemoryInfo");
  if (s.rc != nvml_success) return s.rc;
  std::lock_guard lock(mutex);
  const double mib = 1024.0 * 1024.0;
  m->total = static_cast<unsigned long long>(script.memory_total_mib * mib);
  m->used = static_cast<unsigned long long>(s.value * mib);
  m->free = m->total - m->used;
  return nvml_success;
}

#ifndef FAKE_NVML_MINIMAL
__attribute__((visibility("default"))) const char* nvmlErrorString(int rc) {
  switch (rc) {
    case 0: return "Success";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 9: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

__attribute__((visibility("default"))) int nvmlDeviceGetName(void* device, char* name, unsigned int length) {
  count_call("nvmlDeviceGetName");
  if (!is_device(device) || !name) return nvml_error_invalid_argument;
  std::lock_guard lock(mutex);
  if (script.name.size() + 1 > length) return nvml_error_insufficient_size;
  std::memcpy(name, script.name.c_str(), script.name.size() + 1);
  return nvml_success;
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  if (!is_device(device) || !milliwatts) return nvml_error_invalid_argument;
  Step s = next_step("power_mw", "nvmlDeviceGetPowerUsage");
  if (s.rc == nvml_success) *milliwatts = static_cast<unsigned>(s.value);
  return s.rc;
}

__attribute__((visibility("default"))) int nvmlDeviceGetTotalEnergyConsumption(void* device,
                                                                               unsigned long long* millijoules) {
  if (!is_device(device) || !millijoules) return nvml_error_invalid_argument;
  Step s = next_step("energy_mj", "nvmlDeviceGetTotalEnergyConsumption");
  if (s.rc == nvml_success) *millijoules = static_cast<unsigned long long>(s.value);
  return s.rc;
}
#endif

}  // extern "C"
