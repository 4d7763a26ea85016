// Capacity under an SLO: the search, the capacity and its interval, the manifest block and its errors,
// the modelled device queue, the gate's capacity criterion, and a sweep through the profiler on the
// synthetic device whose report recomputes from requests.jsonl. No assertion here depends on timing.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/error.hpp"
#include "manifest_error.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/text_report.hpp"
#include "profile/manifest/capacity_spec.hpp"
#include "profile/device/device_queue.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/profiler.hpp"
#include "profile/orchestration/synthetic_device.hpp"
#include "profile/stats/capacity.hpp"
#include "profile/verdict/capacity_gate.hpp"
#include "profile/verdict/gate.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;
using nlohmann::json;

namespace {

const std::string kManifestPath = std::string(refenc::source_dir()) + "/workloads/test.json";
constexpr double inf = std::numeric_limits<double>::infinity();

json with_capacity(json capacity) {
  json j = json::parse(R"({
    "schema_version": 1, "name": "t", "seed": 3,
    "models": [{"name": "fake", "synthesis": {"source": "test numbers"}}],
    "references": {"clips": ["clips/en-m-16k.flac", "clips/de-m-24k.flac"], "variants": 8, "warmup": 2},
    "texts": ["hello there"],
    "phases": [{"kind": "cold", "requests": 4, "concurrency": [2, 4]}],
    "arms": [{"name": "m4a"}, {"name": "m4b", "max_batch_size": 4, "max_batch_wait_ms": 2}]
  })");
  j["capacity"] = std::move(capacity);
  return j;
}

std::string capacity_error_of(const json& j) { return testing::manifest_error(j, kManifestPath); }

/// A step whose n requests all take `ttfa_s`.
SweepStep flat(double rate, double ttfa_s, int n = 20) { return {rate, std::vector<double>(n, ttfa_s)}; }

/// Appends a sweep of `model`/`arm` with one step per (rate, ttfa) to `run`, its requests included.
void add_sweep(RunRecord& run, const std::string& model, Arm arm, const std::vector<std::pair<double, double>>& steps,
               bool batched) {
  if (!run.capacity) run.capacity = CapacityReport{.slo = {500, 2000}};
  CapacitySweep s{model, arm, 8, {}, {}, false};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::vector<RequestRecord> records;
    for (int k = 0; k < 20; ++k) {
      RequestRecord r;
      r.index = static_cast<std::size_t>(k);
      r.outcome = "encoded";
      r.scheduled_s = k / steps[i].first;
      r.ttfa_s = steps[i].second;
      r.e2e_s = steps[i].second + 0.5;
      r.rate_step = static_cast<int>(i);
      r.rate_per_s = steps[i].first;
      records.push_back(r);
    }
    RateStep st = summarize_step(static_cast<int>(i), steps[i].first, records, run.capacity->slo, {.resamples = 50});
    if (batched) st.batches = 5, st.batched_items = 20;
    s.steps.push_back(st);
    run.requests[s.step_id(static_cast<int>(i))] = std::move(records);
  }
  finish_sweep(s, run, run.capacity->slo.ttfa_ms, {GateSpec{.bootstrap_resamples = 200}, 1});
  run.capacity->sweeps.push_back(s);
}

}  // namespace

TEST_CASE("capacity: the highest passing rate below the lowest failing one") {
  std::vector<RatePoint> points{{10, true}, {40, false}, {20, true}, {30, true}, {50, true}};
  CHECK(capacity_at_slo(points) == 30);  // 50 passes, but above a failing rate
  CHECK_FALSE(capacity_censored(points));
  std::vector<RatePoint> all_pass{{10, true}, {20, true}};
  CHECK(capacity_at_slo(all_pass) == 20);
  CHECK(capacity_censored(all_pass));
  std::vector<RatePoint> none{{10, false}, {20, true}};
  CHECK(capacity_at_slo(none) == 0);
  // p95 by nearest rank; more than 5% failed requests make it infinite.
  std::vector<double> v(100, 0.1);
  v[99] = 9;
  CHECK(p95_ttfa(v) == Approx(0.1));
  for (int i = 90; i < 100; ++i) v[static_cast<std::size_t>(i)] = inf;
  CHECK(std::isinf(p95_ttfa(v)));
  std::vector<SweepStep> steps{{10, {0.1, 0.2, 0.3}}, {20, {0.2, 0.4, 0.9}}};
  CHECK(capacity_at_slo(steps, 0.5) == 10);
}

