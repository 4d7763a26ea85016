// Hit path and single-flight fan-out of ReferenceEncodeService, side by side with the seed's design
// in Python (py_design_peer.py: threading.Lock + OrderedDict LRU, a 2-element int64 tensor cloned on
// hit), in one run on one machine.
//
//   build/release/bench/bench_core [--peer ../shared/bench/py_design_peer.py] [--calls N] [--repeat R]
//
// Each figure is the median of R runs (default 3), the peer's included, interleaved so that noise
// from other work on the machine spreads over every column.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "core/reference_encode_service.hpp"
#include "store/artifact.hpp"

namespace {

using Clock = std::chrono::steady_clock;

/// The peer's artifact: a 2-element int64 tensor, cloned on every load.
struct TensorHook : refenc::ReferenceEncodeHook<int, at::Tensor, at::Tensor> {
  std::optional<refenc::ReferenceEncodeKey> cache_key(const int& k) override {
    return refenc::ReferenceEncodeKey{"bench", "r1", "enc", "cfg", "codes", std::to_string(k), ""};
  }
  at::Tensor encode_one(const int& k) override { return at::full({2}, k, at::kLong); }
  at::Tensor store_artifact(const at::Tensor& a) override { return a.detach().clone(); }
  at::Tensor load_artifact(const at::Tensor& s) override { return s.clone(); }
  std::size_t stored_bytes(const at::Tensor& s) const override { return s.numel() * s.element_size(); }
};

/// refenc's own artifact type: the same 2-element int64 tensor as a HostTensor, copied on hit.
struct HostTensorHook : refenc::ReferenceEncodeHook<int, refenc::HostTensor, refenc::HostTensor> {
  std::optional<refenc::ReferenceEncodeKey> cache_key(const int& k) override {
    return refenc::ReferenceEncodeKey{"bench", "r1", "enc", "cfg", "codes", std::to_string(k), ""};
  }
  refenc::HostTensor encode_one(const int& k) override {
    return refenc::HostTensor::from_vector<std::int64_t>({2}, std::vector<std::int64_t>{k, k});
  }
  refenc::HostTensor store_artifact(const refenc::HostTensor& a) override { return a; }
  refenc::HostTensor load_artifact(const refenc::HostTensor& s) override { return s; }
  std::size_t stored_bytes(const refenc::HostTensor& s) const override { return s.nbytes(); }
};

/// The same with a plain array: the service's own cost without LibTorch's per-clone overhead.
struct ArrayHook : refenc::ReferenceEncodeHook<int, std::array<std::int64_t, 2>, std::array<std::int64_t, 2>> {
  using A = std::array<std::int64_t, 2>;
  std::optional<refenc::ReferenceEncodeKey> cache_key(const int& k) override {
    return refenc::ReferenceEncodeKey{"bench", "r1", "enc", "cfg", "codes", std::to_string(k), ""};
  }
  A encode_one(const int& k) override { return {k, k}; }
  A store_artifact(const A& a) override { return a; }
  A load_artifact(const A& s) override { return s; }
  std::size_t stored_bytes(const A&) const override { return sizeof(A); }
};

template <class Hook>
double hits_per_second(int threads, long per_thread) {
  using Service = refenc::ReferenceEncodeService<int, typename Hook::Artifact, typename Hook::Stored>;
  Service s(std::make_shared<Hook>());
  for (int k = 0; k < 64; ++k) s.get_or_encode(k);
  std::latch start(threads + 1);
  std::vector<std::thread> pool;
  std::atomic<long> sink{0};
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      long local = 0;
      for (long i = 0; i < per_thread; ++i) {
        auto a = s.get_or_encode(static_cast<int>((i + t) % 64));
        local += static_cast<long>(sizeof(a));
      }
      sink += local;
    });
  auto t0 = Clock::now();  // before the release: no worker can start ahead of the clock
  start.count_down();
  for (auto& th : pool) th.join();
  double dt = std::chrono::duration<double>(Clock::now() - t0).count();
  if (s.stats().hits != static_cast<std::uint64_t>(threads * per_thread + 0))
    std::fprintf(stderr, "unexpected misses\n");
  return threads * per_thread / dt;
}

