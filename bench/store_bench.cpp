// bench_store: disk-tier and shared-tier hit latency of a 10 s Fish artifact against its encode time.
//
//   bench_store [--reads 2000] [--scales tiny,small] [--seconds 10] [--root DIR] [--json FILE]
//               [--shared-cache redis://127.0.0.1:6379 | local]      (or $REFENC_SHARED_CACHE)
//               [--idle-reads 40] [--idle-ms 300]
//
// For each fish-s2-pro scale: the median of 3 encode_one calls of a synthetic clip (after one
// warm-up; decode excluded), then the stored artifact (codes int16 [10, T]) written to a disk tier in
// a fresh root (default: a temporary folder, removed afterwards) and read back `reads` times through
// DiskTier::load (read, key and checksum verification, touch): p50, p95, p99 and mean, plus the
// caller-side copy (load_artifact) and the write (encode_entry + fsync + rename) for reference.
// With a shared cache, the same entry is written to Redis (under a prefix of its own, deleted
// afterwards) and read back `reads` times through RedisTier::load_or_lead, the leader's lookup the
// service makes (one script round trip, key and checksum verification): p50, p95, p99.
// Then the warm-shared hit as a replica sees it, at 1 and 8 threads: `reads` distinct keys in Redis,
// a fresh disk folder in front (TierChain), each key looked up once by the leader's lookup, so each is
// a disk miss, a shared hit and a fill of the disk. Two arms in the same run: the chain as it is (the
// disk read without its lock, Redis, the fill written behind the request) and write-through (the
// lookup as the chain made it before: the disk's lock, Redis, then the disk written, fsync included,
// before the request returns); after the write-behind arm every fill is checked on disk. Last, the
// write-behind hit after an idle gap, as the profile's warm-shared cells meet it (a client between
// requests waits out its synthesis): `idle-reads` lookups from 1 thread, each `idle-ms` after the
// previous one ended. Caches, branch predictors and TLBs have gone cold by then, which makes a hit
// several times slower than back to back.
// `--shared-cache local` starts a private redis-server on loopback for the run.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_support.hpp"
#include "encoders/encoder_hook.hpp"
#include "store/disk_tier.hpp"
#include "store/redis_tier.hpp"
#include "store/tier_chain.hpp"
#include "util/local_redis_server.hpp"

using namespace refenc;
using namespace refenc::encoders;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Summary {
  double p50 = 0, p95 = 0, p99 = 0, mean = 0;
};

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto pct = [&](double p) { return v[std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5))]; };
  s.p50 = pct(0.50), s.p95 = pct(0.95), s.p99 = pct(0.99);
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  return s;
}

fs::path fresh_folder(const char* stem) {
  std::string tmpl = (fs::temp_directory_path() / (std::string(stem) + "-XXXXXX")).string();
  return ::mkdtemp(tmpl.data());
}

/// Warm-shared hits: `count` distinct keys are put in Redis, then looked up once each from `threads`
/// threads through a TierChain over a fresh disk folder (write_behind) or through the same two tiers
/// with the disk written before the lookup returns (write-through). Latency of each lookup, seconds.
std::vector<double> warm_shared_hits(const std::string& url, const Artifact& stored, const ReferenceEncodeKey& key,
                                     int count, int threads, bool write_behind,
                                     std::chrono::milliseconds gap = std::chrono::milliseconds(0)) {
  const std::string prefix = fmt::format("bench-{}-{}-{}", ::getpid(), threads, write_behind ? "wb" : "wt");
  auto shared = store::open_redis_tier({.url = url, .prefix = prefix});
  std::vector<ReferenceEncodeKey> keys(static_cast<std::size_t>(count), key);
  for (int i = 0; i < count; ++i) {
    keys[i].input_key = fmt::format("{}-{}", key.input_key, i);
    shared->store(keys[i], stored);
  }
  const fs::path root = fresh_folder("refenc-chain-bench");
  auto disk = store::open_disk_tier({.root = root.string()});
  auto chain = std::make_shared<store::TierChain>(disk, shared);
  std::vector<double> latency(static_cast<std::size_t>(count));
  std::atomic<int> next{0}, wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int i; (i = next++) < count;) {
        const ReferenceEncodeKey& k = keys[i];
        if (gap.count() > 0) std::this_thread::sleep_for(gap);
        auto t0 = Clock::now();
        std::shared_ptr<const Artifact> got;
        if (write_behind) {
          got = chain->load_or_lead(k, std::chrono::seconds(1)).stored;
        } else {  // what the chain did before: disk lookup and lease, Redis, then the disk write
          TierLookup<Artifact> local = disk->load_or_lead(k, std::chrono::seconds(1));
          got = shared->load_or_lead(k, std::chrono::seconds(1)).stored;
          if (got) disk->store(k, *got);
        }
        latency[i] = since(t0);
        if (!got || !(*got == stored)) ++wrong;
      }
    });
  for (auto& t : pool) t.join();
  chain->flush();
  const std::uint64_t filled = disk->stats().disk_writes;
  shared->clear();
  chain.reset();
  disk.reset();
  std::error_code ec;
  fs::remove_all(root, ec);
  if (wrong > 0) throw std::runtime_error(fmt::format("{} wrong or missing shared reads", wrong.load()));
  if (filled != static_cast<std::uint64_t>(count))
    throw std::runtime_error(fmt::format("{} of {} shared hits reached the disk", filled, count));
  return latency;
}

}  // namespace