TEST_CASE("capacity: the automatic search brackets a knee within its precision") {
  for (double knee : {0.7, 45.45, 222.2, 3000.0}) {
    INFO("knee " << knee);
    RateSearch search{.start_rate_per_s = 1, .precision = 0.02, .max_steps = 30};
    std::vector<RatePoint> done;
    while (auto next = next_search_rate(done, search)) done.push_back({*next, *next <= knee});
    double cap = capacity_at_slo(done);
    CHECK(cap <= knee);
    CHECK(cap >= 0.98 * knee);
    CHECK(done.size() <= 30);
  }
  // The step budget ends the search.
  std::vector<RatePoint> done;
  RateSearch small{.max_steps = 3};
  while (auto next = next_search_rate(done, small)) done.push_back({*next, true});
  CHECK(done.size() == 3);
  // A search whose cap is reached stops there.
  done.clear();
  RateSearch capped{.start_rate_per_s = 1, .max_rate_per_s = 5};
  while (auto next = next_search_rate(done, capped)) done.push_back({*next, true});
  CHECK(done.back().rate_per_s == 5);
}

TEST_CASE("capacity: intervals come from the one bootstrap") {
  std::vector<std::vector<double>> one{{0.1, 0.5, 0.3, 0.2, 0.9}};
  auto p95 = [](std::span<const double> x) { return p95_ttfa(x); };
  Interval many = bootstrap_many(one, [&](std::span<const std::vector<double>> s) { return p95(s[0]); },
                                 {.resamples = 300, .seed = 9});
  Interval single = bootstrap_one(one[0], p95, {.resamples = 300, .seed = 9});
  CHECK(many.point == single.point);
  CHECK(many.lo == single.lo);
  CHECK(many.hi == single.hi);
  CHECK_THROWS_AS(bootstrap_many(std::vector<std::vector<double>>{{}}, [](auto) { return 0.0; }, {}), refenc::Error);

  // Steps far from the SLO cannot flip: the interval is the point.
  std::vector<SweepStep> a{flat(10, 0.1), flat(20, 0.2), flat(40, 2.0)};
  std::vector<SweepStep> b{flat(10, 0.1), flat(20, 0.1), flat(40, 0.2), flat(80, 3.0)};
  Interval ca = capacity_interval(a, 0.5, {.resamples = 200, .seed = 1});
  CHECK(ca.point == 20);
  CHECK(ca.lo == 20);
  CHECK(ca.hi == 20);
  Interval gain = capacity_change(a, b, 0.5, {.resamples = 200, .seed = 1});
  CHECK(gain.point == Approx(1.0));
  CHECK(gain.lo == Approx(1.0));
  // M4a failing everywhere: the gain is unbounded.
  std::vector<SweepStep> slow{flat(10, 2.0)};
  CHECK(std::isinf(capacity_change(slow, b, 0.5, {.resamples = 50}).point));
}

