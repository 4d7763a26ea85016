// The calibration engine (profile/device/calibrator.hpp) driven by fake devices: the modelled shared
// device with known factors and spreads, which the engine must recover; the call schedule (warm-ups,
// reversed odd rounds, calls per level); and the modelled device a calibration describes. Latencies
// are returned by the fakes and time is the fakes' own clock, so nothing depends on this machine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>

#include "core/splitmix64.hpp"
#include "profile/device/calibrator.hpp"
#include "profile/device/modelled_device.hpp"
#include "profile/device/shared_device.hpp"

using namespace refenc::profile;

namespace {

/// A device that answers each call with its modelled latency at once, and a clock that advances by
/// the calls' latencies over the callers sharing the device (k callers finish k calls' worth of
/// latency per unit of time), summed in integer nanoseconds so that the order of calls changes nothing.
struct FakeDevice {
  FakeDevice(const std::vector<double>& lengths, std::vector<SlowdownLevel> levels, std::vector<BatchSlowdown> rows)
      : device({}, lengths, std::move(levels), std::move(rows)), lengths_s(lengths) {}

  SharedDevice device;
  std::vector<double> lengths_s;
  std::atomic<std::int64_t> now_ns{0};
  std::atomic<int> calls{0};

  /// Alone: 20 ms + 10 ms per second of reference for one; a batch of b costs 0.6 b + 0.4 singles.
  static double alone_ms(int batch, double length_s) {
    return (20 + 10 * length_s) * (batch == 1 ? 1.0 : 0.6 * batch + 0.4);
  }
  /// A call's standard normal: the same call, the same draw.
  static double z(const TimedCall& t) {
    std::uint64_t h = refenc::splitmix64(static_cast<std::uint64_t>(t.batch));
    for (std::uint64_t x : {static_cast<std::uint64_t>(t.length), static_cast<std::uint64_t>(t.slot),
                            static_cast<std::uint64_t>(t.callers), static_cast<std::uint64_t>(t.caller),
                            static_cast<std::uint64_t>(t.round + 1)})
      h = refenc::splitmix64(h ^ x);
    return standard_normal(h);
  }
  /// What SharedDevice::run gives a call while `callers` calls stay in flight.
  double operator()(const TimedCall& t) {
    const double length = lengths_s[t.length], sigma = device.spread(t.callers, t.batch);
    const double ms = alone_ms(t.batch, length) * device.slowdown(t.callers, length, t.batch) *
                      std::exp(sigma * std::clamp(z(t), -4.0, 4.0) - sigma * sigma / 2);
    now_ns += std::llround(ms * 1e6 / t.callers);
    ++calls;
    return ms;
  }
  double clock() const { return static_cast<double>(now_ns.load()) * 1e-9; }
};

}  // namespace

