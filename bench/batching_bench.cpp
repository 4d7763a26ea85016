// M4b against its cost model: a synthetic device whose batch call costs FIXED + PER_ITEM * n and runs
// one call at a time (as a GPU stream would; lib/profile's DeviceQueue, sleeping on the device's own
// timeline); encode_one is a batch of one. Closed loop, every request a distinct key (the cold-cache
// case), concurrency 8 and 16, max_batch_size 1/4/8, a few waits.
//
//   build/release/bench/bench_batching [--fixed-ms 20] [--per-item-ms 2] [--seconds 2]
//   build/release/bench/bench_batching --capacity workloads/capacity-synthetic.json [--out DIR]
//                                      [--arrivals poisson|uniform]
//
// Prediction for full batches of b (b <= concurrency C): a device cycle takes FIXED + PER_ITEM*b and
// serves b requests, so throughput = b / (FIXED + PER_ITEM*b) and latency = ceil(C/b) cycles. The
// table also gives the prediction at the batch size actually measured.
//
// --capacity profiles the manifest on the same synthetic device (lib/profile's synthetic_device.hpp):
// its open-loop rate sweeps search each arm's capacity at the SLO, which is compared with the analytic
// knee b / (FIXED + PER_ITEM*b) for b = the arm's max_batch_size (1 for M4a); exit 1 when an arm is
// more than 5% off. With --arrivals poisson, M4a (an M/D/1 queue) is checked instead against the rate
// at which the steady-state p95 wait (Erlang's formula) fills the SLO. The run folder (report.json,
// requests.jsonl, report.html) goes to --out.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <cstdio>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/reference_encode_service.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/text_report.hpp"
#include "profile/device/device_queue.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/profiler.hpp"
#include "profile/orchestration/synthetic_device.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using ms = std::chrono::duration<double, std::milli>;

struct DeviceHook : refenc::ReferenceEncodeHook<long, long, long> {
  double fixed_ms, per_item_ms;
  // One call on the device at a time, served first come first served, as a GPU stream would run
  // submitted work in order.
  refenc::profile::DeviceQueue device{1};
  DeviceHook(double f, double p) : fixed_ms(f), per_item_ms(p) {}
  void run(std::size_t n, bool resume) {
    device.run(std::chrono::duration_cast<Clock::duration>(ms(fixed_ms + per_item_ms * double(n))), resume);
  }
  std::optional<refenc::ReferenceEncodeKey> cache_key(const long& k) override {
    return refenc::ReferenceEncodeKey{"synthetic", "1", "device", "cfg", "codes", std::to_string(k), ""};
  }
  long encode_one(const long& k) override {
    run(1, false);
    return k;
  }
  bool can_encode_batch() const override { return true; }
  std::vector<long> encode_batch(std::span<const long* const> items) override {
    run(items.size(), true);  // a batch worker feeding the device back to back
    std::vector<long> out;
    for (const long* k : items) out.push_back(*k);
    return out;
  }
  long store_artifact(const long& a) override { return a; }
  long load_artifact(const long& s) override { return s; }
  std::size_t stored_bytes(const long&) const override { return 8; }
};

struct Result {
  double throughput, p50, p95, mean_batch;
};

Result run(double fixed, double per_item, int concurrency, std::size_t batch, std::chrono::microseconds wait,
           double seconds) {
  auto hook = std::make_shared<DeviceHook>(fixed, per_item);
  refenc::ReferenceEncodeService<long, long, long> s(
      hook, {.max_items = 1 << 20, .max_bytes = 1 << 30, .max_batch_size = batch, .max_batch_wait = wait});
  std::atomic<long> next{0};
  std::mutex m;
  std::vector<double> lat;
  std::latch start(concurrency + 1);
  const auto stop_at = Clock::now() + std::chrono::duration<double>(seconds + 0.2);
  const auto measure_from = Clock::now() + std::chrono::milliseconds(200);  // skip the ramp-up
  std::atomic<long> done{0};
  std::vector<std::thread> pool;
  for (int c = 0; c < concurrency; ++c)
    pool.emplace_back([&] {
      start.arrive_and_wait();
      std::vector<double> mine;
      while (Clock::now() < stop_at) {
        auto t0 = Clock::now();
        s.get_or_encode(next++);
        auto t1 = Clock::now();
        if (t0 >= measure_from) {
          mine.push_back(ms(t1 - t0).count());
          ++done;
        }
      }
      std::lock_guard lock(m);
      lat.insert(lat.end(), mine.begin(), mine.end());
    });
  start.arrive_and_wait();
  for (auto& t : pool) t.join();
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) {
    return lat.empty() ? 0.0 : lat[std::min(lat.size() - 1, std::size_t(std::ceil(p * lat.size())) - 1)];
  };
  auto st = s.stats();
  double mean_batch = st.batches ? double(st.batched_items) / double(st.batches) : 1.0;
  return {double(done) / seconds, pct(0.50), pct(0.95), mean_batch};
}