TEST_CASE("capacity: the manifest block and its one-line errors") {
  Manifest m = parse_manifest(with_capacity(json::parse(R"({"slo": {"ttfa_ms": 800, "e2e_ms": 4000},
                                                            "rates": [8, 2, 4]})")),
                              kManifestPath);
  REQUIRE(m.capacity);
  CHECK(m.capacity->rates == std::vector<double>{2, 4, 8});
  CHECK(m.capacity->concurrency == 4);  // the cold phase's largest level
  CHECK_FALSE(m.capacity->uniform);
  Manifest a = parse_manifest(with_capacity(json::parse(R"({"slo": {"ttfa_ms": 800, "e2e_ms": 800}, "rates": "auto",
       "arrivals": "uniform", "concurrency": 32, "search": {"start_rate_per_s": 5, "precision": 0.05, "max_steps": 9}})")),
                              kManifestPath);
  CHECK(a.capacity->rates.empty());
  CHECK(a.capacity->uniform);
  CHECK(a.capacity->concurrency == 32);
  CHECK(a.capacity->search.start_rate_per_s == 5);
  CHECK(a.capacity->search.max_steps == 9);

  auto err = [](const char* capacity) { return capacity_error_of(with_capacity(json::parse(capacity))); };
  const std::string slo = R"("slo": {"ttfa_ms": 800, "e2e_ms": 4000})";
  CHECK(err(R"({"rates": [1]})") == kManifestPath + ": capacity.slo: required (ttfa_ms and e2e_ms)");
  CHECK(err((R"({"slo": {"ttfa_ms": 0, "e2e_ms": 4000}, "rates": [1]})")) ==
        kManifestPath + ": capacity.slo.ttfa_ms: must be > 0");
  CHECK(err((R"({"slo": {"ttfa_ms": 800}, "rates": [1]})")) == kManifestPath + ": capacity.slo.e2e_ms: required");
  CHECK(err((R"({"slo": {"ttfa_ms": 800, "e2e_ms": 400}, "rates": [1]})")) ==
        kManifestPath + ": capacity.slo.e2e_ms: must be >= ttfa_ms (800)");
  CHECK(err((R"({"slo": {"ttfa_ms": "fast", "e2e_ms": 400}, "rates": [1]})")) ==
        kManifestPath + ": capacity.slo.ttfa_ms: must be a number");
  CHECK(err(("{" + slo + "}").c_str()) ==
        kManifestPath + ": capacity.rates: required: a list of arrival rates (req/s) or \"auto\"");
  CHECK(err(("{" + slo + R"(, "rates": [2, -1]})").c_str()) == kManifestPath + ": capacity.rates[1]: must be > 0");
  CHECK(err(("{" + slo + R"(, "rates": [2, 2]})").c_str()) == kManifestPath + ": capacity.rates[1]: duplicate rate 2");
  CHECK(err(("{" + slo + R"(, "rates": []})").c_str()) == kManifestPath + ": capacity.rates: must not be empty");
  CHECK(err(("{" + slo + R"(, "rates": "fast"})").c_str()) ==
        kManifestPath + ": capacity.rates: must be a list of arrival rates (req/s) or \"auto\" (got 'fast')");
  CHECK(err(("{" + slo + R"(, "rates": [1], "search": {}})").c_str()) ==
        kManifestPath + ": capacity.search: only with rates \"auto\"");
  CHECK(err(("{" + slo + R"(, "rates": "auto", "search": {"max_steps": 1}})").c_str()) ==
        kManifestPath + ": capacity.search.max_steps: must be an integer in [2, 100]");
  CHECK(err(("{" + slo + R"(, "rates": [1], "arrivals": "bursty"})").c_str()) ==
        kManifestPath + ": capacity.arrivals: must be \"poisson\" or \"uniform\"");
  CHECK(err(("{" + slo + R"(, "rates": [1], "concurrency": 0})").c_str()) ==
        kManifestPath + ": capacity.concurrency: must be an integer in [1, 4096]");
  CHECK(err(("{" + slo + R"(, "rates": [1], "speed": 1})").c_str()) ==
        kManifestPath + ": capacity.speed: unknown field");
  json no_cold = with_capacity(json::parse("{" + slo + R"(, "rates": [1]})"));
  no_cold["phases"] = json::parse(R"([{"kind": "warm", "requests": 4}])");
  CHECK(capacity_error_of(no_cold) == kManifestPath + ": capacity: needs a cold phase (each rate step sends its references)");
  CHECK_THROWS_WITH(parse_capacity(json::parse("{" + slo + R"(, "rates": [1]})"), "x.json", {4}, /*has_trace=*/true),
                    "x.json: capacity: not with references.trace (a trace sets its own arrivals)");
}

TEST_CASE("device queue: one call at a time per stream, first come first served, on its own timeline") {
  using namespace std::chrono;
  DeviceQueue one(1);
  auto t0 = DeviceQueue::Clock::now();
  auto a = one.place(milliseconds(10), t0);
  auto b = one.place(milliseconds(10), t0 + milliseconds(1));  // queued behind a
  auto c = one.place(milliseconds(5), t0 + milliseconds(50));  // the device is idle again
  CHECK(a.start == t0);
  CHECK(b.start == a.end);
  CHECK(b.end == t0 + milliseconds(20));
  CHECK(c.start == t0 + milliseconds(50));
  DeviceQueue two(2);
  auto x = two.place(milliseconds(10), t0), y = two.place(milliseconds(10), t0), z = two.place(milliseconds(10), t0);
  CHECK(x.start == t0);
  CHECK(y.start == t0);
  CHECK(y.stream != x.stream);
  CHECK(z.start == t0 + milliseconds(10));
  CHECK(two.calls() == 3);
  CHECK_THROWS_AS(DeviceQueue(0), refenc::Error);
  // A caller that comes straight back (within the catch-up window) continues at its previous end; one
  // that comes back later, or another caller, is placed when it comes.
  DeviceQueue gpu(1, milliseconds(5));
  auto first = gpu.place(milliseconds(10), t0, /*caller=*/7);
  auto again = gpu.place(milliseconds(10), first.end + milliseconds(3), 7);
  CHECK(again.submitted == first.end);
  CHECK(again.start == first.end);
  auto late = gpu.place(milliseconds(10), again.end + milliseconds(9), 7);
  CHECK(late.start == again.end + milliseconds(9));
  auto other = gpu.place(milliseconds(10), late.end + milliseconds(1), 8);
  CHECK(other.start == late.end + milliseconds(1));
  SyntheticDeviceCost cost{.fixed_ms = 20, .per_item_ms = 2};
  CHECK(synthetic_knee_rps(cost, 1) == Approx(1000.0 / 22));
  CHECK(synthetic_knee_rps(cost, 8) == Approx(8000.0 / 36));
}

