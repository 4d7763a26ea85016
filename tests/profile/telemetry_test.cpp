// GPU telemetry through a fake NVML (fake_nvml.cpp): loading, init and device failures, a scripted
// cell's utilisation, memory, power and energy (per encode too), failures mid-run, unsupported and
// missing metrics, and the report's telemetry block in both directions.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <thread>

#include "core/service_stats.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/text_report.hpp"
#include "profile/orchestration/cell_metrics.hpp"
#include "profile/telemetry/gpu_probe.hpp"
#include "profile/telemetry/telemetry.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;
using nlohmann::json;

namespace {

/// The fake library, opened by the test (GpuProbe's dlopen of the same path shares its state).
class FakeNvml {
 public:
  explicit FakeNvml(const char* path = FAKE_NVML_PATH) : lib_(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
    REQUIRE(lib_ != nullptr);
    script_ = reinterpret_cast<int (*)(const char*)>(dlsym(lib_, "fake_nvml_script"));
    calls_ = reinterpret_cast<unsigned (*)(const char*)>(dlsym(lib_, "fake_nvml_calls"));
    REQUIRE(script_ != nullptr);
    REQUIRE(calls_ != nullptr);
  }
  ~FakeNvml() { dlclose(lib_); }
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;

  void script(const std::string& text) { REQUIRE(script_(text.c_str()) == 0); }
  unsigned calls(const char* function) const { return calls_(function); }

