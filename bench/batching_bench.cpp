// M4b against its cost model: a synthetic device whose batch call costs FIXED + PER_ITEM * n and runs
// one call at a time (as a GPU stream would); encode_one is a batch of one. Closed loop, every request
// a distinct key (the cold-cache case), concurrency 8 and 16, max_batch_size 1/4/8, a few waits.
//
//   build/release/bench/bench_batching [--fixed-ms 20] [--per-item-ms 2] [--seconds 2]
//
// Prediction for full batches of b (b <= concurrency C): a device cycle takes FIXED + PER_ITEM*b and
// serves b requests, so throughput = b / (FIXED + PER_ITEM*b) and latency = ceil(C/b) cycles. The
// table also gives the prediction at the batch size actually measured.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/reference_encode_service.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using ms = std::chrono::duration<double, std::milli>;

struct DeviceHook : refenc::ReferenceEncodeHook<long, long, long> {
  double fixed_ms, per_item_ms;
  // One call on the device at a time, served first come first served (a ticket lock), as a GPU
  // stream would run submitted work in order.
  std::mutex m;
  std::condition_variable cv;
  unsigned long next_ticket = 0, serving = 0;
  DeviceHook(double f, double p) : fixed_ms(f), per_item_ms(p) {}
  void run(std::size_t n) {
    std::unique_lock lock(m);
    const unsigned long ticket = next_ticket++;
    cv.wait(lock, [&] { return serving == ticket; });
    lock.unlock();
    std::this_thread::sleep_for(ms(fixed_ms + per_item_ms * double(n)));
    lock.lock();
    ++serving;
    cv.notify_all();
  }
  std::optional<refenc::ReferenceEncodeKey> cache_key(const long& k) override {
    return refenc::ReferenceEncodeKey{"synthetic", "1", "device", "cfg", "codes", std::to_string(k), ""};
  }
  long encode_one(const long& k) override {
    run(1);
    return k;
  }
  bool can_encode_batch() const override { return true; }
  std::vector<long> encode_batch(std::span<const long* const> items) override {
    run(items.size());
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

}  // namespace

int main(int argc, char** argv) {
  double fixed = 20, per_item = 2, seconds = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--fixed-ms") fixed = std::atof(argv[i + 1]);
    if (a == "--per-item-ms") per_item = std::atof(argv[i + 1]);
    if (a == "--seconds") seconds = std::atof(argv[i + 1]);
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
