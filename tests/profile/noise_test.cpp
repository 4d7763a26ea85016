// A/A twins, contamination from (fake) /proc, the stopping rule, verdict stability, and compare over
// several runs with a noise floor and a Mann-Whitney U test.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <set>

#include "fake_backend.hpp"
#include "profile/record/cell_groups.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/text_report.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/manifest/noise_manifest.hpp"
#include "profile/telemetry/proc_sampler.hpp"
#include "profile/orchestration/profiler.hpp"
#include "profile/stats/mann_whitney.hpp"
#include "profile/stats/student_t.hpp"
#include "profile/verdict/compare.hpp"
#include "profile/verdict/contamination_rule.hpp"
#include "profile/verdict/gate.hpp"
#include "profile/verdict/noise_floor.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;
using namespace refenc::profile::testing;
using nlohmann::json;

namespace {

const char* self_stat(unsigned long long utime, unsigned long long stime) {
  static thread_local std::string s;
  s = "4242 (refenc worker) S 1 4242 4242 0 -1 4194560 100 0 0 0 " + std::to_string(utime) + " " +
      std::to_string(stime) + " 0 0 20 0 9 0 100 0 0\n";
  return s.c_str();
}

std::string stat_line(unsigned long long user, unsigned long long system, unsigned long long idle,
                      unsigned long long steal) {
  return "cpu  " + std::to_string(user) + " 0 " + std::to_string(system) + " " + std::to_string(idle) + " 0 0 0 " +
         std::to_string(steal) + " 0 0\ncpu0 1 2 3 4\nintr 1\n";
}

/// A fake /proc: each call advances 1000 jiffies over 2 cores, of which this process takes `own`,
/// other processes `other` and the hypervisor `steal`; the rest is idle.
struct FakeProc {
  unsigned long long own = 300, other = 0, steal = 0;
  unsigned long long user = 0, idle = 0, st = 0, mine = 0;
  int calls = 0;
  /// Cells (by call pair) that see other processes at `busy` jiffies per 1000: the first `dirty_cells`.
  int dirty_cells = 0;
  unsigned long long busy = 600;
  ProcSnapshot operator()() {
    int cell = calls / 2;
    if (calls % 2 == 1) {  // the end of a cell's window: time passes
      unsigned long long o = cell < dirty_cells ? busy : other;
      user += own + o;
      mine += own;
      st += steal;
      idle += 1000 - own - o - steal;
    }
    ++calls;
    ProcSnapshot s =
        parse_proc_snapshot("1.50 1.20 1.00 3/400 999\n", stat_line(user, 0, idle, st), self_stat(mine, 0), 2);
    s.at_s = calls;
    return s;
  }
};

Manifest fake_manifest(const std::string& extra = "") {
  json j = json::parse(R"({
    "schema_version": 1, "name": "noise", "seed": 11,
    "models": [{"name": "batcher", "synthesis": {"source": "test", "step_base_ms": 0.2, "prefill_base_ms": 0.2,
                                                  "steps_per_audio_second": 5}}],
    "references": {"clips": ["clips/en-m-16k.flac", "clips/es-m-48k.flac"], "variants": 10, "warmup": 1},
    "texts": ["Hello there.", "A second sentence."],
    "concurrency": [2],
    "phases": [{"kind": "cold", "requests": 6}],
    "arms": [{"name": "m4a"}, {"name": "m4b", "max_batch_size": 4, "max_batch_wait_ms": 1}],
    "gate": {"bootstrap_resamples": 200}
  })");
  if (!extra.empty()) j.merge_patch(json::parse(extra));
  return parse_manifest(j, std::string(refenc::source_dir()) + "/workloads/noise.json");
}

BackendFactory batching_factory() {
  return [](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    return std::make_unique<FakeBackend>(fake_info(spec.name, true), true);
  };
}

std::string temp_dir(const std::string& tag) {
  auto p = std::filesystem::temp_directory_path() / ("refenc-noise-test-" + std::to_string(::getpid()) + "-" + tag);
  std::filesystem::remove_all(p);
  return p.string();
}

}  // namespace

