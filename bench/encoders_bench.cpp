// bench_encoders: encode cost per model and scale on this machine, and Fish batch-of-8 vs 8 singles.
//
//   bench_encoders [--models fish-s2-pro,qwen3-tts,moss-tts-local] [--scales tiny,small] [--runs 5]
//                  [--threads N] [--seconds 10] [--batch-rounds 3] [--json FILE]
//
// Per model and scale: network build time, parameters, the median and min of `runs` encode_one calls
// of a synthetic clip of `seconds` (after one warm-up call; decode excluded), and the stored artifact
// bytes. For fish-s2-pro, 8 different clips: 8 sequential encode_one calls vs one encode_batch of the
// 8, `batch-rounds` times: throughput ratio and p95 latency of each.
//
// With --mixed-rounds N (fish-s2-pro): 8 clips of mixed lengths (2 each of 1/4, 1/2, 3/4 and all of
// `seconds`), each sent by its own caller thread at once, N rounds: M4a (8 concurrent single encodes)
// against M4b through the service's BatchCoalescer with 1 or --workers batch threads (default: the
// cores, matched compute), without and with length grouping (exact; at most 20% padding). Per arm:
// seconds per round, throughput relative to M4a, batches, padded fraction, parity with single encodes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <latch>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_support.hpp"
#include "core/batch_coalescer.hpp"
#include "encoders/encoder_hook.hpp"

using namespace refenc;
using namespace refenc::encoders;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double idx = p * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(idx)), hi = static_cast<std::size_t>(std::ceil(idx));
  return v[lo] + (v[hi] - v[lo]) * (idx - static_cast<double>(lo));
}

/// One arm of the mixed-length table: `clips` encoded `rounds` times, every clip by its own caller
/// thread at once (the cold-cache case at concurrency = clips), either singly (M4a) or through a
/// BatchCoalescer with `workers` batch threads and `grouping` (M4b). Returns seconds per round, the
/// mean padded fraction of the batches, and whether every artifact equals the single encode.
struct MixedArm {
  std::string name;
  bool batched = false;
  std::size_t workers = 1;
  BatchGrouping grouping;
};

struct MixedResult {
  double s_per_round = 0, padded = 0;
  std::uint64_t batches = 0;
  bool parity = true;
};