int main(int argc, char** argv) {
  int reads = 2000, idle_reads = 40, idle_ms = 300;
  double seconds = 10;
  std::string scales = "tiny,small", root, json_path;
  std::string shared_url = std::getenv(store::kSharedCacheEnv) ? std::getenv(store::kSharedCacheEnv) : "";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--reads")
      reads = std::stoi(next());
    else if (a == "--seconds")
      seconds = std::stod(next());
    else if (a == "--scales")
      scales = next();
    else if (a == "--root")
      root = next();
    else if (a == "--json")
      json_path = next();
    else if (a == "--shared-cache")
      shared_url = next();
    else if (a == "--idle-reads")
      idle_reads = std::stoi(next());
    else if (a == "--idle-ms")
      idle_ms = std::stoi(next());
    else {
      std::cerr << "usage: bench_store [--reads N] [--scales tiny,small] [--seconds S] [--root DIR] [--json FILE] "
                   "[--shared-cache URL] [--idle-reads N] [--idle-ms MS]\n";
      return 2;
    }
  }
  bool temp_root = root.empty();
  if (temp_root) {
    std::string tmpl = (fs::temp_directory_path() / "refenc-store-bench-XXXXXX").string();
    root = ::mkdtemp(tmpl.data());
  }
  std::unique_ptr<LocalRedisServer> local_redis;
  if (shared_url == "local") {
    local_redis = std::make_unique<LocalRedisServer>();
    shared_url = local_redis->url();
  }
  warm_up_torch();
  nlohmann::json report = {{"reads", reads}, {"seconds", seconds}, {"root", root}, {"scales", nlohmann::json::array()}};
  std::cout << fmt::format("disk tier at {} ({} reads per entry, {:.0f} s clip)\n", root, reads, seconds);
  std::cout << fmt::format("{:<6} {:>10} {:>16} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9}\n", "scale", "encode_ms",
                           "codes", "file_B", "hit_p50", "hit_p95", "hit_p99", "copy_p50", "write_p50", "speedup");
  for (const std::string& scale : bench::split_list(scales)) {
    auto hook = make_hook("fish-s2-pro", {.scale = scale});
    const int rate = hook->info().sample_rate;
    EncodeInput in = hook->normalize_input(
        {audio::ReferenceSource::from_bytes(bench::speech_wav(rate, static_cast<std::int64_t>(seconds * rate), 0)),
         ""});
    std::vector<double> encode_s;
    Artifact artifact = hook->encode_one(in);  // warm-up
    for (int r = 0; r < 3; ++r) {
      auto t0 = Clock::now();
      artifact = hook->encode_one(in);
      encode_s.push_back(since(t0));
    }
    const Summary enc = summarize(encode_s);
    const Artifact stored = hook->store_artifact(artifact);
    const ReferenceEncodeKey key = *hook->cache_key(in);

    auto tier = store::open_disk_tier({.root = root});
    if (!tier->enabled()) {
      std::cerr << "bench_store: disk tier disabled: " << tier->disabled_reason() << '\n';
      return 1;
    }
    std::vector<double> write_s, hit_s, copy_s;
    for (int r = 0; r < 20; ++r) {
      auto t0 = Clock::now();
      tier->store(key, stored);
      write_s.push_back(since(t0));
    }
    for (int r = 0; r < reads; ++r) {
      auto t0 = Clock::now();
      std::shared_ptr<const Artifact> got = tier->load(key);
      hit_s.push_back(since(t0));
      if (!got || !(*got == stored)) {
        std::cerr << "bench_store: wrong or missing read\n";
        return 1;
      }
      t0 = Clock::now();
      Artifact mine = hook->load_artifact(*got);
      copy_s.push_back(since(t0));
    }
    const Summary hit = summarize(hit_s), copy = summarize(copy_s), wr = summarize(write_s);
    const std::uint64_t file_bytes = fs::file_size(tier->entry_path(key));
    const std::string codes = stored.tensor("codes").describe();
    std::cout << fmt::format(
        "{:<6} {:>10.2f} {:>16} {:>9} {:>8.3f}ms {:>7.3f}ms {:>7.3f}ms {:>8.3f}ms {:>7.3f}ms {:>8.0f}x\n", scale,
        enc.p50 * 1e3, codes, file_bytes, hit.p50 * 1e3, hit.p95 * 1e3, hit.p99 * 1e3, copy.p50 * 1e3, wr.p50 * 1e3,
        enc.p50 / hit.p50);
    report["scales"].push_back(
        {{"scale", scale},
         {"encode_ms", {{"median", enc.p50 * 1e3}, {"runs", encode_s.size()}}},
         {"codes", codes},
         {"stored_bytes", stored.byte_size()},
         {"file_bytes", file_bytes},
         {"disk_hit_ms",
          {{"p50", hit.p50 * 1e3}, {"p95", hit.p95 * 1e3}, {"p99", hit.p99 * 1e3}, {"mean", hit.mean * 1e3}}},
         {"load_artifact_ms", {{"p50", copy.p50 * 1e3}, {"p95", copy.p95 * 1e3}}},
         {"write_ms", {{"p50", wr.p50 * 1e3}, {"p95", wr.p95 * 1e3}}},
         {"encode_over_hit", enc.p50 / hit.p50},
         {"goal_p50_under_1ms", hit.p50 < 1e-3}});
    tier->clear();

    if (shared_url.empty()) continue;
    auto shared = store::open_redis_tier({.url = shared_url, .prefix = "bench-" + std::to_string(::getpid())});
    std::vector<double> shared_write_s, shared_hit_s;
    for (int r = 0; r < 20; ++r) {
      auto t0 = Clock::now();
      shared->store(key, stored);
      shared_write_s.push_back(since(t0));
    }
    for (int r = 0; r < reads; ++r) {
      auto t0 = Clock::now();
      TierLookup<Artifact> got = shared->load_or_lead(key, std::chrono::seconds(1));
      shared_hit_s.push_back(since(t0));
      if (!got.stored || !(*got.stored == stored)) {
        std::cerr << "bench_store: shared cache " << shared->display() << ": wrong or missing read\n";
        return 1;
      }
    }
    shared->clear();
    const Summary sh = summarize(shared_hit_s), sw = summarize(shared_write_s);
    std::cout << fmt::format(
        "{:<6} shared {} hit p50 {:.3f} ms, p95 {:.3f} ms, p99 {:.3f} ms; write p50 {:.3f} ms; "
        "encode / shared hit {:.0f}x, shared hit / disk hit {:.1f}x\n",
        scale, shared->display(), sh.p50 * 1e3, sh.p95 * 1e3, sh.p99 * 1e3, sw.p50 * 1e3, enc.p50 / sh.p50,
        sh.p50 / hit.p50);
    report["scales"].back()["shared_hit_ms"] = {
        {"p50", sh.p50 * 1e3}, {"p95", sh.p95 * 1e3}, {"p99", sh.p99 * 1e3}, {"mean", sh.mean * 1e3}};
    report["scales"].back()["shared_write_ms"] = {{"p50", sw.p50 * 1e3}, {"p95", sw.p95 * 1e3}};

    for (int threads : {1, 8}) {
      const Summary wt = summarize(warm_shared_hits(shared_url, stored, key, reads, threads, false));
      const Summary wb = summarize(warm_shared_hits(shared_url, stored, key, reads, threads, true));
      std::cout << fmt::format(
          "{:<6} warm-shared hit, {} thread{}: write-behind p50 {:.3f} ms, p95 {:.3f} ms; write-through p50 {:.3f} "
          "ms, p95 {:.3f} ms; p50 ratio {:.1f}x\n",
          scale, threads, threads == 1 ? "" : "s", wb.p50 * 1e3, wb.p95 * 1e3, wt.p50 * 1e3, wt.p95 * 1e3,
          wt.p50 / wb.p50);
      report["scales"].back()["warm_shared_hit_ms"]["c" + std::to_string(threads)] = {
          {"write_behind", {{"p50", wb.p50 * 1e3}, {"p95", wb.p95 * 1e3}, {"mean", wb.mean * 1e3}}},
          {"write_through", {{"p50", wt.p50 * 1e3}, {"p95", wt.p95 * 1e3}, {"mean", wt.mean * 1e3}}},
          {"goal_p50_under_1ms", wb.p50 < 1e-3}};
    }
    if (idle_reads > 0) {
      const Summary idle = summarize(
          warm_shared_hits(shared_url, stored, key, idle_reads, 1, true, std::chrono::milliseconds(idle_ms)));
      std::cout << fmt::format("{:<6} warm-shared hit after {} ms idle, 1 thread: p50 {:.3f} ms, p95 {:.3f} ms ({} reads)\n",
                               scale, idle_ms, idle.p50 * 1e3, idle.p95 * 1e3, idle_reads);
      report["scales"].back()["warm_shared_hit_after_idle_ms"] = {
          {"idle_ms", idle_ms}, {"reads", idle_reads}, {"p50", idle.p50 * 1e3}, {"p95", idle.p95 * 1e3}};
    }
  }
  if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << '\n';
  if (temp_root) {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  return 0;
}