 private:
  void* lib_;
  int (*script_)(const char*) = nullptr;
  unsigned (*calls_)(const char*) = nullptr;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// A cell whose counters say 12 leaders missed memory, 2 of them found the disk tier, and 1 request
/// had no key: 11 encodes.
Cell cell_with(const TelemetrySummary& t) {
  refenc::ServiceStats delta;
  delta.misses = 12;
  delta.tier.disk_hits = 2;
  delta.uncacheable = 1;
  delta.hits = 5;
  return make_cell({"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0}, RunResult{}, delta, t, false, false);
}

}  // namespace

TEST_CASE("telemetry: NVML missing, failing to init or without a device leaves the GPU unavailable, saying why") {
  SECTION("no library") {
    GpuProbe probe("libnvidia-ml-absent-for-tests.so.1");
    CHECK_FALSE(probe.available());
    CHECK(contains(probe.reason(), "NVML not loadable (libnvidia-ml-absent-for-tests.so.1)"));
    CHECK_FALSE(probe.read().ok(GpuMetric::utilization));
  }
  FakeNvml fake;
  SECTION("init fails") {
    fake.script(R"({"init": 9})");
    {
      GpuProbe probe(FAKE_NVML_PATH);
      CHECK_FALSE(probe.available());
      CHECK(probe.reason() == "nvmlInit_v2: Driver Not Loaded (NVML code 9)");
    }
    CHECK(fake.calls("nvmlShutdown") == 0);  // nothing to shut down after a failed init
    CHECK(fake.calls("nvmlDeviceGetCount_v2") == 0);
  }
  SECTION("no device") {
    fake.script(R"({"count": 0})");
    {
      TelemetrySampler sampler(std::chrono::milliseconds(0), FAKE_NVML_PATH);
      TelemetrySummary t = sampler.stop();
      CHECK_FALSE(t.gpu.available);
      CHECK(t.gpu.reason == "no NVIDIA GPU visible to NVML");
      CHECK(t.gpu.samples == 0);
      json j = to_json(t);
      CHECK(j["gpu"] == json{{"available", false}, {"reason", "no NVIDIA GPU visible to NVML"}});
    }
    CHECK(fake.calls("nvmlShutdown") == 1);
  }
  SECTION("the device count call fails") {
    fake.script(R"({"count_error": 999})");
    GpuProbe probe(FAKE_NVML_PATH);
    CHECK_FALSE(probe.available());
    CHECK(probe.reason() == "nvmlDeviceGetCount_v2: Unknown Error (NVML code 999)");
  }
}

TEST_CASE("telemetry: a scripted cell's utilisation, memory, power, energy and energy per encode") {
  FakeNvml fake;
  // Five readings: at construction, three taken with sample_now(), one at stop().
  fake.script(R"({"name": "Fake H200",
                  "utilization": [10, 30, 50, 70, 90],
                  "memory_used_mib": [100, 400, 300, 200, 150], "memory_total_mib": 1024,
                  "power_mw": [100000, 200000, 300000, 200000, 200000],
                  "energy_mj": [1000000, 1010000, 1030000, 1040000, 1050500]})");
  TelemetrySampler sampler(std::chrono::milliseconds(0), FAKE_NVML_PATH);
  for (int i = 0; i < 3; ++i) sampler.sample_now();
  TelemetrySummary t = sampler.stop();
  CHECK(sampler.stop().gpu.samples == 5);  // idempotent: no further reading
  const GpuSummary& g = t.gpu;
  REQUIRE(g.available);
  CHECK(g.name == "Fake H200");
  CHECK(g.samples == 5);
  CHECK(g.util_mean == 50);
  CHECK(g.util_max == 90);
  CHECK(g.memory_used_max_mib == 400);
  CHECK(g.memory_total_mib == 1024);
  CHECK(g.power_mean_w == 200);
  CHECK(g.power_max_w == 300);
  CHECK(g.energy_method == energy_method_counter);
  CHECK(g.energy_j == 50.5);
  for (const GpuMetricStatus* m : {&g.metrics.utilization, &g.metrics.memory, &g.metrics.power, &g.metrics.energy}) {
    CHECK(m->samples == 5);
    CHECK(m->failures == 0);
    CHECK(m->unavailable.empty());
  }
  CHECK(fake.calls("nvmlDeviceGetTotalEnergyConsumption") == 5);

  Cell c = cell_with(t);
  CHECK(c.telemetry.gpu.encodes == 11);
  CHECK(c.telemetry.gpu.energy_per_encode_j == Approx(50.5 / 11));
  json j = to_json(c.telemetry)["gpu"];
  CHECK(j["energy_j"] == 50.5);
  CHECK(j["energy_method"] == "counter");
  CHECK(j["encodes"] == 11);
  CHECK(j["energy_per_encode_j"].get<double>() == Approx(50.5 / 11));
  CHECK(j["power_w_mean"] == 200);
  CHECK(j["power_w_max"] == 300);
  CHECK(j["metrics"]["energy"] == json{{"samples", 5}, {"failures", 0}});
}

TEST_CASE("telemetry: a utilisation call failing mid-run is counted, not fatal") {
  FakeNvml fake;
  fake.script(R"({"utilization": [10, {"error": 999}, 30], "memory_used_mib": [200], "power_mw": [50000],
                  "energy_mj": [0, 1000, 2000]})");
  TelemetrySampler sampler(std::chrono::milliseconds(0), FAKE_NVML_PATH);
  sampler.sample_now();
  TelemetrySummary t = sampler.stop();
  const GpuSummary& g = t.gpu;
  REQUIRE(g.available);
  CHECK(g.samples == 3);
  CHECK(g.metrics.utilization.samples == 2);
  CHECK(g.metrics.utilization.failures == 1);
  CHECK(g.metrics.utilization.unavailable.empty());
  CHECK(g.util_mean == 20);
  CHECK(g.util_max == 30);
  CHECK(g.metrics.memory.samples == 3);
  CHECK(g.memory_used_max_mib == 200);
  CHECK(g.energy_j == 2.0);
  CHECK(fake.calls("nvmlDeviceGetUtilizationRates") == 3);  // asked again after the failure
  CHECK(to_json(t)["gpu"]["metrics"]["utilization"] == json{{"samples", 2}, {"failures", 1}});
}

TEST_CASE("telemetry: with the energy counter unsupported, power is integrated over the intervals") {
  FakeNvml fake;
  fake.script(R"({"utilization": [5], "memory_used_mib": [10], "power_mw": [100000, 200000, {"error": 999}, 200000],
                  "energy_mj": [{"error": 3}]})");
  GpuProbe probe(FAKE_NVML_PATH);
  REQUIRE(probe.available());
  GpuAccumulator acc(probe);
  acc.add(probe.read(), 0.0);  // 100 W
  acc.add(probe.read(), 1.0);  // 200 W: 150 J over the first second
  acc.add(probe.read(), 2.0);  // power failed: the next trapezoid spans the gap
  acc.add(probe.read(), 3.0);  // 200 W: 400 J over the next two seconds
  GpuSummary g = acc.summary();
  CHECK(g.energy_method == energy_method_power_integrated);
  CHECK(g.energy_j == 550);
  CHECK(g.power_mean_w == Approx(500.0 / 3));
  CHECK(g.power_max_w == 200);
  CHECK(g.metrics.power.failures == 1);
  CHECK(g.metrics.energy.samples == 0);
  CHECK(g.metrics.energy.unavailable ==
        "unavailable: nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML code 3)");
  CHECK(fake.calls("nvmlDeviceGetTotalEnergyConsumption") == 1);  // not asked again once unsupported
  json j = to_json(TelemetrySummary{{}, g})["gpu"];
  CHECK(j["energy_method"] == "power_integrated");
  CHECK(j["metrics"]["energy"]["unavailable"] == g.metrics.energy.unavailable);
}