/// An encode that busy-waits `spin` (so followers arrive while it runs).
struct SpinHook : ArrayHook {
  std::chrono::microseconds spin{200};
  A encode_one(const int& k) override {
    auto until = Clock::now() + spin;
    while (Clock::now() < until) {}
    return {k, k};
  }
};

/// Fan-out: `threads` callers ask for the same new key at once, `rounds` times; the encode spins
/// 200 us, so the rest of a round is the service's hand-off and wake-up cost.
void fan_out(int threads, int rounds) {
  using Service = refenc::ReferenceEncodeService<int, ArrayHook::A, ArrayHook::A>;
  Service s(std::make_shared<SpinHook>(), {.max_items = 1 << 20, .max_bytes = 1 << 30});
  std::barrier sync(threads);
  std::vector<std::thread> pool;
  auto t0 = Clock::now();
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int r = 0; r < rounds; ++r) {
        sync.arrive_and_wait();
        s.get_or_encode(r);
      }
    });
  for (auto& th : pool) th.join();
  double dt = std::chrono::duration<double>(Clock::now() - t0).count();
  auto st = s.stats();
  std::printf(
      "fan-out   threads=%-3d rounds=%d  %.1f us/round (200 us of it the encode)  encodes=%llu  merged=%llu "
      "hits=%llu\n",
      threads, rounds, dt / rounds * 1e6, static_cast<unsigned long long>(st.misses),
      static_cast<unsigned long long>(st.merged), static_cast<unsigned long long>(st.hits));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double run_peer(const std::string& peer, int threads, long per_thread) {
  if (!std::filesystem::exists(peer) || !std::filesystem::exists("/usr/bin/python3")) return 0;
  std::string cmd =
      "/usr/bin/python3 " + peer + " " + std::to_string(threads) + " " + std::to_string(per_thread) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return 0;
  char buf[512];
  double hps = 0;
  while (std::fgets(buf, sizeof buf, p)) {
    if (const char* h = std::strstr(buf, "hits_per_s=")) hps = std::atof(h + 11);
  }
  pclose(p);
  return hps;
}

}  // namespace

int main(int argc, char** argv) {
  std::string peer = "../shared/bench/py_design_peer.py";
  long calls = 2000000;
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--peer") peer = argv[i + 1];
    if (std::string(argv[i]) == "--calls") calls = std::atol(argv[i + 1]);
    if (std::string(argv[i]) == "--repeat") repeat = std::max(1, std::atoi(argv[i + 1]));
  }
  at::set_num_threads(1);
  std::printf("hit path: %ld hits per run, median of %d runs; 64 keys, all cached; cores=%u\n", calls, repeat,
              std::thread::hardware_concurrency());
  std::printf("%-8s %14s %14s %14s %14s | %12s %12s\n", "threads", "python peer/s", "HostTensor/s", "at::Tensor/s",
              "array/s", "HostTensor x", "at::Tensor x");
  for (int threads : {1, 2, 16}) {
    const long per = calls / threads;
    std::vector<double> pys, hosts, tensors, arrays;
    for (int r = 0; r < repeat; ++r) {
      pys.push_back(run_peer(peer, threads, std::max(1000L, per / 10)));
      hosts.push_back(hits_per_second<HostTensorHook>(threads, per));
      tensors.push_back(hits_per_second<TensorHook>(threads, per / 4));
      arrays.push_back(hits_per_second<ArrayHook>(threads, per));
    }
    const double py = median(pys), host = median(hosts), tensor = median(tensors), array = median(arrays);
    std::printf("%-8d %14.0f %14.0f %14.0f %14.0f | %11.1fx %11.1fx\n", threads, py, host, tensor, array,
                py > 0 ? host / py : 0.0, py > 0 ? tensor / py : 0.0);
  }
  if (!std::filesystem::exists(peer)) std::printf("(python peer not found at %s: ratios not measured)\n", peer.c_str());
  std::printf(
      "x = hits/s over the python peer's, same run. HostTensor is refenc's artifact tensor (2 x int64,\n"
      "copied on hit); at::Tensor is the peer's artifact in LibTorch C++ (clone on hit).\n");
  for (int threads : {8, 16}) fan_out(threads, 2000);
  return 0;
}