MixedResult run_mixed(ModelHook& hook, const std::vector<EncodeInput>& clips, const std::vector<Artifact>& singles,
                      const MixedArm& arm, int rounds) {
  MixedResult res;
  double total = 0;
  std::uint64_t units = 0, padded = 0;
  for (int r = 0; r < rounds; ++r) {
    BatchCoalescer<EncodeInput, Artifact> q(
        [&](std::span<const EncodeInput* const> xs) { return hook.encode_batch(xs); }, clips.size(),
        std::chrono::milliseconds(20), arm.workers, arm.grouping,
        [&](const EncodeInput& x) { return hook.batch_length(x); });
    std::vector<Artifact> out(clips.size());
    std::latch start(static_cast<std::ptrdiff_t>(clips.size()) + 1);
    std::vector<std::thread> callers;
    for (std::size_t i = 0; i < clips.size(); ++i)
      callers.emplace_back([&, i] {
        start.arrive_and_wait();
        if (arm.batched)
          out[i] = q.submit(clips[i]).value_or(Artifact{});
        else
          out[i] = hook.encode_one(clips[i]);
      });
    auto t0 = Clock::now();
    start.arrive_and_wait();
    for (auto& t : callers) t.join();
    total += since(t0);
    for (std::size_t i = 0; i < clips.size(); ++i)
      res.parity = res.parity && artifact_parity(out[i], singles[i]).identical;
    auto st = q.stats();
    res.batches += st.batches;
    units += st.length_units;
    padded += st.padded_units;
  }
  res.s_per_round = total / rounds;
  res.padded = units ? static_cast<double>(padded) / static_cast<double>(units) : 0;
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> model_names{"fish-s2-pro", "qwen3-tts", "moss-tts-local"}, scales{"tiny", "small"};
  int runs = 5, threads = 0, batch_rounds = 3, mixed_rounds = 0;
  std::size_t workers = std::max(1u, std::thread::hardware_concurrency());
  double seconds = 10;
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--models")
      model_names = bench::split_list(v);
    else if (a == "--scales")
      scales = bench::split_list(v);
    else if (a == "--runs")
      runs = std::stoi(v);
    else if (a == "--threads")
      threads = std::stoi(v);
    else if (a == "--seconds")
      seconds = std::stod(v);
    else if (a == "--batch-rounds")
      batch_rounds = std::stoi(v);
    else if (a == "--json")
      json_path = v;
    else if (a == "--mixed-rounds")
      mixed_rounds = std::stoi(v);
    else if (a == "--workers")
      workers = static_cast<std::size_t>(std::stoi(v));
    else {
      std::cerr << "unknown option " << a << '\n';
      return 2;
    }
  }
  warm_up_torch();
  nlohmann::json report = nlohmann::json::array();
  std::cout << "| model | scale | params | build s | encode median s | encode min s | x realtime | artifact | stored "
               "bytes |\n"
               "|---|---|---:|---:|---:|---:|---:|---|---:|\n";
  for (const std::string& name : model_names) {
    for (const std::string& scale : scales) {
      auto t0 = Clock::now();
      auto hook = make_hook(name, {.scale = scale, .threads = threads});
      const double build = since(t0);
      const int rate = hook->info().sample_rate;
      const auto n = static_cast<std::int64_t>(seconds * rate);
      EncodeInput in =
          hook->normalize_input({audio::ReferenceSource::from_bytes(bench::speech_wav(rate, n, 1)), "reference text"});
      Artifact art = hook->encode_one(in);  // warm-up
      std::vector<double> times;
      for (int r = 0; r < runs; ++r) {
        t0 = Clock::now();
        art = hook->encode_one(in);
        times.push_back(since(t0));
      }
      const double median = percentile(times, 0.5), best = *std::min_element(times.begin(), times.end());
      std::string shapes;
      for (const auto& [tn, t] : art.tensors) shapes += (shapes.empty() ? "" : " ") + tn + " " + t.describe();
      const std::size_t stored = hook->stored_bytes(hook->store_artifact(art));
      std::cout << fmt::format("| {} | {} | {} | {:.2f} | {:.4f} | {:.4f} | {:.1f} | {} | {} |\n", name, scale,
                               hook->config().parameters, build, median, best, seconds / median, shapes, stored)
                << std::flush;
      nlohmann::json row = {{"model", name},
                            {"scale", scale},
                            {"threads", torch_threads()},
                            {"parameters", hook->config().parameters},
                            {"build_s", build},
                            {"clip_s", seconds},
                            {"encode_s", times},
                            {"median_s", median},
                            {"min_s", best},
                            {"artifact", shapes},
                            {"stored_bytes", stored}};

      if (hook->can_encode_batch() && batch_rounds > 0) {
        std::vector<EncodeInput> clips;
        for (int v = 0; v < 8; ++v)
          clips.push_back(
              hook->normalize_input({audio::ReferenceSource::from_bytes(bench::speech_wav(rate, n, 10 + v)), ""}));
        std::vector<const EncodeInput*> ptrs;
        for (const auto& c : clips) ptrs.push_back(&c);
        std::vector<double> single_lat, batch_lat;
        double single_total = 0, batch_total = 0;
        bool parity = true;
        for (int r = 0; r < batch_rounds; ++r) {
          std::vector<Artifact> singles;
          auto s0 = Clock::now();
          for (const auto& c : clips) {
            auto c0 = Clock::now();
            singles.push_back(hook->encode_one(c));
            single_lat.push_back(since(c0));
          }
          single_total += since(s0);
          auto b0 = Clock::now();
          std::vector<Artifact> batch = hook->encode_batch(ptrs);
          const double bt = since(b0);
          batch_total += bt;
          for (int k = 0; k < 8; ++k) batch_lat.push_back(bt);
          for (int k = 0; k < 8; ++k) parity = parity && batch[k] == singles[k];
        }
        const double ratio = single_total / batch_total;
        std::cout << fmt::format(
                         "\nfish {} batch of 8 x {:.0f} s clips, {} rounds: 8 singles {:.3f} s/round, batch {:.3f} "
                         "s/round, throughput ratio {:.2f}x; p95 latency single {:.3f} s, batched {:.3f} s; "
                         "parity {}\n\n",
                         scale, seconds, batch_rounds, single_total / batch_rounds, batch_total / batch_rounds, ratio,
                         percentile(single_lat, 0.95), percentile(batch_lat, 0.95), parity ? "exact" : "BROKEN")
                  << std::flush;
        row["fish_batch"] = {{"rounds", batch_rounds},
                             {"singles_s_per_round", single_total / batch_rounds},
                             {"batch_s_per_round", batch_total / batch_rounds},
                             {"throughput_ratio", ratio},
                             {"p95_single_s", percentile(single_lat, 0.95)},
                             {"p95_batch_s", percentile(batch_lat, 0.95)},
                             {"parity", parity}};
      }
      if (hook->can_encode_batch() && mixed_rounds > 0) {
        std::vector<EncodeInput> clips;
        std::vector<Artifact> singles;
        for (int v = 0; v < 8; ++v) {
          const auto len = static_cast<std::int64_t>(static_cast<double>(n) * (1 + v / 2) / 4.0);
          clips.push_back(
              hook->normalize_input({audio::ReferenceSource::from_bytes(bench::speech_wav(rate, len, 20 + v)), ""}));
          singles.push_back(hook->encode_one(clips.back()));
        }
        using Mode = BatchGrouping::Mode;
        const std::vector<MixedArm> arms{
            {"M4a: 8 concurrent singles", false, 1, {}},
            {"M4b: 1 worker, any lengths", true, 1, {}},
            {"M4b: 1 worker, exact lengths", true, 1, {Mode::exact, 0}},
            {fmt::format("M4b: {} workers, exact lengths", workers), true, workers, {Mode::exact, 0}},
            {fmt::format("M4b: {} workers, <= 20% padding", workers), true, workers, {Mode::max_padding_waste, 0.2}},
        };
        std::cout << fmt::format(
            "\nfish {} mixed lengths (8 clips: 2 each of {:.1f}/{:.1f}/{:.1f}/{:.1f} s), {} rounds, "
            "{} intra-op threads:\n\n| arm | s/round | throughput vs M4a | batches/round | "
            "padded fraction | parity |\n|---|---:|---:|---:|---:|---|\n",
            scale, seconds / 4, seconds / 2, 3 * seconds / 4, seconds, mixed_rounds, torch_threads());
        nlohmann::json mixed = nlohmann::json::array();
        double base = 0;
        for (const MixedArm& arm : arms) {
          MixedResult m = run_mixed(*hook, clips, singles, arm, mixed_rounds);
          if (!arm.batched) base = m.s_per_round;
          std::cout << fmt::format("| {} | {:.3f} | {:.2f}x | {:.1f} | {:.2f} | {} |\n", arm.name, m.s_per_round,
                                   base / m.s_per_round, static_cast<double>(m.batches) / mixed_rounds, m.padded,
                                   m.parity ? "exact" : "DIFFERS")
                    << std::flush;
          mixed.push_back({{"arm", arm.name},
                           {"s_per_round", m.s_per_round},
                           {"throughput_vs_m4a", base / m.s_per_round},
                           {"batches", m.batches},
                           {"padded_fraction", m.padded},
                           {"parity", m.parity},
                           {"workers", arm.workers}});
        }
        row["fish_mixed"] = {{"rounds", mixed_rounds}, {"intra_op_threads", torch_threads()}, {"arms", mixed}};
      }
      report.push_back(row);
    }
  }
  std::cout << fmt::format("\nthreads: {} (LibTorch intra-op), clip {:.1f} s, runs {}\n", torch_threads(), seconds,
                           runs);
  if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << '\n';
  return 0;
}