TEST_CASE("/proc text: load average, the cpu line and this process's own ticks") {
  ProcSnapshot a = parse_proc_snapshot("0.50 0.40 0.30 1/99 7\n", stat_line(100, 50, 800, 40), self_stat(30, 20), 2);
  REQUIRE(a.ok);
  CHECK(a.load1 == 0.5);
  CHECK(a.total == 100 + 50 + 800 + 40);
  CHECK(a.idle == 800);
  CHECK(a.steal == 40);
  CHECK(a.own == 50);
  ProcSnapshot b = parse_proc_snapshot("2.50 0.40 0.30 1/99 7\n", stat_line(100 + 500, 50 + 100, 800 + 300, 40 + 100),
                                       self_stat(30 + 200, 20 + 100), 2);
  a.at_s = 10;
  b.at_s = 12;
  HostLoad h = host_load_between(a, b);
  REQUIRE(h.available);
  CHECK(h.cores == 2);
  CHECK(h.wall_s == 2);
  CHECK(h.load1_start == 0.5);
  CHECK(h.load1_end == 2.5);
  // 1000 jiffies: 600 busy (user + system), 300 idle, 100 steal; 300 of the busy ones were ours.
  CHECK(h.busy_share == Approx(0.6));
  CHECK(h.own_cpu_share == Approx(0.3));
  CHECK(h.other_cpu_share == Approx(0.3));
  CHECK(h.other_cores() == Approx(0.6));
  CHECK(h.steal_share == Approx(0.1));

  // Unreadable or foreign text: not available, with the file named.
  CHECK(parse_proc_snapshot("", stat_line(1, 1, 1, 0), self_stat(1, 1), 2).reason == "/proc/loadavg: no load average");
  CHECK(parse_proc_snapshot("1.0", "intr 5\n", self_stat(1, 1), 2).reason == "/proc/stat: no aggregate cpu line");
  CHECK(parse_proc_snapshot("1.0", stat_line(1, 1, 1, 0), "42 (x) R 1 2", 2).reason ==
        "/proc/self/stat: no utime and stime");
  ProcSnapshot bad = parse_proc_snapshot("", "", "", 2);
  HostLoad none = host_load_between(bad, a);
  CHECK_FALSE(none.available);
  CHECK(none.reason == "/proc/loadavg: no load average");
  CHECK(contamination_reasons(none, ContaminationSpec{}).empty());
  CHECK_FALSE(host_load_between(a, a).available);  // no time passed
  // The real files parse on this machine.
  ProcSnapshot now = read_proc_snapshot();
  CHECK(now.ok);
  CHECK(now.cores >= 1);
}

TEST_CASE("contamination thresholds: other processes in cores, steal, the optional load average") {
  ContaminationSpec spec;  // 0.5 core of other work, 10% steal, load not checked
  HostLoad h{.available = true, .cores = 2, .load1_start = 9, .other_cpu_share = 0.2, .steal_share = 0.05};
  CHECK(contamination_reasons(h, spec).empty());  // 0.4 cores
  h.other_cpu_share = 0.3;                        // 0.6 cores
  auto why = contamination_reasons(h, spec);
  REQUIRE(why.size() == 1);
  CHECK(why[0] == "other processes used 0.60 cores (30% of 2 cores; limit 0.50)");
  h.steal_share = 0.2;
  CHECK(contamination_reasons(h, spec).size() == 2);
  spec.max_load_per_core = 4;
  CHECK(contamination_reasons(h, spec).back() == "load average 9.00 at the start over 2 cores (limit 4.00 per core)");
  spec.enabled = false;
  CHECK(contamination_reasons(h, spec).empty());
}

TEST_CASE("the runner re-runs a contaminated attempt while re-runs are left") {
  ContaminationSpec spec{.max_reruns = 2};
  const std::vector<std::string> busy{"CPU steal 20.0% (limit 10.0%)"};
  CHECK(rerun_contaminated(busy, 0, spec));
  CHECK(rerun_contaminated(busy, 1, spec));
  CHECK_FALSE(rerun_contaminated(busy, 2, spec));  // the third attempt is kept, contaminated
  CHECK_FALSE(rerun_contaminated({}, 0, spec));
}