TEST_CASE("telemetry: power not supported and energy missing from the library lose those metrics only") {
  SECTION("power answers NOT_SUPPORTED, energy has one reading") {
    FakeNvml fake;
    fake.script(R"({"utilization": [40], "memory_used_mib": [10], "power_mw": [{"error": 3}], "energy_mj": [7]})");
    TelemetrySampler sampler(std::chrono::milliseconds(0), FAKE_NVML_PATH);
    TelemetrySummary t = sampler.stop();
    CHECK(t.gpu.available);
    CHECK(t.gpu.util_mean == 40);
    CHECK(t.gpu.metrics.power.unavailable == "unavailable: nvmlDeviceGetPowerUsage: Not Supported (NVML code 3)");
    CHECK(t.gpu.metrics.energy.samples == 2);
    CHECK(t.gpu.energy_method == energy_method_counter);
    CHECK(t.gpu.energy_j == 0);
    CHECK(fake.calls("nvmlDeviceGetPowerUsage") == 1);
    CHECK_FALSE(to_json(t)["gpu"].contains("power_w_mean"));
  }
  SECTION("a library without the optional functions") {
    FakeNvml fake(FAKE_NVML_MINIMAL_PATH);
    fake.script(R"({"utilization": [{"error": 999}, 60], "memory_used_mib": [10]})");
    TelemetrySampler sampler(std::chrono::milliseconds(0), FAKE_NVML_MINIMAL_PATH);
    TelemetrySummary t = sampler.stop();
    const GpuSummary& g = t.gpu;
    REQUIRE(g.available);
    CHECK(g.name.empty());
    CHECK(g.util_mean == 60);
    CHECK(g.metrics.utilization.failures == 1);
    CHECK(g.metrics.power.unavailable == "unavailable: nvmlDeviceGetPowerUsage missing from the NVML library");
    CHECK(g.metrics.energy.unavailable ==
          "unavailable: nvmlDeviceGetTotalEnergyConsumption missing from the NVML library");
    CHECK(g.energy_method.empty());
    Cell c = cell_with(t);
    CHECK(c.telemetry.gpu.encodes == 11);
    json j = to_json(c.telemetry)["gpu"];
    CHECK_FALSE(j.contains("energy_j"));
    CHECK_FALSE(j.contains("energy_per_encode_j"));
  }
  SECTION("every utilisation reading fails; without nvmlErrorString the code alone is given") {
    FakeNvml fake(FAKE_NVML_MINIMAL_PATH);
    fake.script(R"({"utilization": [{"error": 15}], "memory_used_mib": [10]})");
    TelemetrySampler sampler(std::chrono::milliseconds(0), FAKE_NVML_MINIMAL_PATH);
    TelemetrySummary t = sampler.stop();
    CHECK(t.gpu.metrics.utilization.unavailable ==
          "unavailable: every reading failed, last nvmlDeviceGetUtilizationRates: (NVML code 15)");
    CHECK_FALSE(to_json(t)["gpu"].contains("util_percent_mean"));
    CHECK(to_json(t)["gpu"].contains("memory_used_max_mib"));
  }
}