TEST_CASE("gate: the capacity criterion and how it combines with the closed-loop levels") {
  RunRecord run;
  run.have_requests = true;
  add_sweep(run, "m", Arm::m4a, {{10, 0.1}, {20, 0.2}, {40, 2.0}}, false);
  add_sweep(run, "m", Arm::m4b, {{10, 0.1}, {20, 0.1}, {40, 0.2}, {80, 3.0}}, true);
  GateOptions o{GateSpec{.bootstrap_resamples = 200}, 1};
  auto c = judge_capacity(run, "m", o);
  REQUIRE(c);
  CHECK(c->m4a_rps.point == 20);
  CHECK(c->m4b_rps.point == 40);
  CHECK(c->gain.lo == Approx(1.0));
  CHECK(c->outcome == Verdict::go);
  CHECK(combine_capacity(Verdict::no_go, true, *c) == Verdict::go);
  CHECK(combine_capacity(Verdict::missing_arm, true, *c) == Verdict::missing_arm);
  CHECK(combine_capacity(Verdict::no_go, false, *c) == Verdict::go);

  // No batch of more than one: not batching.
  RunRecord unbatched = run;
  for (auto& s : unbatched.capacity->sweeps)
    for (auto& st : s.steps) st.batches = st.batched_items = 0;
  CHECK(judge_capacity(unbatched, "m", o)->outcome == Verdict::inconclusive);
  // M4b no better: NO-GO, and the closed-loop GO stands.
  RunRecord same;
  same.have_requests = true;
  add_sweep(same, "m", Arm::m4a, {{10, 0.1}, {20, 0.2}, {40, 2.0}}, false);
  add_sweep(same, "m", Arm::m4b, {{10, 0.1}, {20, 0.2}, {40, 2.0}}, true);
  auto n = judge_capacity(same, "m", o);
  CHECK(n->outcome == Verdict::no_go);
  CHECK(combine_capacity(Verdict::go, true, *n) == Verdict::go);
  CHECK(combine_capacity(Verdict::inconclusive, true, *n) == Verdict::inconclusive);
  // M4a never misses the SLO: its capacity is a lower bound only.
  RunRecord censored;
  censored.have_requests = true;
  add_sweep(censored, "m", Arm::m4a, {{10, 0.1}, {20, 0.2}}, false);
  add_sweep(censored, "m", Arm::m4b, {{10, 0.1}, {20, 0.1}, {40, 0.2}}, true);
  auto k = judge_capacity(censored, "m", o);
  CHECK(k->m4a_censored);
  CHECK(k->outcome == Verdict::inconclusive);
  // An arm without a sweep.
  RunRecord half;
  half.have_requests = true;
  add_sweep(half, "m", Arm::m4a, {{10, 0.1}}, false);
  CHECK(judge_capacity(half, "m", o)->outcome == Verdict::missing_arm);
  CHECK_FALSE(judge_capacity(RunRecord{}, "m", o));

  // The report keeps it, infinities as null, and reads it back.
  RunRecord slow;
  slow.have_requests = true;
  add_sweep(slow, "m", Arm::m4a, {{10, 2.0}}, false);
  add_sweep(slow, "m", Arm::m4b, {{10, 0.1}}, true);
  auto g = judge_capacity(slow, "m", o);
  CHECK(g->outcome == Verdict::inconclusive);
  CHECK(std::isinf(g->gain.point));
  GateReport report;
  report.models.push_back({"m", "fake", g->outcome, g->reason, "", {}, g});
  json j = to_json(report);
  CHECK(j["models"][0]["capacity"]["gain"]["point"].is_null());
}

