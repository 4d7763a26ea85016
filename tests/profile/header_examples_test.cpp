// The usage example that opens each header of lib/profile, compiled (and run where it is cheap), so
// that the banners cannot drift from the code. Each block copies its header's example verbatim,
// after the lines that give its free names a value.
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include "fake_backend.hpp"
#include "profile/record/cell_groups.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/record/schema_validator.hpp"
#include "profile/record/trace_event.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/trace_events.hpp"
#include "profile/render/svg_chart.hpp"
#include "profile/render/shared_tier_text.hpp"
#include "profile/render/text_report.hpp"
#include "profile/render/capacity_text.hpp"
#include "profile/render/reuse_text.hpp"
#include "profile/orchestration/capacity_sweep.hpp"
#include "profile/orchestration/cell_metrics.hpp"
#include "profile/orchestration/cell_warmup.hpp"
#include "profile/device/device_queue.hpp"
#include "profile/orchestration/synthetic_device.hpp"
#include "profile/verdict/capacity_gate.hpp"
#include "profile/orchestration/cell_plan.hpp"
#include "profile/record/calibration.hpp"
#include "profile/device/calibration_presets.hpp"
#include "profile/device/cost_surface.hpp"
#include "profile/device/shared_device.hpp"
#include "profile/device/modelled_device.hpp"
#include "profile/device/calibrator.hpp"
#include "profile/device/linear.hpp"
#include "profile/telemetry/gpu_probe.hpp"
#include "profile/manifest/manifest_reader.hpp"
#include "profile/manifest/noise_manifest.hpp"
#include "profile/telemetry/proc_sampler.hpp"
#include "profile/orchestration/profiler.hpp"
#include "profile/manifest/reference_schedule.hpp"
#include "profile/manifest/reference_set.hpp"
#include "profile/orchestration/run_context.hpp"
#include "profile/manifest/shared_cache_value.hpp"
#include "profile/orchestration/shared_tier_server.hpp"
#include "profile/orchestration/stopping_rule.hpp"
#include "profile/telemetry/telemetry.hpp"
#include "profile/render/noise_text.hpp"
#include "profile/stats/mann_whitney.hpp"
#include "profile/stats/student_t.hpp"
#include "profile/stats/miss_ratio_curve.hpp"
#include "profile/stats/percentile.hpp"
#include "profile/stats/throughput.hpp"
#include "profile/verdict/compare.hpp"
#include "profile/verdict/aa_spread.hpp"
#include "profile/verdict/contamination_rule.hpp"
#include "profile/verdict/gate.hpp"
#include "profile/verdict/noise_floor.hpp"
#include "profile/verdict/verdict_stability.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;
using namespace refenc::profile::testing;
using refenc::RequestTrace;
using refenc::ServiceOptions;
using refenc::ServiceStats;

namespace {

const std::string baseline_dir = std::string(refenc::source_dir()) + "/reports/baseline";

}  // namespace

TEST_CASE("header examples: stats") {
  std::ostringstream cout;
  std::vector<double> m4a_e2e{1.0, 1.2, 1.1, 1.4}, m4b_e2e{0.8, 0.9, 1.0, 0.7};
  auto p95_reduction = [](std::span<const double> a, std::span<const double> b) {
    return 1.0 - percentile(b, 95) / percentile(a, 95);
  };
  {
    // stats/percentile.hpp
    std::vector<double> v{0.3, 0.1, 0.2};
    double p50 = refenc::profile::percentile(v, 50);             // 0.2
    refenc::profile::Summary s = refenc::profile::summarize(v);  // count, mean, p50 ... max
    CHECK(p50 == 0.2);
    CHECK(s.count == 3);
  }
  {
    // stats/bootstrap.hpp
    auto ci = refenc::profile::bootstrap_pair(m4a_e2e, m4b_e2e, p95_reduction, {.resamples = 2000, .seed = 7});
    cout << ci.point << " [" << ci.lo << ", " << ci.hi << "]\n";
    CHECK(ci.lo <= ci.point);
  }
  {
    // stats/throughput.hpp
    ThroughputPool a{.e2e = m4a_e2e, .ok = 100, .wall_s = 16.5}, b{.e2e = m4b_e2e, .ok = 100, .wall_s = 43.3};
    Interval one = throughput_interval(a, {.resamples = 2000, .seed = 7});    // req/s
    Interval gain = throughput_change(a, b, {.resamples = 2000, .seed = 7});  // b / a - 1
    CHECK(one.point == Approx(100 / 16.5));
    CHECK(gain.point == Approx(16.5 / 43.3 - 1));
  }
  {
    // stats/miss_ratio_curve.hpp
    std::vector<TraceAccess> trace = {{"a", 100}, {"b", 100}, {"a", 100}};
    MissRatioCurve mrc = miss_ratio_curve(trace);
    mrc.hit_ratio(200);  // 1/3: the second "a" hits once 200 bytes fit {a, b}
    mrc.hit_ratio(100);  // 0
    mrc.points(8);       // (bytes, hit ratio) at 8 sizes up to the working set
    CHECK(mrc.hit_ratio(200) == Approx(1.0 / 3));
    CHECK(mrc.points(8).size() == 8);
  }
}

