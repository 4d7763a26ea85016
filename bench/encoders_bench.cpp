// bench_encoders: encode cost per model and scale on this machine, and Fish batch-of-8 vs 8 singles.
//
//   bench_encoders [--models fish-s2-pro,qwen3-tts,moss-tts-local] [--scales tiny,small] [--runs 5]
//                  [--threads N] [--seconds 10] [--batch-rounds 3] [--json FILE]
//
// Per model and scale: network build time, parameters, the median and min of `runs` encode_one calls
// of a synthetic clip of `seconds` (after one warm-up call; decode excluded), and the stored artifact
// bytes. For fish-s2-pro, 8 different clips: 8 sequential encode_one calls vs one encode_batch of the
// 8, `batch-rounds` times: throughput ratio and p95 latency of each.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_support.hpp"
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

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> model_names{"fish-s2-pro", "qwen3-tts", "moss-tts-local"}, scales{"tiny", "small"};
  int runs = 5, threads = 0, batch_rounds = 3;
  double seconds = 10;
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--models") model_names = bench::split_list(v);
    else if (a == "--scales") scales = bench::split_list(v);
    else if (a == "--runs") runs = std::stoi(v);
    else if (a == "--threads") threads = std::stoi(v);
    else if (a == "--seconds") seconds = std::stod(v);
    else if (a == "--batch-rounds") batch_rounds = std::stoi(v);
    else if (a == "--json") json_path = v;
    else {
      std::cerr << "unknown option " << a << '\n';
      return 2;
    }
  }
  warm_up_torch();
  nlohmann::json report = nlohmann::json::array();
  std::cout << "| model | scale | params | build s | encode median s | encode min s | x realtime | artifact | stored bytes |\n"
               "|---|---|---:|---:|---:|---:|---:|---|---:|\n";
  for (const std::string& name : model_names) {
    for (const std::string& scale : scales) {
      auto t0 = Clock::now();
      auto hook = make_hook(name, {.scale = scale, .threads = threads});
      const double build = since(t0);
      const int rate = hook->info().sample_rate;
      const auto n = static_cast<std::int64_t>(seconds * rate);
      EncodeInput in = hook->normalize_input({audio::ReferenceSource::from_bytes(bench::speech_wav(rate, n, 1)), "reference text"});
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
      nlohmann::json row = {{"model", name},       {"scale", scale},   {"threads", torch_threads()},
                            {"parameters", hook->config().parameters}, {"build_s", build},
                            {"clip_s", seconds},   {"encode_s", times}, {"median_s", median},
                            {"min_s", best},       {"artifact", shapes}, {"stored_bytes", stored}};

      if (hook->can_encode_batch() && batch_rounds > 0) {
        std::vector<EncodeInput> clips;
        for (int v = 0; v < 8; ++v)
          clips.push_back(hook->normalize_input({audio::ReferenceSource::from_bytes(bench::speech_wav(rate, n, 10 + v)), ""}));
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
      report.push_back(row);
    }
  }
  std::cout << fmt::format("\nthreads: {} (LibTorch intra-op), clip {:.1f} s, runs {}\n", torch_threads(), seconds, runs);
  if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << '\n';
  return 0;
}