double predict_throughput(double fixed, double per_item, double b) { return b / (fixed + per_item * b) * 1000.0; }
double predict_latency(double fixed, double per_item, int c, double b) {
  return std::ceil(double(c) / b) * (fixed + per_item * b);
}

/// M/D/1 (Poisson arrivals at `rate` per ms, deterministic service `d` ms): P(wait <= t), Erlang's
/// formula (1 - rho) * sum_{k=0}^{floor(t/d)} (rate (k d - t))^k / k! * exp(-rate (k d - t)).
double md1_wait_cdf(double t, double rate, double d) {
  const double rho = rate * d;
  if (rho >= 1) return 0;
  double sum = 0;
  for (int k = 0; k <= static_cast<int>(std::floor(t / d)); ++k) {
    const double x = rate * (k * d - t);
    sum += std::pow(x, k) / std::tgamma(k + 1.0) * std::exp(-x);
  }
  return (1 - rho) * sum;
}

/// The Poisson rate (req/s) at which the steady-state p95 wait of an M/D/1 queue is `t` ms.
double md1_capacity_rps(double t, double d) {
  double lo = 0, hi = 1 / d;  // per ms
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (md1_wait_cdf(t, mid, d) >= 0.95 ? lo : hi) = mid;
  }
  return 1000 * lo;
}

}  // namespace

/// Profiles `manifest` on the synthetic device and compares each arm's capacity with the analytic knee.
int capacity_check(const std::string& manifest_path, const std::string& out, double fixed, double per_item,
                   const std::string& arrivals) {
  using namespace refenc::profile;
  Manifest m = load_manifest(manifest_path);
  if (!m.capacity) {
    std::fprintf(stderr, "bench_batching: error: %s: no capacity block\n", manifest_path.c_str());
    return 2;
  }
  if (!arrivals.empty()) m.capacity->uniform = arrivals == "uniform";
  SyntheticDeviceCost cost{.fixed_ms = fixed, .per_item_ms = per_item};
  ProfileResult r = run_profile(m, synthetic_device_factory(cost), {.out_dir = out, .progress = true});
  write_html_report(r.dir);
  std::printf("%s", summary_table(r.run).c_str());
  std::printf("%s", format_gate(*r.run.gate).c_str());
  std::printf("\nsynthetic device: %.0f ms + %.0f ms/item, one call at a time; SLO p95 TTFA <= %g ms, %s arrivals\n",
              fixed, per_item, m.capacity->slo.ttfa_ms, r.run.capacity->arrivals.c_str());
  std::printf("%-5s %5s | %12s | %28s | %7s | %5s\n", "arm", "batch", "knee req/s", "capacity req/s [95% CI]", "error",
              "steps");
  int worst = 0;
  for (const CapacitySweep& s : r.run.capacity->sweeps) {
    int batch = 1;
    for (const ArmSpec& a : m.arms)
      if (a.arm == s.arm) batch = a.max_batch_size;
    double knee = synthetic_knee_rps(cost, batch), cap = s.capacity_rps.point;
    double err = (cap - knee) / knee;
    bool ok = std::abs(err) <= 0.05 && !s.censored;
    if (!ok) worst = 1;
    std::printf("%-5s %5d | %12.2f | %8.2f [%7.2f, %7.2f]%s | %+6.1f%% | %5zu %s\n",
                std::string(to_string(s.arm)).c_str(), batch, knee, cap, s.capacity_rps.lo, s.capacity_rps.hi,
                s.censored ? " (>=)" : "     ", 100 * err, s.steps.size(),
                !m.capacity->uniform ? "(Poisson: below the knee by the queueing the SLO allows)"
                : ok                 ? "within 5%"
                                     : "OFF BY MORE THAN 5%");
  }
  if (!m.capacity->uniform) {
    // Poisson arrivals: M4a is an M/D/1 queue; its capacity at the SLO is where the steady-state p95
    // wait leaves the service time and the modelled first audio within the SLO.
    const SynthesisSpec& sy = m.models[0].synthesis;
    const double first_ms = sy.prefill_base_ms + sy.steps_to_first_audio * sy.step_base_ms;
    const double d = fixed + per_item, md1 = md1_capacity_rps(m.capacity->slo.ttfa_ms - d - first_ms, d);
    worst = 0;  // the knee is the uniform-arrival check; here M4a is judged against M/D/1
    for (const CapacitySweep& s : r.run.capacity->sweeps) {
      if (s.arm != Arm::m4a) continue;
      const double err = (s.capacity_rps.point - md1) / md1;
      if (std::abs(err) > 0.05) worst = 1;
      std::printf(
          "m4a against M/D/1 (Poisson, steady state, first audio %.1f ms): %.2f req/s; search %.2f (%+.1f%%) %s\n",
          first_ms, md1, s.capacity_rps.point, 100 * err, std::abs(err) <= 0.05 ? "within 5%" : "OFF BY MORE THAN 5%");
    }
  }
  std::printf("run folder: %s\n", r.dir.c_str());
  return worst;
}