TEST_CASE("the gate and compare agree on which cells are contaminated") {
  RunRecord run = load_run_with_requests(std::string(refenc::source_dir()) + "/reports/baseline");
  // Two cold cells of fish-s2-pro (m4b c8, m4a c16) and a warm one stayed contaminated.
  std::set<std::string> marked;
  for (Cell& c : run.cells) {
    const bool cold = c.key.model == "fish-s2-pro" && c.key.phase == Phase::cold && c.key.repeat == 0 &&
                      ((c.key.arm == Arm::m4b && c.key.concurrency == 8) || (c.key.arm == Arm::m4a && c.key.concurrency == 16));
    const bool warm = c.key.model == "qwen3-tts" && c.key.phase == Phase::warm && c.key.concurrency == 8;
    if (!cold && !warm) continue;
    c.contaminated = true;
    c.contamination = {"other processes used 1.20 cores (60% of 2 cores; limit 0.50)"};
    marked.insert(c.key.group().label());
  }
  REQUIRE(marked.size() == 3);
  // The gate names the cold ones, compare flags every group holding a marked cell, and no other.
  GateReport gate = evaluate_gate(run, run.gate_options());
  std::set<std::string> gate_groups;
  for (const ModelVerdict& m : gate.models)
    for (const std::string& id : m.contaminated) {
      const std::string cell = id.substr(0, id.find(' '));
      for (const Cell& c : run.cells)
        if (c.key.id() == cell) gate_groups.insert(c.key.group().label());
    }
  CHECK(gate_groups == std::set<std::string>{"fish-s2-pro/m4b/cold/c8", "fish-s2-pro/m4a/cold/c16"});
  CompareResult cmp = compare_runs(run, run, {});
  std::set<std::string> compare_groups, compare_cold;
  for (const CellChange& ch : cmp.cells)
    if (ch.contaminated) {
      compare_groups.insert(ch.group.label());
      if (ch.group.phase == Phase::cold) compare_cold.insert(ch.group.label());
    }
  CHECK(compare_groups == marked);
  CHECK(compare_cold == gate_groups);
  // And both say it through the one rule.
  for (const auto& [key, g] : group_cells(run)) CHECK(any_contaminated(g.cells) == (marked.count(key.label()) == 1));
}

TEST_CASE("manifest noise blocks: defaults, values, and one-line errors") {
  Manifest m = fake_manifest();
  CHECK(m.noise.aa_arms == std::vector<Arm>{Arm::m4a});
  CHECK(m.noise.contamination.enabled);
  CHECK(m.noise.contamination.max_reruns == 2);
  CHECK(m.noise.stopping.max_repeats == 1);
  Manifest n = fake_manifest(
      R"({"aa": ["m4a", "m4b"], "contamination": {"max_other_cores": 1.5, "max_reruns": 0},
          "stopping": {"max_repeats": 4, "target_width": 0.2}})");
  CHECK(n.noise.aa_arms == std::vector<Arm>{Arm::m4a, Arm::m4b});
  CHECK(n.noise.contamination.max_other_cores == 1.5);
  CHECK(n.noise.contamination.max_reruns == 0);
  CHECK(n.noise.stopping.max_repeats == 4);
  CHECK(n.noise.stopping.target_width == 0.2);
  const std::string file = std::string(refenc::source_dir()) + "/workloads/noise.json: ";
  auto error = [&](const std::string& patch) {
    try {
      fake_manifest(patch);
    } catch (const refenc::Error& e) {
      CHECK(e.kind() == refenc::ErrorKind::bad_input);
      return std::string(e.what()).substr(file.size());
    }
    return std::string("no error");
  };
  CHECK(error(R"({"aa": "m4a"})") == "aa: must be an array of arm names (empty: no A/A cells)");
  CHECK(error(R"({"aa": ["m5"]})").rfind("aa[0]: ", 0) == 0);
  CHECK(error(R"({"aa": ["m4a", "m4a"]})") == "aa[1]: listed twice");
  CHECK(error(R"({"arms": [{"name": "m4a"}], "aa": ["m4b"]})") == "aa[0]: arm m4b is not in arms");
  CHECK(error(R"({"contamination": {"max_other_cores": -1}})") == "contamination.max_other_cores: must be >= 0");
  CHECK(error(R"({"contamination": {"noise": 1}})") == "contamination.noise: unknown field");
  CHECK(error(R"({"repeats": 3, "stopping": {"max_repeats": 2, "target_width": 0.1}})") ==
        "stopping.max_repeats: must be >= repeats (3)");
  CHECK(error(R"({"stopping": {"max_repeats": 2}})") == "stopping.target_width: required");
  CHECK(error(R"({"stopping": {"max_repeats": 2, "target_width": 0}})") == "stopping.target_width: must be > 0");
}