TEST_CASE("calibrating the modelled shared device recovers its times, factors and spreads") {
  const std::vector<double> lengths{2, 5, 10};
  const std::vector<SlowdownLevel> levels{
      {1, {1, 1, 1}, 0.05}, {2, {1.40, 1.20, 1.10}, 0.15}, {4, {2.50, 2.00, 1.80}, 0.20}};
  const std::vector<BatchSlowdown> batch_rows{{2, 2, {1.30, 1.20, 1.10}, 0.10}, {4, 2, {1.60, 1.35, 1.25}, 0.12}};
  FakeDevice fake(lengths, levels, batch_rows);
  CalibrationPlan plan{.batch_sizes = batch_sizes_up_to(4),
                       .lengths_s = lengths,
                       .repeats = 15,
                       .concurrency = {2, 4},
                       .batch_levels = {2}};
  Calibration c;
  int rounds = 0;
  measure_calibration(plan, std::ref(fake), c,
                      {.clock = [&] { return fake.clock(); },
                       .on_round =
                           [&](int r) {
                             CHECK(r == rounds);
                             ++rounds;
                           }});
  CHECK(rounds == 15);
  REQUIRE(c.batch_sizes == std::vector<int>{1, 2, 4});
  REQUIRE(c.lengths_s == lengths);

  // Times alone: the median of 15 draws of sigma 0.05 around the alone time.
  REQUIRE(c.time_ms.size() == 3);
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t l = 0; l < 3; ++l) {
      INFO("batch " << c.batch_sizes[b] << ", " << lengths[l] << " s");
      CHECK(c.time_ms[b][l] == Approx(FakeDevice::alone_ms(c.batch_sizes[b], lengths[l])).epsilon(0.03));
    }
  CHECK(c.overhead_ms == Approx(20).margin(2));
  CHECK(c.per_audio_second_ms == Approx(10).epsilon(0.05));

  // Latency under load: every factor within 5%, every spread within 15%, level 1 exactly 1.
  REQUIRE(c.sharing.slowdown.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const SlowdownLevel& got = c.sharing.slowdown[i];
    INFO("c" << got.concurrency);
    CHECK(got.concurrency == levels[i].concurrency);
    for (std::size_t l = 0; l < 3; ++l) CHECK(got.factor[l] == Approx(levels[i].factor[l]).epsilon(0.05));
    CHECK(got.spread == Approx(levels[i].spread).epsilon(0.15));
  }
  CHECK(c.sharing.slowdown[0].factor == std::vector<double>{1, 1, 1});
  REQUIRE(c.sharing.batch_slowdown.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const BatchSlowdown& got = c.sharing.batch_slowdown[i];
    INFO("b" << got.batch << " c" << got.concurrency);
    CHECK(got.batch == batch_rows[i].batch);
    CHECK(got.concurrency == 2);
    for (std::size_t l = 0; l < 3; ++l) CHECK(got.factor[l] == Approx(batch_rows[i].factor[l]).epsilon(0.05));
    CHECK(got.spread == Approx(batch_rows[i].spread).epsilon(0.15));
  }

  // Throughput: k callers of a length mix complete k / (the mix's mean factor, weighted by alone time).
  REQUIRE(c.sharing.capacity.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    double alone = 0, loaded = 0;
    for (std::size_t l = 0; l < 3; ++l) {
      alone += FakeDevice::alone_ms(1, lengths[l]);
      loaded += FakeDevice::alone_ms(1, lengths[l]) * levels[i].factor[l];
    }
    const int k = levels[i].concurrency;
    CHECK(c.sharing.capacity[i].first == k);
    CHECK(c.sharing.capacity[i].second == Approx(k * alone / loaded).epsilon(0.05));
  }
  CHECK(c.sharing.measured_concurrency == 4);
  CHECK(c.sharing.streams == std::lround(c.sharing.capacity.back().second));
  CHECK(c.sharing.stream_slowdown == Approx(c.sharing.streams / c.sharing.capacity.back().second));
  REQUIRE(c.assumptions.size() == 2);
  CHECK(c.assumptions[0].rfind("sharing: k concurrent callers of batch 1", 0) == 0);
  CHECK(c.assumptions[1].find("k in {2}") != std::string::npos);

  // The same fake, the same calibration (the draws are the calls' own).
  FakeDevice again(lengths, levels, batch_rows);
  Calibration d;
  measure_calibration(plan, std::ref(again), d, {.clock = [&] { return again.clock(); }});
  CHECK(d.time_ms == c.time_ms);
  CHECK(d.sharing.slowdown == c.sharing.slowdown);
  CHECK(d.sharing.batch_slowdown == c.sharing.batch_slowdown);
}