int main(int argc, char** argv) {
  double fixed = 20, per_item = 2, seconds = 2;
  std::string capacity, out, arrivals;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--fixed-ms") fixed = std::atof(argv[i + 1]);
    if (a == "--per-item-ms") per_item = std::atof(argv[i + 1]);
    if (a == "--seconds") seconds = std::atof(argv[i + 1]);
    if (a == "--capacity") capacity = argv[i + 1];
    if (a == "--out") out = argv[i + 1];
    if (a == "--arrivals") arrivals = argv[i + 1];
  }
  if (!capacity.empty()) {
    try {
      if (!arrivals.empty() && arrivals != "poisson" && arrivals != "uniform")
        throw std::runtime_error("--arrivals: must be poisson or uniform");
      return capacity_check(capacity, out.empty() ? "runs/capacity-synthetic" : out, fixed, per_item, arrivals);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_batching: error: %s\n", e.what());
      return 2;
    }
  }
  std::printf(
      "synthetic device: %.0f ms + %.0f ms/item, one call at a time; closed loop, distinct keys; %.1f s per row\n",
      fixed, per_item, seconds);
  std::printf("%-4s %-5s %-8s | %9s %9s %8s %8s | %9s %9s | %9s %9s\n", "C", "batch", "wait", "req/s", "mean b",
              "p50 ms", "p95 ms", "pred full", "pred lat", "pred@b", "err@b");
  for (int c : {8, 16}) {
    for (std::size_t b : {1, 4, 8}) {
      for (int wait_ms : {0, 2, 5}) {
        if (b == 1 && wait_ms > 0) continue;
        Result r = run(fixed, per_item, c, b, std::chrono::milliseconds(wait_ms), seconds);
        double full = std::min<double>(b, c);
        double pred = predict_throughput(fixed, per_item, full);
        double pred_at = predict_throughput(fixed, per_item, r.mean_batch);
        std::printf("%-4d %-5zu %-8s | %9.1f %9.2f %8.1f %8.1f | %9.1f %9.1f | %9.1f %8.1f%%\n", c, b,
                    (std::to_string(wait_ms) + " ms").c_str(), r.throughput, r.mean_batch, r.p50, r.p95, pred,
                    predict_latency(fixed, per_item, c, full), pred_at, 100.0 * (r.throughput - pred_at) / pred_at);
      }
    }
  }
  return 0;
}