TEST_CASE("telemetry: the GPU block is schema-valid and reads back; old reports' GPU blocks still load") {
  FakeNvml fake;
  fake.script(R"({"utilization": [20, 40], "memory_used_mib": [100], "power_mw": [150000, 250000],
                  "energy_mj": [500, 40500]})");
  TelemetrySampler sampler(std::chrono::milliseconds(0), FAKE_NVML_PATH);
  Cell cell = cell_with(sampler.stop());
  RunRecord run = load_run(std::string(refenc::source_dir()) + "/reports/baseline");
  REQUIRE_FALSE(run.cells.empty());
  run.cells[0].telemetry = cell.telemetry;
  run.cells[0].cache = cell.cache;
  CHECK(validate_report(run).empty());
  RunRecord bad = run;
  bad.cells[0].telemetry.gpu.energy_method = "guessed";
  CHECK_FALSE(validate_report(bad).empty());
  json report = to_json(run);
  RunRecord back = run_from_json(report, "report.json");
  const GpuSummary& g = back.cells[0].telemetry.gpu;
  CHECK(g.energy_j == 40);
  CHECK(g.energy_method == "counter");
  CHECK(g.encodes == 11);
  CHECK(g.energy_per_encode_j == Approx(40.0 / 11));
  CHECK(g.power_mean_w == 200);
  CHECK(g.metrics.power.samples == 2);
  // Recomputable from the report alone: energy over the cell divided by the encodes its counters show.
  const json& jc = report["cells"][0];
  double encodes = jc["cache"]["misses"].get<double>() - jc["cache"]["disk_hits"].get<double>() +
                   jc["cache"]["uncacheable"].get<double>();
  CHECK(jc["telemetry"]["gpu"]["energy_per_encode_j"].get<double>() ==
        Approx(jc["telemetry"]["gpu"]["energy_j"].get<double>() / encodes));
  CHECK(to_json(back) == report);

  // The page's utilisation section shows them, and the metrics that were unavailable.
  run.cells[1].telemetry.gpu = g;
  run.cells[1].telemetry.gpu.metrics.power.unavailable =
      "unavailable: nvmlDeviceGetPowerUsage: Not Supported (NVML code 3)";
  std::string page = render_html_report(run);
  CHECK(contains(page, "GPU power and energy"));
  CHECK(contains(page,
                 "<td class=\"n\">200.0 / 250.0</td><td class=\"n\">40.00</td><td>counter</td>"
                 "<td class=\"n\">11</td><td class=\"n\">3.636</td>"));
  CHECK(contains(page, "GPU power: unavailable: nvmlDeviceGetPowerUsage: Not Supported (NVML code 3)."));
  std::string summary = summary_markdown(run);
  CHECK(
      contains(summary, "- " + run.cells[0].key.id() +
                            ": power 200.0 W mean, 250.0 W max; 40.00 J (counter), 11 encodes, 3.636 J per encode\n"));
  CHECK_FALSE(
      contains(summary_markdown(load_run(std::string(refenc::source_dir()) + "/reports/baseline")), "GPU 0 power"));

  // A GPU block as reports wrote it before power and energy.
  report["cells"][0]["telemetry"]["gpu"] = json{{"available", true},
                                                {"name", "Old GPU"},
                                                {"util_percent_mean", 12.5},
                                                {"util_percent_max", 30},
                                                {"memory_used_max_mib", 900},
                                                {"memory_total_mib", 81920},
                                                {"samples", 4}};
  RunRecord old = run_from_json(report, "old/report.json");
  const GpuSummary& o = old.cells[0].telemetry.gpu;
  CHECK(o.util_mean == 12.5);
  CHECK(o.metrics.utilization.samples == 4);
  CHECK(o.energy_method.empty());
  json again = to_json(old.cells[0].telemetry)["gpu"];
  CHECK(again["util_percent_mean"] == 12.5);
  CHECK_FALSE(again.contains("energy_j"));
}

TEST_CASE("telemetry: an energy counter that goes backwards is not differenced; power is integrated instead") {
  FakeNvml fake;
  fake.script(R"({"utilization": [1], "memory_used_mib": [1], "power_mw": [100000], "energy_mj": [9000, 4000]})");
  GpuProbe probe(FAKE_NVML_PATH);
  GpuAccumulator acc(probe);
  acc.add(probe.read(), 0.0);
  acc.add(probe.read(), 0.5);
  GpuSummary g = acc.summary();
  CHECK(g.metrics.energy.samples == 2);
  CHECK(g.metrics.energy.unavailable == "unavailable: the counter went backwards during the cell");
  CHECK(g.energy_method == energy_method_power_integrated);
  CHECK(g.energy_j == 50);
}

TEST_CASE("telemetry: the background thread reads the fake GPU while a cell runs") {
  FakeNvml fake;
  fake.script(
      R"({"utilization": [25], "memory_used_mib": [64], "power_mw": [80000], "energy_mj": [1000, 2000, 3000]})");
  TelemetrySampler sampler(std::chrono::milliseconds(1), FAKE_NVML_PATH);
  while (fake.calls("nvmlDeviceGetUtilizationRates") < 3) std::this_thread::yield();
  TelemetrySummary t = sampler.stop();
  CHECK(t.gpu.samples >= 4);  // start, two or more by the thread, stop
  CHECK(t.gpu.metrics.utilization.samples == t.gpu.samples);
  CHECK(t.gpu.util_mean == 25);
  CHECK(t.gpu.power_mean_w == 80);
  CHECK(t.gpu.energy_method == energy_method_counter);
  CHECK(t.gpu.energy_j == 2);  // the counter stays at its last step: 3000 - 1000 mJ
}
