#include <catch2/catch.hpp>

#include <random>

#include "core/error.hpp"
#include "profile/record/record_json.hpp"
#include "profile/device/synthesis_model.hpp"
#include "profile/telemetry/telemetry.hpp"
#include "profile/stats/bootstrap.hpp"
#include "profile/stats/percentile.hpp"
#include "profile/stats/throughput.hpp"

using namespace refenc::profile;

TEST_CASE("nearest-rank percentiles of known vectors") {
  std::vector<double> v{35, 20, 15, 50, 40};  // the classic nearest-rank example, unsorted
  CHECK(percentile(v, 0) == 15);
  CHECK(percentile(v, 5) == 15);
  CHECK(percentile(v, 30) == 20);
  CHECK(percentile(v, 40) == 20);
  CHECK(percentile(v, 50) == 35);
  CHECK(percentile(v, 100) == 50);
  std::vector<double> h(100);
  for (int i = 0; i < 100; ++i) h[static_cast<std::size_t>(i)] = i + 1;
  CHECK(percentile(h, 90) == 90);
  CHECK(percentile(h, 95) == 95);
  CHECK(percentile(h, 99) == 99);
  std::vector<double> t(20);
  for (int i = 0; i < 20; ++i) t[static_cast<std::size_t>(i)] = i + 1;
  CHECK(percentile(t, 95) == 19);  // rank ceil(0.95 * 20) = 19, despite floating-point rounding
  Summary s = summarize(h);
  CHECK(s.count == 100);
  CHECK(s.mean == Approx(50.5));
  CHECK(s.p50 == 50);
  CHECK(s.max == 100);
  CHECK(samples_needed(99) == 100);
  CHECK_THROWS_AS(percentile(std::vector<double>{}, 50), refenc::Error);
  CHECK_THROWS_AS(percentile(v, 101), refenc::Error);
}

TEST_CASE("the bootstrap is seeded and reproducible") {
  std::vector<double> a(60), b(60);
  std::mt19937_64 g(3);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = 1.0 + static_cast<double>(g() % 1000) / 1000.0;
    b[i] = 0.5 * a[i];
  }
  auto stat = [](std::span<const double> x, std::span<const double> y) {
    return 1.0 - percentile(y, 95) / percentile(x, 95);
  };
  Interval i1 = bootstrap_pair(a, b, stat, {.resamples = 500, .seed = 11});
  Interval i2 = bootstrap_pair(a, b, stat, {.resamples = 500, .seed = 11});
  Interval i3 = bootstrap_pair(a, b, stat, {.resamples = 500, .seed = 12});
  CHECK(i1.point == Approx(0.5));
  CHECK(i1.lo == i2.lo);
  CHECK(i1.hi == i2.hi);
  CHECK((i1.lo != i3.lo || i1.hi != i3.hi));
  CHECK(i1.lo <= i1.point);
  CHECK(i1.hi >= i1.point);
  // A constant sample has a degenerate interval.
  std::vector<double> c(30, 2.0);
  Interval ic =
      bootstrap_one(c, [](std::span<const double> x) { return percentile(x, 95); }, {.resamples = 200, .seed = 1});
  CHECK(ic.lo == 2.0);
  CHECK(ic.hi == 2.0);
  // The index stream is std::mt19937_64's, whose 10000th output the standard fixes.
  std::mt19937_64 rng(5489u);
  rng.discard(9999);
  CHECK(rng() == 9981545732273789042ULL);
  // Resampling draws source[rng() % n]: pinned against the same generator.
  std::vector<double> src{10, 20, 30};
  std::mt19937_64 r1(42), r2(42);
  std::vector<double> out;
  resample_into(src, r1, out);
  for (double x : out) CHECK(x == src[r2() % 3]);
  CHECK_THROWS_AS(bootstrap_pair({}, b, stat, {}), refenc::Error);
}

TEST_CASE("synthesis model: steps, first audio and a step time that grows with active requests") {
  SynthesisSpec s;
  s.source = "test";
  s.prefill_base_ms = 10;
  s.prefill_per_ref_frame_ms = 1;
  s.prefill_per_text_token_ms = 0;
  s.step_base_ms = 20;
  s.step_per_active_ms = 5;
  s.steps_to_first_audio = 3;
  s.steps_per_audio_second = 10;
  s.audio_seconds_per_text_token = 0.1;
  s.chars_per_text_token = 4;
  SynthesisModel m(s, /*sleep=*/false);
  CHECK(m.text_tokens("abcdefgh") == 2);
  CHECK(m.text_tokens("") == 1);
  SynthesisTiming t = m.run(/*ref_frames=*/10, /*text_tokens=*/20);  // 2 s of audio -> 20 steps
  CHECK(t.steps == 20);
  CHECK(t.prefill_s == Approx(0.020));
  CHECK(t.first_audio_s == Approx(0.020 + 3 * 0.020));
  CHECK(t.end_s == Approx(0.020 + 20 * 0.020));
  CHECK(t.audio_seconds == Approx(2.0));
  CHECK(m.active() == 0);
}

TEST_CASE("telemetry without a GPU says why and still measures the CPU") {
  GpuProbe probe("libnvidia-ml-absent-for-tests.so.1");
  CHECK_FALSE(probe.available());
  CHECK(probe.reason().find("NVML not loadable") != std::string::npos);
  TelemetrySampler sampler(std::chrono::milliseconds(5), "libnvidia-ml-absent-for-tests.so.1");
  volatile double x = 0;
  for (int i = 0; i < 2000000; ++i) x = x + i * 0.5;
  TelemetrySummary t = sampler.stop();
  CHECK_FALSE(t.gpu.available);
  CHECK_FALSE(t.gpu.reason.empty());
  CHECK(t.cpu.available);
  CHECK(t.cpu.cores >= 1);
  CHECK(t.cpu.process_mean >= 0);
  auto j = to_json(t);
  CHECK(j["gpu"]["available"] == false);
  CHECK(j["gpu"].contains("reason"));
  double sec = 0;
  CHECK(process_cpu_seconds(sec));
}