TEST_CASE("header examples: record, verdict and render") {
  std::ostringstream cout;
  RunRecord run = load_run_with_requests(baseline_dir);
  {
    // record/labels.hpp
    Arm a = parse_arm("m4b");                              // throws Error(bad_input) for another name
    std::string_view phase = to_string(Phase::warm_disk);  // "warm-disk"
    std::string_view kind = stage_kind(Stage::encode);     // "measured"
    int code = verdict_exit_code(Verdict::no_go);          // 10
    CHECK(a == Arm::m4b);
    CHECK(phase == "warm-disk");
    CHECK(kind == "measured");
    CHECK(code == 10);
  }
  {
    // record/cell_key.hpp
    CellKey k{"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0};
    CHECK(k.id() == "fish-s2-pro/m4a/cold/c8/r0");
    CHECK(k.group().label() == "fish-s2-pro/m4a/cold/c8");
    CellKey t{"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0, 2};
    CHECK(t.id() == "fish-s2-pro/m4a/cold/c8/t2/r0");
  }
  {
    // record/request_record.hpp
    RequestRecord r;
    r.outcome = "encoded";
    r.e2e_s = 1.2;
    bool ok = r.ok();                    // false only for "failed"
    double e2e = r.seconds(Stage::e2e);  // 1.2
    CHECK(ok);
    CHECK(e2e == 1.2);
  }
  {
    // record/run_record.hpp
    for (const Cell& c : run.cells) cout << c.key.id() << ' ' << c.stage(Stage::e2e).p95 << '\n';
    double first = run.requests_of(run.cells[0].key)[0].e2e_s;
    Verdict v = run.gate->models[0].verdict;
    CHECK(first > 0);
    CHECK(v == Verdict::no_go);
  }
  {
    // record/record_json.hpp
    nlohmann::json j = to_json(run);                          // report.json's content
    RunRecord back = run_from_json(j, "runs/x/report.json");  // throws Error(bad_input) naming the field
    std::string line = to_json(run.requests_of(run.cells[0].key)[0]).dump();
    CHECK(back.cells.size() == run.cells.size());
    CHECK_FALSE(line.empty());
  }
  {
    // record/cell_groups.hpp
    for (const auto& [key, g] : group_cells(run)) {
      std::vector<double> e2e = g.samples(Stage::e2e);  // successful requests' E2E, repeats pooled
      ThroughputPool pool = g.throughput_pool();        // for throughput_interval / throughput_change
      CHECK(pool.e2e == e2e);
    }
  }
  {
    // record/run_folder.hpp (the writing half compiled, not run: it writes into runs/x)
    auto write = [&] { write_run("runs/x", run, summary_markdown(run)); };
    (void)write;
    const auto& rows = run.requests_of(run.cells[0].key);  // empty when !run.have_requests
    CHECK_FALSE(rows.empty());
  }
  {
    // record/schema_validator.hpp
    std::ifstream in(std::string(refenc::source_dir()) + "/reports/report.schema.json");
    nlohmann::json schema = nlohmann::json::parse(in);
    nlohmann::json report = to_json(run);
    std::vector<std::string> errors = validate_schema(schema, report);  // empty = valid
    CHECK(errors.empty());
  }
  {
    // verdict/gate.hpp and record/gate_report.hpp
    GateReport g = evaluate_gate(run, run.gate_options());
    cout << format_gate(g);  // render/text_report.hpp; exit with g.exit_code
    bool no_go = g.models[0].verdict == Verdict::no_go;
    double lo = g.models[0].levels[0].p95_e2e_reduction.lo;  // levels: one per profiled concurrency
    CHECK(no_go);
    CHECK(lo < 0);
  }
  {
    // verdict/compare.hpp, record/comparison.hpp, render/text_report.hpp
    std::string base = baseline_dir, cur = baseline_dir;
    CompareResult c = compare_runs(load_run_with_requests(base), load_run_with_requests(cur), {.threshold = 0.10});
    int exit_code = c.regressions > 0 ? compare_exit_regression : 0;
    CompareResult& result = c;
    for (const CellChange& c : result.cells)
      for (const MetricChange& m : c.metrics)
        if (m.regression) std::cout << c.group.label() << ' ' << to_string(m.metric);
    cout << summary_table(run) << format_gate(*run.gate);
    cout << format_compare(c);
    CHECK(exit_code == 0);
  }
  {
    // render/html_report.hpp (writing compiled, not run)
    RunRecord base = run, cur = run;
    auto write = [] { std::string path = write_html_report("runs/20261202-143000-nightly"); };
    (void)write;
    std::string page = render_html_report(load_run(baseline_dir));
    std::string diff = render_compare_html(base, cur, compare_runs(base, cur, {.resamples = 100}));
    CHECK(page.find("<svg") != std::string::npos);
    CHECK(diff.find("<svg") != std::string::npos);
  }
  {
    // record/trace_event.hpp
    std::vector<TraceEvent> events;
    events.push_back(TraceEvent::metadata("process_name", 1, 0, "cell fish-s2-pro/m4a/cold/c8/r0"));
    TraceEvent e{.name = "encode", .category = "measured", .ts_us = 10, .dur_us = 250, .pid = 1, .tid = 1};
    e.batch_size = 4;
    e.batch_id = 17;
    events.push_back(e);
    std::string file = trace_events_json(events).dump();  // {"traceEvents": [...], ...}
    CHECK(file.find("\"ph\":\"X\"") != std::string::npos);
  }
  {
    // render/trace_events.hpp (writing compiled, not run)
    std::string dir = baseline_dir;
    auto write = [] { std::string path = write_trace_events("runs/20261202-143000-nightly", "timeline.json"); };
    (void)write;
    std::vector<TraceEvent> events = request_timelines(load_run_with_requests(dir));
    CHECK(events.size() > run.cells.size());
  }
  {
    // render/svg_chart.hpp
    svg::LineChart c{.x_label = "E2E latency (ms)", .y_label = "fraction of requests"};
    c.series.push_back({.name = "M4a cold", .colour = svg::palette::blue, .points = {{1, 0.5}, {2, 1}}, .step = true});
    std::string markup = svg::render(c);
    CHECK(markup.rfind("<svg", 0) == 0);
  }
}

TEST_CASE("header examples: run") {
  std::ostringstream cout;
  {
    // manifest/manifest_reader.hpp
    refenc::profile::ManifestReader r("workloads/x.json");
    nlohmann::json j = nlohmann::json::parse(R"({"gate": {"confidence": 0.9}})");
    r.object(j, "", {"gate"});                                          // unknown fields are errors
    double c = r.num(j["gate"], "gate", "confidence", 0.95, 0.5, 1.0);  // 0.9; absent: 0.95
    CHECK(c == 0.9);
    CHECK_THROWS_WITH(r.num(j["gate"], "gate", "confidence", 0.95, 0.95, 1.0),
                      "workloads/x.json: gate.confidence: must be >= 0.95");
  }
  auto examples = [&] {
    {
      // manifest/manifest.hpp
      refenc::profile::Manifest m = refenc::profile::load_manifest("workloads/nightly.json");
      for (const auto& model : m.models) cout << model.name << ": scale " << model.encoder.scale << '\n';
      bool cold_first = m.phases[0].kind == refenc::profile::Phase::cold;
      (void)cold_first;
      // manifest/reference_set.hpp
      Manifest& manifest = m;
      auto set = refenc::profile::make_reference_set(manifest.references, manifest.seed);
      const ReferenceItem& r = set[3];  // r.wav (bytes) or r.path, r.seconds, r.id
      (void)r;
      // orchestration/run_context.hpp
      auto library_context = [] { return LibraryContext{.version = "1.13.0"}; };
      RunContext ctx = make_context(manifest);
      ctx.libtorch = library_context();  // e.g. from the CLI's LibTorch probe
    }
    {
      // orchestration/profiler.hpp
      BackendFactory my_factory = [](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
        return std::make_unique<FakeBackend>(fake_info(spec.name, true), true);
      };
      ProfileOptions o{.out_dir = "runs/x"};
      ProfileResult r = run_profile(load_manifest("workloads/smoke.json"), my_factory, o);
      int exit_code = r.run.gate->exit_code;  // r.run is the typed record written to runs/x
      (void)exit_code;
    }
    {
      // telemetry/telemetry.hpp
      auto run_cell = [] {};
      TelemetrySampler sampler;  // starts sampling every 250 ms
      run_cell();
      TelemetrySummary t = sampler.stop();  // t.cpu.process_mean, t.gpu.available, t.gpu.reason
      // record/telemetry_summary.hpp
      if (!t.gpu.available)
        std::cout << t.gpu.reason;
      else if (!t.gpu.energy_method.empty())
        std::cout << t.gpu.energy_j << " J (" << t.gpu.energy_method << ")";
    }
    {
      // record/gpu_metrics.hpp
      GpuMetrics m;
      m.power.unavailable = "unavailable: nvmlDeviceGetPowerUsage: Not Supported (NVML code 3)";
      bool measured = m.energy.samples >= 2;  // the counter can be differenced
      (void)measured;
    }
    {
      // telemetry/gpu_probe.hpp
      GpuProbe probe;  // libnvidia-ml.so.1; tests pass the path of a fake NVML
      GpuAccumulator acc(probe);
      acc.add(probe.read(), 0.0);  // seconds since the cell started
      acc.add(probe.read(), 0.25);
      GpuSummary g = acc.summary();  // g.util_mean, g.power_mean_w, g.energy_j, g.energy_method
      (void)g;
    }
    {
      // device/synthesis_model.hpp
      ModelSpec spec;
      double ref_seconds = 4;
      std::string text = "Hello.";
      SynthesisModel synth(spec.synthesis);
      SynthesisTiming t = synth.run(ref_seconds * 21.5, synth.text_tokens(text));  // sleeps
      double first = t.first_audio_s, end = t.end_s;
      (void)first, (void)end;
    }
    {
      // record/workload_specs.hpp
      GateSpec g;                  // 15% p95 reduction or 20% throughput gain, 2000 resamples, 95%
      GateOptions o{g, 20261202};  // what the gate runs with: the spec and the run's seed
      (void)o;
    }
    {
      // orchestration/shared_tier_server.hpp
      refenc::profile::CacheSpec cache;
      cache.shared = "local";
      refenc::profile::SharedTierServer server(cache, "");          // starts redis-server (Error(config) without it)
      refenc::profile::CacheSpec cell = server.for_cell(cache, 3);  // cell.shared_url, cell.shared_prefix
      std::string context = server.description();                   // "local redis-server on 127.0.0.1:PORT ..."
    }
    {
      // render/shared_tier_text.hpp
      RunRecord run;
      std::string lines = shared_tier_lines(run);     // "" when the run has no warm-shared cell
      double ratio = shared_hit_share(run.cells[0]);  // shared_hit outcomes / requests
      (void)ratio;
    }
  };
  (void)examples;
  {
    // manifest/shared_cache_value.hpp
    std::string why = refenc::profile::shared_cache_problem("redis://u:pw@10.0.0.5");  // "no password in ..."
    bool ok = refenc::profile::shared_cache_problem("local").empty();                  // true
    CHECK(why.rfind("no password in", 0) == 0);
    CHECK(ok);
  }

  // The cheap ones run: a backend's service handle, the runner and a cell's metrics.
  auto hook = std::make_shared<FakeHook>();
  ServiceOptions opts;
  std::shared_ptr<FakeTier> tier;
  using Service = FakeService;
  ReferenceItem ref{"ref0", "", nullptr, 2.0, 24000};
  WorkItem item{0, &ref, "Hello.", "Hi."};
  // orchestration/model_backend.hpp
  auto handle = make_service_handle(std::make_shared<Service>(hook, opts, tier),
                                    [](const WorkItem& w) { return w.reference->id + "|" + w.ref_text; });
  RequestTrace t;
  handle->encode(item, t);  // throws on failure; t is filled by the service
  std::uint64_t misses = handle->stats().misses;
  CHECK(misses == 1);
  // orchestration/runner.hpp
  std::vector<WorkItem> items{item, item};
  SynthesisModel synth(SynthesisSpec{.source = "test"}, false);
  double frame_rate = 12.5;
  ServiceStats before = handle->stats();
  RunOptions o{.concurrency = 8};
  RunResult r = run_requests(*handle, items, o, &synth, frame_rate);
  bool late = r.generator_behind;
  double e2e = r.records[0].e2e_s;
  CHECK_FALSE(late);
  CHECK(e2e > 0);
  // orchestration/cell_metrics.hpp
  RunResult& run = r;
  ServiceStats after = handle->stats();
  TelemetrySummary telemetry;
  Cell cell = make_cell({"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0}, run, after.minus(before), telemetry,
                        /*open_loop=*/false, /*batching_active=*/false);
  double p95 = cell.stage(Stage::e2e).p95;
  add_cache_reuse(cell, run.records, CacheSpec{});  // cell.reuse: hit ratio and the miss-ratio curve
  CHECK(p95 > 0);
  REQUIRE(cell.reuse);
  CHECK(cell.reuse->requests == 2);
  {
    // orchestration/cell_warmup.hpp
    std::vector<WorkItem> warmup_items = items;
    int conc = 2;
    ArmSpec arm;  // M4a: one single call of the longest per worker
    CellWarmup warmup;  // one per model: its backend's process-wide memory is what priming warms
    warmup.run(*handle, warmup_items, largest_calls(arm, conc, /*threads=*/0), {.concurrency = conc}, frame_rate);
    CHECK(warmup.primed().count(CallShape{1, 2, 0}) == 1);
  }
  {
    // manifest/reference_schedule.hpp
    ReferenceSpec spec;
    spec.zipf = 1.1;
    spec.never_seen_share = 0.1;
    PhaseSpec phase;
    phase.requests = 100;
    phase.distinct = 20;
    std::vector<std::size_t> refs = reference_schedule(spec, phase, /*first_never_seen=*/22, /*seed=*/1);
    int fresh = never_seen_count(spec, phase);  // 10: refs holds 22..31 once each
    CHECK(fresh == 10);
    CHECK(std::count_if(refs.begin(), refs.end(), [](std::size_t i) { return i >= 22; }) == 10);
  }
}

TEST_CASE("header examples: capacity") {
  std::ostringstream cout;
  {
    // stats/capacity.hpp
    std::vector<SweepStep> steps{{10, {0.1, 0.2, 0.3}}, {20, {0.2, 0.4, 0.9}}};
    double cap = capacity_at_slo(steps, 0.5);  // 10: 20 req/s misses a 500 ms p95
    Interval ci = capacity_interval(steps, 0.5, {.resamples = 2000, .seed = 7});
    std::optional<double> next = next_search_rate(to_points(steps, 0.5), RateSearch{});  // 15
    CHECK(cap == 10);
    CHECK(ci.lo <= ci.hi);
    CHECK(next == 15);
  }
  {
    // manifest/capacity_spec.hpp
    CapacitySpec c = parse_capacity(nlohmann::json::parse(R"({"slo": {"ttfa_ms": 800, "e2e_ms": 4000},
                                    "rates": [2, 4, 8]})"),
                                    "x.json", /*cold_concurrency=*/{8, 16});
    bool searched = c.rates.empty();  // false: the three rates are run as listed, ascending
    CHECK_FALSE(searched);
  }
  {
    // device/device_queue.hpp
    DeviceQueue gpu(/*streams=*/1);
    DeviceQueue::Call c = gpu.run(std::chrono::milliseconds(22));  // sleeps until c.end
    double waited_ms = std::chrono::duration<double, std::milli>(c.start - c.submitted).count();
    CHECK(waited_ms == 0);
  }
  auto examples = [&] {
    {
      // orchestration/synthetic_device.hpp
      SyntheticDeviceCost cost{.fixed_ms = 20, .per_item_ms = 2};
      BackendFactory factory = synthetic_device_factory(cost);
      ProfileResult r = run_profile(load_manifest("workloads/capacity-synthetic.json"), factory, {.out_dir = "runs/x"});
      double knee = synthetic_knee_rps(cost, /*batch=*/8);  // 222.2 req/s
      (void)knee;
      // record/capacity_record.hpp
      RunRecord run = r.run;
      const CapacityReport& cap = *run.capacity;
      for (const CapacitySweep& s : cap.sweeps)
        std::cout << s.id() << ": " << s.capacity_rps.point << " req/s at p95 TTFA <= " << cap.slo.ttfa_ms << " ms\n";
      const auto& first = run.requests.at(cap.sweeps[0].step_id(0));  // run_record.hpp: its requests
      (void)first;
      // verdict/capacity_gate.hpp
      std::vector<SweepStep> steps = sweep_steps(run, run.capacity->sweeps[0]);
      std::optional<CapacityResult> c = judge_capacity(run, "fish-s2-pro", run.gate_options());
      Verdict v = combine_capacity(Verdict::no_go, /*have_levels=*/true, *c);
      (void)v;
      // render/capacity_text.hpp
      std::cout << summary_table(run) << capacity_table(run);  // text_report.hpp prints both
    }
    {
      // orchestration/capacity_sweep.hpp
      Manifest manifest = load_manifest("workloads/capacity-synthetic.json");
      const ModelSpec& spec = manifest.models[0];
      auto backend = synthetic_device_factory({})(spec);
      std::vector<ArmSpec> arms = manifest.arms;
      std::vector<ReferenceItem> refs = make_reference_set(manifest.references, manifest.seed);
      unsigned cores = 2;
      RunRecord run;
      SweepInputs in{manifest, spec, *backend, arms, refs, cores};
      run_capacity_sweeps(in, run);  // appends run.capacity->sweeps and their requests
    }
  };
  (void)examples;
}

TEST_CASE("header examples: reuse") {
  RunRecord run;
  // render/reuse_text.hpp
  std::string md = reuse_table(run);  // summary_markdown includes it
  CHECK(md.empty());
}

TEST_CASE("header examples: noise") {
  std::ostringstream cout;
  RunRecord run = load_run_with_requests(baseline_dir);
  {
    // record/host_load.hpp
    HostLoad load{.available = true, .cores = 2, .other_cpu_share = 0.40};
    double others = load.other_cores();                      // 0.8 cores of other work
    ContaminationSpec spec;                                  // defaults: 0.5 core of other work, 10% steal
    CHECK(others == Approx(0.8));
    CHECK(spec.max_other_cores == 0.5);
  }
  {
    // verdict/contamination_rule.hpp
    HostLoad load{.available = true, .cores = 2, .other_cpu_share = 0.40};
    ContaminationSpec spec;                                  // defaults: 0.5 core of other work, 10% steal
    std::vector<std::string> why = contamination_reasons(load, spec);  // {"other processes used 0.80 ..."}
    bool again = rerun_contaminated(why, /*attempt=*/0, spec);          // true: busy, and re-runs left
    const CellGroup group = group_cells(run).begin()->second;
    bool flagged = any_contaminated(group.cells);            // compare's flag for one side of a group
    CHECK(again);
    CHECK_FALSE(flagged);
  }
  {
    // record/noise_record.hpp
    NoiseSettings n;                // defaults: A/A cells for m4a, contamination judged, no extra repeats
    bool aa = n.runs_aa(Arm::m4a);  // true
    std::string id = aa_cell_id(CellKey{"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0});  // ".../c8/r0/aa"
    CHECK(aa);
    CHECK(id == "fish-s2-pro/m4a/cold/c8/r0/aa");
  }
  {
    // telemetry/proc_sampler.hpp
    ProcSnapshot a = read_proc_snapshot();                       // at the cell's start, then the cell runs
    HostLoad load = host_load_between(a, read_proc_snapshot());  // other_cpu_share, steal_share, ...
    ProcSnapshot fake = parse_proc_snapshot("0.50 0.40 0.30 1/99 7\n", "cpu  100 0 50 800 10 0 0 40 0 0\n",
                                            "7 (refenc) R 1 7 7 0 -1 0 0 0 0 0 30 20 0 0\n", 2);
    CHECK(fake.ok);
    CHECK(fake.own == 50);
    (void)load;
  }
  {
    // manifest/noise_manifest.hpp
    nlohmann::json j = nlohmann::json::parse(R"({"aa": ["m4a"], "stopping": {"max_repeats": 4, "target_width": 0.1}})");
    NoiseSettings n = parse_noise_settings(j, "workloads/x.json", /*repeats=*/1, {Arm::m4a, Arm::m4b});
    int most = n.stopping.max_repeats;  // 4
    CHECK(most == 4);
  }
  {
    // orchestration/cell_plan.hpp and orchestration/stopping_rule.hpp
    Manifest manifest = load_manifest(std::string(refenc::source_dir()) + "/workloads/smoke.json");
    const std::vector<ArmSpec>& arms = manifest.arms;
    std::vector<CellPlan> plan = cell_plan(arms, manifest.noise);  // m4a, m4b, m4a (A/A)
    bool twin = plan.back().aa;                                    // true; the plan may grow with re-runs
    CHECK(twin);
    CHECK(plan.size() == 3);
    int ran = 0;
    auto run_repeat = [&](int) { ++ran; };
    std::vector<StopRecord> stops;
    for (int rep = 0; keep_repeating(run, manifest, "fish-s2-pro", Phase::cold, 8, rep, stops); ++rep) run_repeat(rep);
    CHECK(ran == 1);
  }
  {
    // stats/mann_whitney.hpp
    std::vector<double> base{1.00, 1.02, 0.99}, cur{1.31, 1.29, 1.35};
    double p = refenc::profile::mann_whitney_greater(base, cur);  // 0.05: every current value is larger
    bool same = refenc::profile::mann_whitney_greater(base, base) > 0.05;
    CHECK(p == Approx(0.05));
    CHECK(same);
  }
  {
    // stats/student_t.hpp
    double t = refenc::profile::student_t_quantile(0.995, 6);    // 3.7074: 99% two-sided, 6 dof
    double z = refenc::profile::student_t_quantile(0.975, 0);    // 1.95996: dof 0 means the normal
    double p = refenc::profile::student_t_two_sided(3.7074, 6);  // 0.01
    CHECK(t == Approx(3.7074).epsilon(1e-4));
    CHECK(z == Approx(1.95996).epsilon(1e-5));
    CHECK(p == Approx(0.01).epsilon(1e-3));
  }
  {
    // verdict/aa_spread.hpp (the baseline has no A/A twins)
    std::vector<AaSpread> s = aa_spread(run);    // one row per group with A/A cells and metric
    double floor = s.empty() ? 0 : s[0].spread;  // e.g. 0.04: twins differ by up to 4%
    double p95 = metric_value(run.requests_of(run.cells[0].key), run.cells[0].wall_s, CompareMetric::p95_e2e);
    CHECK(floor == 0);
    CHECK(p95 == Approx(run.cells[0].stage(Stage::e2e).p95));
  }
  {
    // verdict/contamination_rule.hpp (continued) and verdict/verdict_stability.hpp
    ModelVerdict verdict;
    verdict.model = "fish-s2-pro";
    std::vector<std::string> reasons;
    apply_contamination(run, verdict, reasons);  // verdict.verdict == Verdict::inconclusive if contaminated
    CHECK(reasons.empty());
    GateReport g = evaluate_gate_levels(run, run.gate_options());
    add_verdict_stability(run, g);
    double agree = g.models[0].stability->bootstrap_agreement;  // e.g. 0.99
    CHECK(agree == 1.0);
  }
  {
    // verdict/noise_floor.hpp
    RunRecord base = run, cur = run;
    GroupKey group = run.cells[0].key.group();
    Interval change{0.3, 0.2, 0.4};
    NoiseFloor f = noise_floor(group, CompareMetric::p95_e2e, {&base}, {&cur}, {1.20}, {1.25});
    bool beyond = change.point > f.value;  // f.source says where the figure came from
    CHECK(beyond);
    CHECK(f.source == "none (one run each side, no A/A cells)");
  }
  {
    // render/noise_text.hpp
    run.gate = evaluate_gate(run, run.gate_options());
    CompareResult comparison = compare_runs(run, run, {.resamples = 100});
    for (const std::string& line : verdict_noise_lines(run.gate->models[0])) cout << "      " << line << '\n';
    std::string md = noise_markdown(run);   // "" for a run without noise settings
    cout << compare_runs_line(comparison);  // "runs: baseline 1 (runs/a), current 1 (runs/b); ..."
    CHECK(md.empty());
    CHECK(cout.str().find("stability: 100% of bootstrap replicates give each level's verdict") != std::string::npos);
  }
}

TEST_CASE("header examples: calibration and modelled devices") {
  auto examples = [] {
    {
      // record/calibration.hpp
      refenc::profile::Calibration c = refenc::profile::load_calibration("cal.json");
      double ms = c.time_ms[0][1];  // batch c.batch_sizes[0], length c.lengths_s[1]
      std::string who = c.context.host + " / " + c.context.device_name;
      refenc::profile::save_calibration(c, "out/fish.json");  // atomic: temp file + rename
      (void)ms;
    }
    {
      // device/cost_surface.hpp
      refenc::profile::CostSurface surface(refenc::profile::load_calibration("cal.json"));
      double alone = surface.call_seconds(4, 7.5);     // a batch of 4, longest 7.5 s, device to itself
      double shared = surface.device_seconds(4, 7.5);  // with the calibration's stream slowdown
      (void)alone, (void)shared;
    }
    {
      // device/modelled_device.hpp (sleeps: compiled, not run)
      CostSurface surface(resolve_calibration("fish-s2-pro-cpu", ""));
      ModelledDevice device = make_modelled_device(surface.calibration());
      device.run(surface, /*batch=*/4, /*length_s=*/7.5, /*content=*/0x5eed);  // sleeps its modelled time
      int workers = device.parallel;   // calls it runs at once: M4b's matched batch workers
      (void)workers;
    }
  };
  (void)examples;
  {
    // device/calibration_presets.hpp
    std::ostringstream cout;
    for (const auto& c : refenc::profile::calibration_presets()) cout << c.name << ": " << c.source;
    refenc::profile::Calibration c = refenc::profile::resolve_calibration("fish-s2-pro-cpu", "workloads");
    refenc::profile::SynthesisSpec s = refenc::profile::synthesis_preset("fish-s2-pro-h200");
    CHECK(c.model == "fish-s2-pro");
    CHECK(s.step_base_ms > 0);
  }
  {
    // device/shared_device.hpp
    refenc::profile::SharedDevice cpu({{1, 1.0}, {2, 1.7}, {8, 1.9}});
    double elapsed = cpu.run(0.200);  // a 200 ms call; longer while others share the device
    double speed = cpu.speed(4);      // effective(4) / 4: each of 4 calls' share
    CHECK(elapsed > 0);
    CHECK(speed == Approx(0.475 * 1.0).epsilon(0.2));
    refenc::profile::SharedDevice loaded({}, {3, 12}, {{8, {3.0, 1.5}}});
    double rate = loaded.speed(8, 3);  // 1 / 3: a 3 s call among 8 lasts 3x its alone time
    CHECK(rate == Approx(1 / 3.0));
    refenc::profile::SharedDevice batched({}, {3, 12}, {{2, {1.0, 1.0}}}, {{8, 2, {1.2, 1.1}}});
    double f = batched.slowdown(2, 3, 8);  // 1.2: a batch of 8 beside another call lasts 1.2x alone
    CHECK(f == Approx(1.2));
  }
  {
    // device/linear.hpp
    double ms = refenc::profile::linear(2, 100, 4, 200, 3);   // 150: halfway between (2, 100) and (4, 200)
    double far = refenc::profile::linear(2, 100, 4, 200, 6);  // 300: beyond the points, the same line
    CHECK(ms == 150);
    CHECK(far == 300);
  }
  {
    // device/calibrator.hpp
    auto encode_ms = [](int batch, std::size_t length, std::size_t) { return 10.0 * batch + static_cast<double>(length); };
    CalibrationPlan plan{.batch_sizes = batch_sizes_up_to(8), .lengths_s = {2, 5, 10}, .repeats = 3,
                         .concurrency = {2, 8}, .batch_levels = batch_levels({2, 8}, {}, 2, 4)};
    Calibration c;
    measure_calibration(plan, [&](const TimedCall& call) { return encode_ms(call.batch, call.length, call.slot); }, c);
    double alone_ms = c.time_ms[0][2];                 // batch 1, 10 s, the median of 3 rounds
    double at8 = c.sharing.slowdown.back().factor[0];  // a 2 s call among 8 callers, over alone
    CHECK(alone_ms == 12);
    CHECK(at8 == 1);
  }
}