TEST_CASE("a contaminated cell is re-run, and one that stays contaminated makes the verdict INCONCLUSIVE") {
  SECTION("busy only during the first attempt: re-run once, clean, nothing contaminated") {
    FakeProc proc;
    proc.dirty_cells = 1;
    std::string dir = temp_dir("rerun");
    ProfileResult r = run_profile(fake_manifest(), batching_factory(),
                                  {.out_dir = dir, .sleep_synthesis = false, .host_probe = std::ref(proc)});
    REQUIRE(r.run.cells.size() == 2);
    const Cell& first = r.run.cells[0];
    CHECK_FALSE(first.contaminated);
    REQUIRE(first.discarded.size() == 1);
    CHECK(first.discarded[0].other_cores() == Approx(1.2));
    REQUIRE(first.host_load);
    CHECK(first.host_load->other_cores() == Approx(0.0));
    CHECK(first.host_load->own_cpu_share == Approx(0.3));
    for (const RequestRecord& q : r.run.requests_of(first.key)) {
      CHECK(q.attempt == 1);
      CHECK_FALSE(q.contaminated);
    }
    CHECK(r.run.gate->models[0].contaminated.empty());
    CHECK(validate_report_file(dir).empty());
    std::filesystem::remove_all(dir);
  }
  SECTION("busy throughout: the bound of re-runs, then INCONCLUSIVE naming the cells") {
    FakeProc proc;
    proc.other = 600;  // 1.2 cores of other work in every cell
    std::string dir = temp_dir("dirty");
    Manifest m = fake_manifest(R"({"contamination": {"max_reruns": 1}})");
    ProfileResult r =
        run_profile(m, batching_factory(), {.out_dir = dir, .sleep_synthesis = false, .host_probe = std::ref(proc)});
    // 3 cells (m4a, m4b, the A/A twin), each run twice.
    CHECK(proc.calls == 3 * 2 * 2);
    for (const auto* cells : {&r.run.cells, &r.run.aa_cells})
      for (const Cell& c : *cells) {
        CHECK(c.contaminated);
        CHECK(c.discarded.size() == 1);
        REQUIRE(c.contamination.size() == 1);
        CHECK(c.contamination[0] == "other processes used 1.20 cores (60% of 2 cores; limit 0.50)");
      }
    const ModelVerdict& v = r.run.gate->models.at(0);
    CHECK(v.verdict == Verdict::inconclusive);
    CHECK(v.contaminated.size() == 2);
    CHECK(v.reason.rfind("contaminated: the machine was busy during batcher/m4a/cold/c2/r0 (other processes used "
                         "1.20 cores",
                         0) == 0);
    CHECK(r.run.gate->exit_code == gate_exit_inconclusive);
    // Written and read back: the flags per request, the same gate, the summary and the page say so.
    RunRecord run = load_run_with_requests(dir);
    CHECK(to_json(run) == to_json(r.run));
    for (const auto& [id, rows] : run.requests)
      for (const RequestRecord& q : rows) {
        CHECK(q.contaminated);
        CHECK(q.attempt == 1);
      }
    CHECK(to_json(evaluate_gate(run, run.gate_options())) == to_json(*r.run.gate));
    // Compare does not hide it: every group with a contaminated cell says so.
    CompareResult self = compare_runs(run, run, {});
    REQUIRE(self.cells.size() == 2);
    CHECK(self.cells[0].contaminated);
    CHECK(to_json(self)["cells"][0]["contaminated"] == true);
    CHECK(format_gate(*run.gate).find("contaminated (decides nothing): batcher/m4a/cold/c2/r0") != std::string::npos);
    CHECK(summary_markdown(run).find("Cells re-run or contaminated") != std::string::npos);
    std::string page = render_html_report(run);
    CHECK(page.find("data-key=\"contaminated.batcher/m4a/cold/c2/r0\"><span class=\"flag\">contaminated") !=
          std::string::npos);
    CHECK(validate_report_file(dir).empty());
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("the stopping rule: repeats until the gate's intervals are narrow enough or the bound") {
  SECTION("a target no interval reaches: max_repeats") {
    Manifest m = fake_manifest(R"({"stopping": {"max_repeats": 3, "target_width": 0.000001}})");
    std::string dir = temp_dir("stop-max");
    ProfileResult r = run_profile(m, batching_factory(), {.out_dir = dir, .sleep_synthesis = false});
    CHECK(r.run.cells.size() == 3 * 2);
    CHECK(r.run.aa_cells.size() == 3);
    REQUIRE(r.run.noise->stops.size() == 1);
    const StopRecord& s = r.run.noise->stops[0];
    CHECK(s.repeats == 3);
    CHECK(s.reason == "max_repeats");
    CHECK(s.p95_width > 0.000001);
    // Stability: each repeat judged alone.
    const VerdictStability& st = *r.run.gate->models[0].stability;
    CHECK(st.repeats == 3);
    CHECK(st.repeat_verdicts.size() == 3);
    int agreeing = 0;
    for (Verdict v : st.repeat_verdicts) agreeing += v == r.run.gate->models[0].verdict ? 1 : 0;
    CHECK(st.repeats_agreeing == agreeing);
    CHECK(validate_report_file(dir).empty());
    std::filesystem::remove_all(dir);
  }
  SECTION("a target every interval reaches: stops after the manifest's repeats") {
    Manifest m = fake_manifest(R"({"stopping": {"max_repeats": 3, "target_width": 100}})");
    std::string dir = temp_dir("stop-early");
    ProfileResult r = run_profile(m, batching_factory(), {.out_dir = dir, .sleep_synthesis = false});
    CHECK(r.run.cells.size() == 2);
    REQUIRE(r.run.noise->stops.size() == 1);
    CHECK(r.run.noise->stops[0].repeats == 1);
    CHECK(r.run.noise->stops[0].reason == "intervals within target");
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("verdict stability: bootstrap replicates that agree with each level's verdict") {
  // A large, clean GO: every replicate clears the threshold; a clean NO-GO: none does.
  for (double scale : {0.5, 1.5}) {
    RunRecord run;
    run.have_requests = true;
    ModelEntry me;
    me.name = "m";
    me.eligibility = {true, "test"};
    run.models.push_back(me);
    std::mt19937_64 g(3);
    for (Arm arm : {Arm::m4a, Arm::m4b}) {
      Cell c;
      c.key = {"m", arm, Phase::cold, 8, 0};
      c.wall_s = arm == Arm::m4a ? 10 : 10 * scale;
      if (arm == Arm::m4b) c.cache = {{"batches", 16}, {"batched_items", 64}};
      if (arm == Arm::m4b) c.parity = ParitySummary{.batched = 64, .checked = 64, .identical = 64};
      run.cells.push_back(c);
      for (int i = 0; i < 64; ++i) {
        RequestRecord q;
        q.outcome = "encoded";
        q.e2e_s = (arm == Arm::m4a ? 1.0 : scale) * (1.0 + 0.1 * static_cast<double>(g() % 100) / 100.0);
        q.encode_s = 0.8 * q.e2e_s;
        run.requests[c.key.id()].push_back(q);
      }
    }
    GateReport gate = evaluate_gate(run, {GateSpec{.bootstrap_resamples = 500}, 5});
    const ModelVerdict& v = gate.models.at(0);
    INFO("scale " << scale);
    CHECK(v.verdict == (scale < 1 ? Verdict::go : Verdict::no_go));
    CHECK(v.levels[0].bootstrap_go_share == (scale < 1 ? 1.0 : 0.0));
    REQUIRE(v.stability);
    CHECK(v.stability->bootstrap_agreement == 1.0);
    CHECK(v.stability->repeats == 1);
    CHECK(v.stability->repeats_agreeing == 1);
    CHECK(format_gate(gate).find("stability: 100% of bootstrap replicates give each level's verdict") !=
          std::string::npos);
  }
}

TEST_CASE("Mann-Whitney U, one-sided: exact for small samples, normal beyond") {
  std::vector<double> base{1.00, 1.02, 0.99}, cur{1.31, 1.29, 1.35};
  CHECK(mann_whitney_greater(base, cur) == Approx(1.0 / 20));  // the one split of 20 with every y larger
  CHECK(mann_whitney_greater(cur, base) == Approx(1.0));
  CHECK(mann_whitney_greater(base, base) > 0.05);
  std::vector<double> a{1, 2}, b{3, 4};
  CHECK(mann_whitney_greater(a, b) == Approx(1.0 / 6));  // 2 + 2 runs cannot reach 0.05
  std::vector<double> big_a, big_b;
  for (int i = 0; i < 15; ++i) big_a.push_back(i), big_b.push_back(i + 100);
  CHECK(mann_whitney_greater(big_a, big_b) < 1e-4);
  CHECK(mann_whitney_greater({}, big_b) == 1.0);
}

TEST_CASE("compare over several runs: the noise floor and the U test decide what is a regression") {
  // Synthetic runs of one group: E2E around `scale`, with A/A twins that differ by `aa` from their cell.
  auto make = [](double scale, double aa, std::uint64_t seed) {
    RunRecord run;
    run.have_requests = true;
    run.dir = "run" + std::to_string(seed);
    run.noise = NoiseSettings{};
    std::mt19937_64 g(seed);
    for (bool twin : {false, true}) {
      Cell c;
      c.key = {"m", Arm::m4a, Phase::cold, 8, 0};
      c.aa = twin;
      c.wall_s = 10 * scale * (twin ? 1 + aa : 1.0);
      auto& rows = run.requests[twin ? aa_cell_id(c.key) : c.key.id()];
      for (int i = 0; i < 64; ++i) {
        RequestRecord q;
        q.outcome = "encoded";
        q.e2e_s = scale * (twin ? 1 + aa : 1.0) * (1.0 + 0.05 * static_cast<double>(g() % 100) / 100.0);
        q.encode_s = 0.7 * q.e2e_s;
        rows.push_back(q);
      }
      (twin ? run.aa_cells : run.cells).push_back(c);
    }
    return run;
  };
  SECTION("one run each side: a 12% change within an A/A spread of 20% is not a regression") {
    RunRecord b = make(1.0, 0.20, 1), c = make(1.12, 0.20, 2);
    CompareResult r = compare_runs(b, c, {.threshold = 0.10});
    REQUIRE(r.cells.size() == 1);
    const MetricChange* e2e = nullptr;
    for (const MetricChange& m : r.cells[0].metrics)
      if (m.metric == CompareMetric::p95_e2e) e2e = &m;
    REQUIRE(e2e);
    CHECK(e2e->change.point > 0.10);
    CHECK(e2e->change.lo > 0);
    // Two pairs in all (one a run): the pooled 99% bound is t(2 dof) = 9.92 times ln 1.2 (+509%).
    CHECK(e2e->noise_floor == Approx(std::expm1(9.925 * std::log(1.2))).epsilon(0.01));
    CHECK(e2e->noise_source.rfind("A/A 2", 0) == 0);
    CHECK(e2e->noise_source.find("pooled A/A") != std::string::npos);
    CHECK(e2e->p_value < 0);
    CHECK_FALSE(e2e->regression);
    CHECK(r.regressions == 0);
    // With quiet twins (2%) the bound is 21.7%: a 12% change is within it, a 30% change is beyond.
    RunRecord qb = make(1.0, 0.02, 1), qc = make(1.12, 0.02, 2);
    CHECK(compare_runs(qb, qc, {.threshold = 0.10}).regressions == 0);
    CHECK(compare_runs(qb, qc, {.threshold = 0.10, .floor_confidence = 0.80}).regressions == 1);
    qc = make(1.30, 0.02, 2);
    CHECK(compare_runs(qb, qc, {.threshold = 0.10}).regressions == 1);
    // ... unless a cell of the group ran on a busy machine: then it decides nothing (or is judged on request).
    qc.cells[0].contaminated = true;
    CompareResult busy = compare_runs(qb, qc, {.threshold = 0.10});
    CHECK(busy.regressions == 0);
    CHECK(busy.contaminated == 1);
    CHECK(format_compare(busy).find("1 cells ran on a busy machine (contaminated) on one side or both: they decide "
                                    "nothing") != std::string::npos);
    CHECK(compare_runs(qb, qc, {.threshold = 0.10, .judge_contaminated = true}).regressions == 1);
    qc.cells[0].contaminated = false;
    // 50% slower, but by microseconds (a memory hit): below the smallest latency change, not a regression.
    RunRecord tb = make(0.00002, 0.02, 1), tc = make(0.00003, 0.02, 2);
    CompareResult tiny = compare_runs(tb, tc, {.threshold = 0.10});
    for (const MetricChange& m : tiny.cells[0].metrics)
      if (m.metric == CompareMetric::p95_e2e || m.metric == CompareMetric::p95_encode) {
        INFO(to_string(m.metric));
        CHECK(m.change.lo > 0.10);
        CHECK_FALSE(m.regression);
      }
    CHECK(compare_runs(tb, tc, {.threshold = 0.10, .min_change_s = 0}).cells[0].metrics[1].regression);
  }
  SECTION("three runs each side: per-run figures, the between-run spread and the U test") {
    std::vector<RunRecord> base, same, slow;
    for (std::uint64_t s = 1; s <= 3; ++s) {
      base.push_back(make(1.0 + 0.01 * static_cast<double>(s), 0.02, s));
      same.push_back(make(1.0 + 0.01 * static_cast<double>(4 - s), 0.02, 10 + s));
      slow.push_back(make(1.3 + 0.01 * static_cast<double>(s), 0.02, 20 + s));
    }
    auto ptrs = [](const std::vector<RunRecord>& v) {
      std::vector<const RunRecord*> p;
      for (const auto& r : v) p.push_back(&r);
      return p;
    };
    CompareResult quiet = compare_run_sets(ptrs(base), ptrs(same), {.threshold = 0.10});
    CHECK(quiet.regressions == 0);
    CompareResult worse = compare_run_sets(ptrs(base), ptrs(slow), {.threshold = 0.10});
    CHECK(worse.regressions == 1);
    for (const MetricChange& m : worse.cells[0].metrics) {
      INFO(to_string(m.metric));
      CHECK(m.baseline_runs.size() == 3);
      CHECK(m.current_runs.size() == 3);
      if (m.metric == CompareMetric::p95_e2e || m.metric == CompareMetric::throughput) {
        CHECK(m.p_value == Approx(0.05));
        CHECK(m.regression);
        CHECK(m.noise_source.find("between runs") != std::string::npos);
      }
    }
    const std::string text = format_compare(worse);
    CHECK(text.rfind("runs: baseline 3 (run1, run2, run3), current 3 (run21, run22, run23)", 0) == 0);
    CHECK(text.find("Mann-Whitney U test over per-run figures at p <= 0.05") != std::string::npos);
    json j = to_json(worse);
    CHECK(j["baseline_runs"].size() == 3);
    CHECK(j["cells"][0]["metrics"]["p95_e2e"]["u_test_p"] == Approx(0.05));
    CHECK(j["cells"][0]["metrics"]["p95_e2e"]["current_runs"].size() == 3);
    // Two runs a side: the U test cannot reach 0.05, so it is not applied and the output says so.
    CompareResult two = compare_run_sets({&base[0], &base[1]}, {&slow[0], &slow[1]}, {.threshold = 0.10});
    CHECK(two.regressions == 1);
    CHECK(format_compare(two).find("U test not applied (needs 3 runs each side)") != std::string::npos);
  }
  CHECK(between_run_spread({1.0, 1.1, 0.9}) == Approx(0.1));
  CHECK(between_run_spread({1.0}) == 0);
}

TEST_CASE("Student's t: exact two-sided tails and quantiles for integer degrees of freedom") {
  // Reference values: tables of t (R's qt / pt).
  CHECK(student_t_quantile(0.975, 1) == Approx(12.7062).epsilon(1e-4));
  CHECK(student_t_quantile(0.995, 2) == Approx(9.9248).epsilon(1e-4));
  CHECK(student_t_quantile(0.995, 3) == Approx(5.8409).epsilon(1e-4));
  CHECK(student_t_quantile(0.995, 6) == Approx(3.7074).epsilon(1e-4));
  CHECK(student_t_quantile(0.975, 30) == Approx(2.0423).epsilon(1e-4));
  CHECK(student_t_quantile(0.975, 0) == Approx(1.95996).epsilon(1e-5));
  CHECK(student_t_two_sided(2.0, 5) == Approx(0.10196).epsilon(1e-3));
  CHECK(student_t_two_sided(0, 4) == Approx(1.0));
  CHECK(student_t_quantile(0.5, 4) == 0);
}

TEST_CASE("the pooled A/A bound: one run a side borrows the noise of every group of its phase") {
  // pooled_aa_bound itself: RMS of the log ratios, t with one dof per pair, scaled to the runs a side.
  const std::vector<double> d{0.1, -0.1, 0.1, -0.1, 0.1, -0.1};
  CHECK(pooled_aa_bound(d, 1, 1, 0.99) == Approx(std::expm1(3.7074 * 0.1)).epsilon(1e-3));
  CHECK(pooled_aa_bound(d, 3, 3, 0.99) == Approx(std::expm1(3.7074 * 0.1 / std::sqrt(3.0))).epsilon(1e-3));
  CHECK(pooled_aa_bound({}, 1, 1, 0.99) == 0);

  // Two groups of one phase (c8, c16), each run with one A/A twin per group: c8's twins are quiet (1%),
  // c16's noisy (25%). c8 changes by 15%: its own pair says that is 15x its noise, the pooled pairs of
  // the phase say one run a side moves that much on its own.
  auto make = [](double c8_scale, std::uint64_t seed) {
    RunRecord run;
    run.have_requests = true;
    run.dir = "run" + std::to_string(seed);
    run.noise = NoiseSettings{};
    std::mt19937_64 g(seed);
    for (int c : {8, 16})
      for (bool twin : {false, true}) {
        const double aa = c == 8 ? 0.01 : (seed % 2 ? 0.25 : -0.2);
        const double scale = (c == 8 ? c8_scale : 1.0) * (twin ? 1 + aa : 1.0);
        Cell cell;
        cell.key = {"m", Arm::m4a, Phase::cold, c, 0};
        cell.aa = twin;
        cell.wall_s = 10 * scale;
        auto& rows = run.requests[twin ? aa_cell_id(cell.key) : cell.key.id()];
        for (int i = 0; i < 64; ++i) {
          RequestRecord q;
          q.outcome = "encoded";
          q.e2e_s = scale * (1.0 + 0.05 * static_cast<double>(g() % 100) / 100.0);
          q.encode_s = 0.7 * q.e2e_s;
          rows.push_back(q);
        }
        (twin ? run.aa_cells : run.cells).push_back(cell);
      }
    return run;
  };
  RunRecord b = make(1.0, 1), c = make(1.15, 2);
  CompareResult r = compare_runs(b, c, {.threshold = 0.10});
  REQUIRE(r.cells.size() == 2);
  const CellChange& c8 = r.cells[0].group.concurrency == 8 ? r.cells[0] : r.cells[1];
  for (const MetricChange& m : c8.metrics) {
    INFO(to_string(m.metric));
    if (m.metric == CompareMetric::p50_preprocessing) continue;  // no preprocessing in these rows
    CHECK(m.noise_source.find("pooled A/A") != std::string::npos);
    CHECK(m.noise_source.find("4 pairs of cold") != std::string::npos);
    CHECK(m.noise_floor > 0.25);
    CHECK_FALSE(m.regression);
  }
  CHECK(r.regressions == 0);
  // The same change with every group's twins quiet is a regression.
  auto quiet = [&](RunRecord run) {
    for (Cell& t : run.aa_cells) run.requests[aa_cell_id(t.key)] = run.requests[t.key.id()];
    for (Cell& t : run.aa_cells)
      for (const Cell& cell : run.cells)
        if (cell.key == t.key) t.wall_s = cell.wall_s;
    return run;
  };
  CHECK(compare_runs(quiet(b), quiet(c), {.threshold = 0.10}).regressions == 1);
}