TEST_CASE("the engine's schedule: warm-ups, rounds over the grid with odd rounds reversed, calls per level") {
  std::mutex mutex;
  std::vector<TimedCall> seen;
  std::atomic<std::int64_t> now_ns{0};
  auto call = [&](const TimedCall& t) {
    std::lock_guard lock(mutex);
    seen.push_back(t);
    now_ns += 10'000'000 / t.callers;  // every call 10 ms
    return 10.0;
  };
  auto clock = [&] { return static_cast<double>(now_ns.load()) * 1e-9; };

  SECTION("grid only: no sharing measured, and the assumption says so") {
    Calibration c;
    measure_calibration({.batch_sizes = {1, 2}, .lengths_s = {1, 3}, .repeats = 2}, call, c, {.clock = clock});
    REQUIRE(seen.size() == 4 + 2 * 4);
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(seen[i].round == -1);
      CHECK(seen[i].batch == (i < 2 ? 1 : 2));
      CHECK(seen[i].length == i % 2);
    }
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(seen[4 + i].round == 0);
      CHECK(seen[4 + i].length == i % 2);  // round 0 in order
      CHECK(seen[8 + i].round == 1);
      CHECK(seen[8 + i].batch == (i < 2 ? 2 : 1));  // round 1 reversed
      CHECK(seen[8 + i].length == 1 - i % 2);
      CHECK(seen[8 + i].slot == 1);
    }
    CHECK(c.time_ms == std::vector<std::vector<double>>{{10, 10}, {10, 10}});
    CHECK(c.sharing.slowdown.empty());
    CHECK(c.sharing.capacity.empty());
    REQUIRE(c.assumptions.size() == 1);
    CHECK(c.assumptions[0].rfind("sharing not measured", 0) == 0);
  }
  SECTION("sharing: every length at least 8 calls per level and round, ratios of equal calls are 1") {
    Calibration c;
    measure_calibration({.batch_sizes = {1}, .lengths_s = {1, 2, 3}, .repeats = 1, .concurrency = {3}}, call, c,
                        {.clock = clock});
    std::map<std::pair<int, std::size_t>, int> per_level_length;
    int warmups = 0;
    for (const TimedCall& t : seen)
      if (t.round < 0)
        ++warmups;
      else
        ++per_level_length[{t.callers, t.length}];
    CHECK(warmups == 3 + 1 + 3);  // the grid's points, then one per caller of each level
    REQUIRE(per_level_length.size() == 6);
    for (const auto& [key, n] : per_level_length)
      CHECK(n - (key.first == 1 ? 1 : 0) >= 8);  // at one caller, less the round's grid call
    CHECK(per_level_length[{1, 0}] == 1 + 8);    // 8 rounds per caller alone
    CHECK(per_level_length[{3, 0}] == 3 * 3);    // ceil(8 / 3) rounds for each of 3 callers
    REQUIRE(c.sharing.slowdown.size() == 2);
    CHECK(c.sharing.slowdown[1].factor == std::vector<double>{1, 1, 1});
    CHECK(c.sharing.slowdown[1].spread == Approx(0).margin(1e-9));
    CHECK(c.sharing.capacity[1].second == Approx(3));  // three callers, no slowdown: three times the calls
    CHECK(c.sharing.streams == 3);
    CHECK(c.sharing.batch_slowdown.empty());
  }
}

TEST_CASE("the batch sizes and the batch levels a calibration measures") {
  CHECK(batch_sizes_up_to(1) == std::vector<int>{1});
  CHECK(batch_sizes_up_to(8) == std::vector<int>{1, 2, 4, 8});
  CHECK(batch_sizes_up_to(6) == std::vector<int>{1, 2, 4, 6});
  CHECK(batch_levels({2, 8}, {}, 2, 4) == std::vector<int>{2});   // min(cores, 8)
  CHECK(batch_levels({2, 8}, {}, 16, 4) == std::vector<int>{8});  // min(16, 8)
  CHECK(batch_levels({1}, {}, 1, 4) == std::vector<int>{2});      // at least 2
  CHECK(batch_levels({2, 8}, {4, 2, 4}, 2, 4) == std::vector<int>{2, 4});
  CHECK(batch_levels({2, 8}, {0}, 2, 4).empty());  // 0: none
  CHECK(batch_levels({}, {4}, 2, 4).empty());      // no sharing measured
  CHECK(batch_levels({2, 8}, {}, 2, 1).empty());   // batch 1 only
}

TEST_CASE("a call's standard normal keeps its values (splitmix64 from lib/core)") {
  CHECK(standard_normal(0) == -0.28657242699791463);
  CHECK(standard_normal(7) == -0.24441548882798719);
  CHECK(standard_normal(12345) == 1.9984610654803829);
}

TEST_CASE("the modelled device a calibration describes") {
  Calibration shared;
  shared.lengths_s = {2, 4};
  shared.context.cores = 2;
  shared.sharing.slowdown = {{1, {1, 1}, 0}, {2, {1.5, 1.2}, 0}};
  ModelledDevice cpu = make_modelled_device(shared);
  CHECK(cpu.shared);
  CHECK_FALSE(cpu.queue);
  CHECK(cpu.parallel == 2);
  Calibration gpu;
  gpu.sharing.streams = 3;
  ModelledDevice streams = make_modelled_device(gpu);
  CHECK(streams.queue);
  CHECK_FALSE(streams.shared);
  CHECK(streams.parallel == 3);
}