TEST_CASE("a capacity sweep through the profiler on the synthetic device recomputes from requests.jsonl") {
  json j = json::parse(R"({
    "schema_version": 1, "name": "capacity-test", "seed": 5,
    "models": [{"name": "synthetic", "synthesis": {"source": "test", "step_base_ms": 0.2, "prefill_base_ms": 0.2,
                                                    "steps_per_audio_second": 5}}],
    "references": {"clips": ["clips/en-m-16k.flac", "clips/es-m-48k.flac"], "variants": 20, "warmup": 2},
    "texts": ["Hello there."],
    "phases": [{"kind": "cold", "requests": 12, "concurrency": [4]}],
    "arms": [{"name": "m4a"}, {"name": "m4b", "max_batch_size": 4, "max_batch_wait_ms": 1}],
    "capacity": {"slo": {"ttfa_ms": 400, "e2e_ms": 2000}, "rates": [100, 400], "arrivals": "uniform"},
    "gate": {"bootstrap_resamples": 200}
  })");
  Manifest m = parse_manifest(j, std::string(refenc::source_dir()) + "/workloads/capacity-test.json");
  auto dir = std::filesystem::temp_directory_path() / ("refenc-capacity-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ProfileResult r = run_profile(m, synthetic_device_factory({.fixed_ms = 1, .per_item_ms = 0.2}),
                                {.out_dir = dir.string(), .sleep_synthesis = false});
  REQUIRE(r.run.capacity);
  const CapacityReport& cap = *r.run.capacity;
  REQUIRE(cap.sweeps.size() == 2);
  CHECK(cap.arrivals == "uniform");
  CHECK(cap.rates == "list");
  for (const CapacitySweep& s : cap.sweeps) {
    INFO(s.id());
    CHECK(s.concurrency == 4);
    REQUIRE(s.steps.size() == 2);
    CHECK(s.steps[0].rate_per_s == 100);
    CHECK(s.steps[1].rate_per_s == 400);
    for (const RateStep& st : s.steps) {
      CHECK(st.requests == 12);
      const auto& reqs = r.run.requests.at(s.step_id(st.index));
      REQUIRE(reqs.size() == 12);
      for (const RequestRecord& q : reqs) {
        CHECK(q.rate_step == st.index);
        CHECK(q.rate_per_s == st.rate_per_s);
      }
      // Evenly spaced arrivals at the step's rate.
      CHECK(reqs[11].scheduled_s == Approx(11 / st.rate_per_s).margin(1e-9));
    }
  }
  REQUIRE(r.run.gate);
  REQUIRE(r.run.gate->models[0].capacity);
  CHECK(validate_report(r.run).empty());

  // Read back from the run folder: the same figures, recomputed from requests.jsonl alone.
  RunRecord back = load_run_with_requests(dir.string());
  REQUIRE(back.capacity);
  REQUIRE(back.capacity->sweeps.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const CapacitySweep &w = cap.sweeps[i], &b = back.capacity->sweeps[i];
    CHECK(b.id() == w.id());
    for (const RateStep& st : b.steps) {
      RateStep again = summarize_step(st.index, st.rate_per_s, back.requests.at(b.step_id(st.index)),
                                      back.capacity->slo, capacity_bootstrap(back.gate_options(), b.step_id(st.index)));
      CHECK(again.good == st.good);
      CHECK(again.goodput == Approx(st.goodput));
      CHECK(again.throughput_rps == Approx(st.throughput_rps));
      CHECK(again.p95_ttfa_s.point == Approx(st.p95_ttfa_s.point));
      CHECK(again.p95_ttfa_s.lo == Approx(st.p95_ttfa_s.lo));
      CHECK(again.meets_slo == st.meets_slo);
    }
    CapacitySweep copy = b;
    finish_sweep(copy, back, back.capacity->slo.ttfa_ms, back.gate_options());
    CHECK(copy.capacity_rps.point == w.capacity_rps.point);
    CHECK(copy.capacity_rps.lo == w.capacity_rps.lo);
  }
  GateReport again = evaluate_gate(back, back.gate_options());
  CHECK(again.models[0].verdict == r.run.gate->models[0].verdict);
  CHECK(again.models[0].capacity->gain.point == r.run.gate->models[0].capacity->gain.point);

  // The summary and the page show it.
  std::string text = summary_table(back);
  CHECK(text.find("capacity at the SLO: p95 TTFA <= 400 ms") != std::string::npos);
  CHECK(text.find("synthetic/m4b/capacity/c4 capacity:") != std::string::npos);
  CHECK(format_gate(again).find("capacity ") != std::string::npos);
  std::string html = render_html_report(back, {});
  CHECK(html.find("id=\"capacity\"") != std::string::npos);
  CHECK(html.find("p95 time to first audio (ms)") != std::string::npos);
  std::filesystem::remove_all(dir);
}
