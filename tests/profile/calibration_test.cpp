// Calibration files, the cost surface, the modelled device queue and the presets.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "profile/record/calibration.hpp"
#include "profile/record/record_json.hpp"
#include "profile/device/calibration_presets.hpp"
#include "profile/device/cost_surface.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/device/shared_device.hpp"
#include "util/source_dir.hpp"

#include <barrier>
#include <cmath>
#include <thread>

using namespace refenc::profile;
using nlohmann::json;

namespace {

Calibration grid() {
  Calibration c;
  c.name = "test-grid";
  c.model = "fish-s2-pro";
  c.origin = "measured";
  c.source = "unit test";
  c.context.host = "testhost";
  c.context.device = "cpu";
  c.context.device_name = "Test CPU";
  c.batch_sizes = {1, 2, 4};
  c.lengths_s = {2, 4};
  c.time_ms = {{100, 200}, {150, 300}, {250, 500}};
  c.overhead_ms = 0;
  c.per_audio_second_ms = 50;
  return c;
}

std::string parse_error(const json& j) {
  try {
    parse_calibration(j, "cal.json");
  } catch (const refenc::Error& e) {
    CHECK(e.kind() == refenc::ErrorKind::bad_input);
    return e.what();
  }
  return "no error";
}

struct TempDir {
  std::filesystem::path path;
  TempDir() : path(std::filesystem::temp_directory_path() / ("refenc_cal_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("a calibration file round-trips with its digest and evidence grade") {
  TempDir dir;
  Calibration c = grid();
  c.sharing = {2, 1.25, 8, 3.5};
  c.peak_memory_bytes = 123456;
  c.peak_memory_kind = "rss";
  c.assumptions = {"none"};
  const std::string path = (dir.path / "cal.json").string();
  save_calibration(c, path);
  Calibration back = load_calibration(path);
  CHECK(back.path == path);
  CHECK(back.sha256.size() == 64);
  CHECK(back.time_ms == c.time_ms);
  CHECK(back.batch_sizes == c.batch_sizes);
  CHECK(back.lengths_s == c.lengths_s);
  CHECK(back.sharing.streams == 2);
  CHECK(back.sharing.stream_slowdown == Approx(1.25));
  CHECK(back.peak_memory_bytes == 123456);
  CHECK(back.assumptions == c.assumptions);
  CHECK(back.evidence_grade() == "modelled device (calibration " + path + ", testhost, Test CPU)");
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("calibration errors name the file and the field") {
  json j = calibration_to_json(grid());
  CHECK(parse_error(j) == "no error");
  json k = j;
  k["schema_version"] = 2;
  CHECK(parse_error(k) == "cal.json: schema_version: unsupported version 2 (this build reads 1)");
  k = j;
  k["time_ms"].erase(2);
  CHECK(parse_error(k) == "cal.json: time_ms: expected 3 rows (one per batch size), got 2");
  k = j;
  k["time_ms"][1][0] = -1;
  CHECK(parse_error(k) == "cal.json: time_ms[1][0]: must be a positive number of milliseconds");
  k = j;
  k["batch_sizes"] = {2, 4, 8};
  CHECK(parse_error(k) == "cal.json: batch_sizes[0]: batch sizes must be integers ascending from 1");
  k = j;
  k["lengths_s"] = {4, 2};
  CHECK(parse_error(k) == "cal.json: lengths_s[1]: lengths must be positive and ascending");
  k = j;
  k["origin"] = "guessed";
  CHECK(parse_error(k) == "cal.json: origin: must be \"measured\" or \"published\"");
  k = j;
  k.erase("model");
  CHECK(parse_error(k) == "cal.json: model: missing");
  CHECK_THROWS_WITH(load_calibration("/nonexistent/cal.json"), "/nonexistent/cal.json: cannot read calibration file");
}

TEST_CASE("fit_line recovers a line") {
  auto [a, b] = fit_line({1, 2, 3}, {12, 14, 16});
  CHECK(a == Approx(10));
  CHECK(b == Approx(2));
  auto [c, d] = fit_line({5, 5}, {1, 3});
  CHECK(c == Approx(2));
  CHECK(d == 0);
}

TEST_CASE("the cost surface interpolates and extrapolates piecewise linearly") {
  CostSurface s(grid());
  CHECK(s.call_seconds(1, 2) == Approx(0.100));
  CHECK(s.call_seconds(4, 4) == Approx(0.500));
  CHECK(s.call_seconds(1, 3) == Approx(0.150));  // halfway between 2 s and 4 s
  CHECK(s.call_seconds(3, 2) == Approx(0.200));  // halfway between batch 2 and 4
  CHECK(s.call_seconds(1, 6) == Approx(0.300));  // beyond the lengths: the last segment's slope
  CHECK(s.call_seconds(1, 1) == Approx(0.050));  // below them: the first segment's
  CHECK(s.call_seconds(8, 2) == Approx(0.450));  // beyond the batches: +50 ms per item
  CHECK(s.call_seconds(0, 2) == Approx(0.100));  // batch below 1 counts as 1
  CHECK(s.call_seconds(1, -100) > 0);            // never below the floor
  Calibration c = grid();
  c.sharing.stream_slowdown = 1.5;
  CHECK(CostSurface(c).device_seconds(1, 2) == Approx(0.150));
}

TEST_CASE("a surface with one batch size or one length") {
  Calibration c = grid();
  c.batch_sizes = {1};
  c.time_ms = {{100, 200}};
  CostSurface single_batch(c);
  CHECK(single_batch.call_seconds(3, 2) == Approx(0.300));  // no batching gain assumed
  c = grid();
  c.lengths_s = {2};
  c.time_ms = {{100}, {150}, {250}};
  CostSurface single_length(c);
  CHECK(single_length.call_seconds(1, 4) == Approx(0.200));  // + 50 ms per second
  CHECK(single_length.call_seconds(2, 4) == Approx(0.300));  // scaled to the row
}

TEST_CASE("the shared device divides its capacity among the calls in flight") {
  SharedDevice cpu({{2, 1.6}, {8, 2.0}});  // (1, 1) implied
  CHECK(cpu.speed(1) == Approx(1.0));
  CHECK(cpu.speed(2) == Approx(0.8));
  CHECK(cpu.speed(5) == Approx(1.8 / 5));    // linear between 2 and 8
  CHECK(cpu.speed(16) == Approx(2.0 / 16));  // flat beyond the last point
  CHECK(cpu.speed(0) == Approx(1.0));
  CHECK(SharedDevice({}).speed(4) == Approx(0.25));  // no curve: one core's worth shared
  // Concurrent calls all finish, however they interleave (no timing asserted).
  std::barrier start(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      start.arrive_and_wait();
      cpu.run(0.001);
    });
  for (auto& t : threads) t.join();
  CHECK(cpu.calls() == 4);
  CHECK(cpu.run(0) >= 0);
}

TEST_CASE("a calibration's capacity curve is read and checked") {
  Calibration c = grid();
  c.sharing.capacity = {{1, 1.0}, {4, 1.7}};
  json j = calibration_to_json(c);
  CHECK(parse_calibration(j, "cal.json").sharing.capacity == c.sharing.capacity);
  j["sharing"]["capacity"] = json::parse("[[1, 1.0], [1, 2.0]]");
  CHECK(parse_error(j) ==
        "cal.json: sharing.capacity[1]: expected [concurrency, effective]: concurrency ascending "
        "from 1, effective > 0");
  j["sharing"]["capacity"] = json::parse("[[2, -1]]");
  CHECK(parse_error(j) ==
        "cal.json: sharing.capacity[0]: expected [concurrency, effective]: concurrency ascending "
        "from 1, effective > 0");
}

TEST_CASE("a calibration's slowdown table round-trips and is optional") {
  TempDir dir;
  Calibration c = grid();
  c.sharing.capacity = {{1, 1.0}, {4, 1.7}};
  c.sharing.slowdown = {{1, {1.0, 1.1}}, {4, {3.5, 2.25}}};
  const std::string path = (dir.path / "cal.json").string();
  save_calibration(c, path);
  Calibration back = load_calibration(path);
  CHECK(back.sharing.slowdown == c.sharing.slowdown);
  CHECK(back.sharing.capacity == c.sharing.capacity);
  CHECK(calibration_to_json(c)["sharing"]["slowdown"][1] ==
        json::parse(R"({"concurrency": 4, "factor": [3.5, 2.25]})"));
  // Files without it (older files, presets) read as before, and are written without the key.
  json old = calibration_to_json(grid());
  CHECK_FALSE(old["sharing"].contains("slowdown"));
  CHECK(old["schema_version"] == 1);
  CHECK(parse_calibration(old, "cal.json").sharing.slowdown.empty());
  for (const Calibration& p : calibration_presets()) CHECK(p.sharing.slowdown.empty());
}

TEST_CASE("slowdown errors name the level and the field") {
  Calibration c = grid();  // lengths_s {2, 4}
  c.sharing.slowdown = {{1, {1.0, 1.0}}, {4, {3.0, 2.0}}};
  const json j = calibration_to_json(c);
  CHECK(parse_error(j) == "no error");
  auto with = [&](const char* slowdown) {
    json k = j;
    k["sharing"]["slowdown"] = json::parse(slowdown);
    return parse_error(k);
  };
  CHECK(with("[]") == "no error");
  CHECK(with("{}") == "cal.json: sharing.slowdown: expected an array, got object");
  CHECK(with("[[4, [3, 2]]]") ==
        "cal.json: sharing.slowdown[0]: expected an object {\"concurrency\": k, \"factor\": [...]}");
  CHECK(with(R"([{"factor": [3, 2]}])") == "cal.json: sharing.slowdown[0].concurrency: missing");
  CHECK(with(R"([{"concurrency": 0, "factor": [3, 2]}])") ==
        "cal.json: sharing.slowdown[0].concurrency: must be 1..4096");
  CHECK(with(R"([{"concurrency": 2.5, "factor": [3, 2]}])") ==
        "cal.json: sharing.slowdown[0].concurrency: expected an integer, got number");
  CHECK(with(R"([{"concurrency": 4, "factor": [3, 2]}, {"concurrency": 4, "factor": [3, 2]}])") ==
        "cal.json: sharing.slowdown[1].concurrency: levels must be ascending and distinct");
  CHECK(with(R"([{"concurrency": 8, "factor": [3, 2]}, {"concurrency": 4, "factor": [3, 2]}])") ==
        "cal.json: sharing.slowdown[1].concurrency: levels must be ascending and distinct");
  CHECK(with(R"([{"concurrency": 4}])") == "cal.json: sharing.slowdown[0].factor: missing");
  CHECK(with(R"([{"concurrency": 4, "factor": [3, 2, 1]}])") ==
        "cal.json: sharing.slowdown[0].factor: expected 2 factors (one per length), got 3");
  CHECK(with(R"([{"concurrency": 4, "factor": 3}])") ==
        "cal.json: sharing.slowdown[0].factor: expected 2 factors (one per length)");
  CHECK(with(R"([{"concurrency": 4, "factor": [3, 0]}])") ==
        "cal.json: sharing.slowdown[0].factor[1]: must be a positive number");
  CHECK(with(R"([{"concurrency": 4, "factor": [-1, 2]}])") ==
        "cal.json: sharing.slowdown[0].factor[0]: must be a positive number");
  CHECK(with(R"([{"concurrency": 4, "factor": ["3", 2]}])") ==
        "cal.json: sharing.slowdown[0].factor[0]: must be a positive number");
}

TEST_CASE("the shared device's slowdown table interpolates in concurrency and length") {
  // Lengths 2 s and 4 s; measured at 4 and 8 calls in flight ((1, [1, 1]) implied).
  SharedDevice cpu({{4, 2.0}}, {2, 4}, {{4, {4.0, 2.0}}, {8, {8.0, 3.0}}});
  CHECK(cpu.slowdown(4, 2) == Approx(4.0));
  CHECK(cpu.slowdown(4, 4) == Approx(2.0));
  CHECK(cpu.slowdown(4, 3) == Approx(3.0));   // linear in length
  CHECK(cpu.slowdown(4, 1) == Approx(4.0));   // clamped below the lengths
  CHECK(cpu.slowdown(4, 10) == Approx(2.0));  // and above
  CHECK(cpu.slowdown(6, 2) == Approx(6.0));   // linear in n between levels
  CHECK(cpu.slowdown(6, 3) == Approx(4.25));  // both: halfway between 3.0 (c4) and 5.5 (c8)
  CHECK(cpu.slowdown(1, 2) == Approx(1.0));   // alone: 1 (not measured)
  CHECK(cpu.slowdown(0, 2) == Approx(1.0));
  CHECK(cpu.slowdown(2, 2) == Approx(2.0));   // between the implied (1, 1) and c4's 4
  CHECK(cpu.slowdown(32, 2) == Approx(8.0));  // flat beyond the last level
  CHECK(cpu.speed(4, 2) == Approx(0.25));
  CHECK(cpu.speed(8, 4) == Approx(1 / 3.0));
  // A measured level 1 is used as measured.
  SharedDevice measured_alone({}, {2, 4}, {{1, {1.2, 1.1}}, {4, {4.0, 2.0}}});
  CHECK(measured_alone.slowdown(1, 2) == Approx(1.2));
  CHECK(measured_alone.speed(1, 4) == Approx(1 / 1.1));
  // One length: the same factor at every length.
  SharedDevice one_length({}, {5}, {{4, {3.0}}});
  CHECK(one_length.slowdown(4, 1) == Approx(3.0));
  CHECK(one_length.slowdown(4, 50) == Approx(3.0));
}

TEST_CASE("a calibration's batch rows round-trip, are optional and name their errors") {
  TempDir dir;
  Calibration c = grid();  // batch sizes {1, 2, 4}, lengths {2, 4}
  c.sharing.slowdown = {{1, {1.0, 1.0}}, {2, {1.0, 1.05}}};
  c.sharing.batch_slowdown = {{2, 2, {1.1, 1.2}}, {4, 2, {1.3, 1.25}}, {4, 4, {2.5, 2.6}}};
  const std::string path = (dir.path / "cal.json").string();
  save_calibration(c, path);
  Calibration back = load_calibration(path);
  CHECK(back.sharing.batch_slowdown == c.sharing.batch_slowdown);
  CHECK(calibration_to_json(c)["sharing"]["batch_slowdown"][1] ==
        json::parse(R"({"batch": 4, "concurrency": 2, "factor": [1.3, 1.25]})"));
  CHECK_FALSE(calibration_to_json(grid())["sharing"].contains("batch_slowdown"));
  for (const Calibration& p : calibration_presets()) CHECK(p.sharing.batch_slowdown.empty());

  const json j = calibration_to_json(c);
  auto with = [&](const char* rows) {
    json k = j;
    k["sharing"]["batch_slowdown"] = json::parse(rows);
    return parse_error(k);
  };
  CHECK(with("[]") == "no error");
  CHECK(with("{}") == "cal.json: sharing.batch_slowdown: expected an array, got object");
  CHECK(with("[[2, 2, [1, 1]]]") ==
        "cal.json: sharing.batch_slowdown[0]: expected an object {\"batch\": b, \"concurrency\": k, "
        "\"factor\": [...]}");
  CHECK(with(R"([{"concurrency": 2, "factor": [1, 1]}])") == "cal.json: sharing.batch_slowdown[0].batch: missing");
  CHECK(with(R"([{"batch": 1, "concurrency": 2, "factor": [1, 1]}])") ==
        "cal.json: sharing.batch_slowdown[0].batch: must be one of batch_sizes, above 1");
  CHECK(with(R"([{"batch": 3, "concurrency": 2, "factor": [1, 1]}])") ==
        "cal.json: sharing.batch_slowdown[0].batch: must be one of batch_sizes, above 1");
  CHECK(with(R"([{"batch": 2, "concurrency": 1, "factor": [1, 1]}])") ==
        "cal.json: sharing.batch_slowdown[0].concurrency: must be 2..4096");
  CHECK(with(R"([{"batch": 2, "concurrency": 2, "factor": [1, 1, 1]}])") ==
        "cal.json: sharing.batch_slowdown[0].factor: expected 2 factors (one per length), got 3");
  CHECK(with(R"([{"batch": 2, "concurrency": 2, "factor": [1, 0]}])") ==
        "cal.json: sharing.batch_slowdown[0].factor[1]: must be a positive number");
  CHECK(
      with(R"([{"batch": 4, "concurrency": 2, "factor": [1, 1]}, {"batch": 2, "concurrency": 2, "factor": [1, 1]}])") ==
      "cal.json: sharing.batch_slowdown[1]: rows must be ascending by batch, then by concurrency, and distinct");
  CHECK(
      with(R"([{"batch": 2, "concurrency": 2, "factor": [1, 1]}, {"batch": 2, "concurrency": 2, "factor": [1, 1]}])") ==
      "cal.json: sharing.batch_slowdown[1]: rows must be ascending by batch, then by concurrency, and distinct");
  json no_single = j;
  no_single["sharing"].erase("slowdown");
  CHECK(parse_error(no_single) ==
        "cal.json: sharing.batch_slowdown: needs sharing.slowdown (the batch-1 rows) as well");
}

TEST_CASE("the shared device's batch rows interpolate in concurrency, batch size and length") {
  // Batch 1 measured at 2 and 4 in flight; batch 4 at 2 (and batch 8 at 2 and 4), lengths 2 s and 4 s.
  SharedDevice cpu({}, {2, 4}, {{2, {1.0, 1.0}}, {4, {2.0, 2.0}}, {8, {4.0, 4.0}}},
                   {{4, 2, {1.2, 1.4}}, {8, 2, {1.4, 1.6}}, {8, 4, {3.0, 3.2}}});
  CHECK(cpu.slowdown(2, 2, 4) == Approx(1.2));
  CHECK(cpu.slowdown(2, 3, 4) == Approx(1.3));            // linear in length
  CHECK(cpu.slowdown(1, 2, 4) == Approx(1.0));            // alone
  CHECK(cpu.slowdown(4, 2, 4) == Approx(2.4));            // beyond its last level: 1.2 x batch 1's 2 / 1
  CHECK(cpu.slowdown(8, 2, 4) == Approx(4.8));            // 1.2 x 4 / 1
  CHECK(cpu.slowdown(3, 2, 8) == Approx(2.2));            // between its levels 2 and 4
  CHECK(cpu.slowdown(8, 2, 8) == Approx(6.0));            // 3.0 x 4 / 2
  CHECK(cpu.slowdown(2, 2, 2) == Approx(1.0 + 0.2 / 3));  // a third of the way from batch 1 (1.0) to 4 (1.2)
  CHECK(cpu.slowdown(2, 2, 6) == Approx(1.3));            // between batch 4 and batch 8
  CHECK(cpu.slowdown(2, 2, 16) == Approx(1.4));           // above the largest: batch 8's
  CHECK(cpu.slowdown(2, 2, 1) == Approx(1.0));            // batch 1: its own table
  CHECK(cpu.speed(2, 4, 8) == Approx(1 / 1.6));
  // Without batch rows a batch call shares as a single one does.
  SharedDevice singles({}, {2, 4}, {{2, {1.0, 1.0}}, {4, {2.0, 2.0}}});
  CHECK(singles.slowdown(2, 2, 8) == Approx(1.0));
  CHECK(singles.slowdown(4, 3, 8) == Approx(2.0));
  // Batch rows without a batch-1 table, or of the wrong width, are not used.
  SharedDevice capacity_only({{2, 2.0}}, {2, 4}, {}, {{4, 2, {1.5, 1.5}}});
  CHECK(capacity_only.speed(2, 2, 4) == Approx(capacity_only.speed(2)));
  SharedDevice mismatched({}, {2, 4}, {{2, {1.0, 1.0}}}, {{4, 2, {1.5}}});
  CHECK(mismatched.slowdown(2, 2, 4) == Approx(1.0));
}

TEST_CASE("two batches in flight each last their alone time times their batch row's factor") {
  // Two batch-4 calls start together and stay in flight together: each should last 2.5x its alone
  // time by the batch row, where batch 1's table (1.0 at 2 in flight) would give 1x. Bounded below
  // (the device never finishes early); the batch effect is checked as a ratio.
  auto pair_ratio = [](SharedDevice& cpu, int batch) {
    const double alone = 0.100;
    std::barrier start(2);
    std::vector<double> elapsed(2);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i)
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        elapsed[static_cast<std::size_t>(i)] = cpu.run(alone, 3, batch);
      });
    for (auto& t : threads) t.join();
    return (elapsed[0] + elapsed[1]) / 2 / alone;
  };
  SharedDevice cpu({}, {2, 4}, {{2, {1.0, 1.0}}}, {{4, 2, {2.5, 2.5}}});
  const double batched = pair_ratio(cpu, 4), single = pair_ratio(cpu, 1);
  INFO("batch 4: " << batched << "x, batch 1: " << single << "x");
  CHECK(batched > 0.8 * 2.5);
  CHECK(single > 0.8 * 1.0);
  CHECK(batched > 1.6 * single);  // 2.5x in the model
}

TEST_CASE("a level's spread round-trips, is optional and is checked") {
  Calibration c = grid();  // batch sizes {1, 2, 4}, lengths {2, 4}
  c.sharing.slowdown = {{1, {1.0, 1.0}, 0.04}, {2, {1.1, 1.05}, 0.12}};
  c.sharing.batch_slowdown = {{4, 2, {1.2, 1.1}, 0.17}};
  const json j = calibration_to_json(c);
  CHECK(j["sharing"]["slowdown"][1]["spread"] == 0.12);
  CHECK(j["sharing"]["batch_slowdown"][0]["spread"] == 0.17);
  const Calibration back = parse_calibration(j, "cal.json");
  CHECK(back.sharing.slowdown == c.sharing.slowdown);
  CHECK(back.sharing.batch_slowdown == c.sharing.batch_slowdown);
  // Without it (older files): 0, and written without the key.
  c.sharing.slowdown[1].spread = 0;
  CHECK_FALSE(calibration_to_json(c)["sharing"]["slowdown"][1].contains("spread"));
  json bad = j;
  bad["sharing"]["slowdown"][1]["spread"] = -0.1;
  CHECK(parse_error(bad) == "cal.json: sharing.slowdown[1].spread: must be a number in [0, 3]");
  bad = j;
  bad["sharing"]["batch_slowdown"][0]["spread"] = "wide";
  CHECK(parse_error(bad) == "cal.json: sharing.batch_slowdown[0].spread: must be a number in [0, 3]");
}

TEST_CASE("the shared device's spread interpolates in concurrency and batch size") {
  SharedDevice none({}, {2, 4}, {{2, {1.1, 1.1}}});
  CHECK(none.spread(2) == 0);
  CHECK(SharedDevice({{2, 1.5}}).spread(2) == 0);
  SharedDevice cpu({}, {2, 4}, {{1, {1, 1}, 0.05}, {2, {1.1, 1.1}, 0.1}, {8, {4, 4}, 0.3}},
                   {{4, 2, {1.2, 1.2}, 0.2}, {4, 4, {2.0, 2.0}, 0.4}});
  CHECK(cpu.spread(1) == Approx(0.05));
  CHECK(cpu.spread(5) == Approx(0.2));   // linear in n between levels
  CHECK(cpu.spread(16) == Approx(0.3));  // flat beyond the last
  CHECK(cpu.spread(2, 4) == Approx(0.2));
  CHECK(cpu.spread(3, 4) == Approx(0.3));
  CHECK(cpu.spread(8, 4) == Approx(0.4));                 // flat beyond its last level
  CHECK(cpu.spread(1, 4) == Approx(0.05));                // alone: batch 1's
  CHECK(cpu.spread(2, 2) == Approx(0.1 + 0.1 / 3));       // linear between batch 1 and batch 4
  CHECK(cpu.spread(2, 8) == Approx(0.2));                 // above the largest size: the largest's
}

TEST_CASE("a call's standard normal is seeded and standard") {
  CHECK(standard_normal(42) == standard_normal(42));
  CHECK(standard_normal(42) != standard_normal(43));
  double sum = 0, sq = 0;
  constexpr int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double z = standard_normal(static_cast<std::uint64_t>(i));
    sum += z;
    sq += z * z;
  }
  CHECK(std::abs(sum / n) < 0.03);
  CHECK(std::sqrt(sq / n - (sum / n) * (sum / n)) == Approx(1).epsilon(0.03));
}

TEST_CASE("a call's draw of the spread scales its time by exp(sigma z - sigma^2 / 2)") {
  // Alone with a measured spread of 0.5: z = 2 lasts exp(0.875) = 2.4x its work, z = -2 exp(-1.125) =
  // 0.32x. Bounded below (the device never finishes early); the spread checked as a ratio.
  SharedDevice cpu({}, {2, 4}, {{1, {1, 1}, 0.5}, {2, {1.1, 1.1}, 0.5}});
  const double slow = cpu.run(0.1, 3, 1, 2), fast = cpu.run(0.1, 3, 1, -2);
  INFO("z = 2: " << slow << " s, z = -2: " << fast << " s");
  CHECK(slow > 0.8 * 0.24);
  CHECK(fast > 0.8 * 0.032);
  CHECK(slow > 4 * fast);  // 7.4x in the model
  CHECK(cpu.run(0.05, 3, 1, 0) > 0.8 * 0.05 * std::exp(-0.125));
  // z is clamped to [-4, 4]: z = 40 lasts as z = 4 (exp(1.875) = 6.5x), not exp(19.9)x.
  CHECK(cpu.run(0.02, 3, 1, 40) < 60 * 0.02);
}

TEST_CASE("without a slowdown table the shared device shares by its capacity curve, whatever the length") {
  const std::vector<std::pair<int, double>> curve{{2, 1.6}, {8, 2.0}};
  SharedDevice plain(curve);
  SharedDevice with_lengths(curve, {2, 4}, {});
  SharedDevice mismatched(curve, {2, 4}, {{4, {3.0}}});  // a level of the wrong width is not used
  for (int n : {1, 2, 5, 16})
    for (double length : {0.0, 1.0, 3.0, 100.0}) {
      CHECK(plain.speed(n, length) == Approx(plain.speed(n)));
      CHECK(with_lengths.speed(n, length) == Approx(plain.speed(n)));
      CHECK(mismatched.speed(n, length) == Approx(plain.speed(n)));
      CHECK(plain.slowdown(n, length) == 1);
    }
}

TEST_CASE("with k calls in flight, a call lasts its alone time times its length's slowdown") {
  // Four calls of the same length start together and stay in flight together (equal work, equal
  // speed), so each should last alone x slowdown(4, L). Short calls are slowed 6x, long ones 1.5x, the
  // way fixed per-call costs dominate under contention; the capacity curve alone (2 calls' worth of
  // work from 4) would slow both 2x. Times are only bounded below (the device never finishes early);
  // the length dependence is checked as a ratio, which oversleeping on a busy host only widens.
  constexpr int k = 4;
  auto mean_ratio = [&](SharedDevice& cpu, double alone, double length) {
    std::barrier start(k);
    std::vector<double> elapsed(k);
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i)
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        elapsed[static_cast<std::size_t>(i)] = cpu.run(alone, length);
      });
    for (auto& t : threads) t.join();
    double sum = 0;
    for (double e : elapsed) sum += e;
    return sum / k / alone;
  };
  const double short_alone = 0.040, long_alone = 0.160;  // 1 s and 4 s references
  SharedDevice loaded({{k, 2.0}}, {1, 4}, {{k, {6.0, 1.5}}});
  const double short_ratio = mean_ratio(loaded, short_alone, 1);
  const double long_ratio = mean_ratio(loaded, long_alone, 4);
  INFO("slowdown: 1 s calls " << short_ratio << "x, 4 s calls " << long_ratio << "x");
  CHECK(short_ratio > 0.8 * 6.0);
  CHECK(long_ratio > 0.8 * 1.5);
  CHECK(short_ratio > 2.5 * long_ratio);  // 4x in the model
  SharedDevice shared({{k, 2.0}}, {1, 4}, {});
  const double short_shared = mean_ratio(shared, short_alone, 1);
  const double long_shared = mean_ratio(shared, long_alone, 4);
  INFO("capacity only: 1 s calls " << short_shared << "x, 4 s calls " << long_shared << "x");
  CHECK(short_shared > 0.8 * 2.0);
  CHECK(long_shared > 0.8 * 2.0);
  CHECK(loaded.calls() == 2 * k);
}

TEST_CASE("presets cite their source, state assumptions and parse as files") {
  REQUIRE(calibration_presets().size() >= 5);
  for (const Calibration& p : calibration_presets()) {
    INFO(p.name);
    CHECK(p.origin == "published");
    CHECK_FALSE(p.source.empty());
    CHECK_FALSE(p.assumptions.empty());
    Calibration back = parse_calibration(calibration_to_json(p), p.name);
    CHECK(back.time_ms == p.time_ms);
  }
  CostSurface qwen(*find_calibration_preset("qwen3-tts-gpu"));
  CHECK(qwen.call_seconds(1, 10) == Approx(0.010));
  CostSurface moss(*find_calibration_preset("moss-tts-local-gpu"));
  CHECK(moss.call_seconds(1, 10) == Approx(0.250));
  CHECK(CostSurface(*find_calibration_preset("fish-s2-pro-cpu")).call_seconds(1, 10) == Approx(0.900));
  CHECK(CostSurface(*find_calibration_preset("moss-tts-local-cpu")).call_seconds(1, 10) == Approx(1.5));
  CHECK(find_calibration_preset("nope") == nullptr);
  CHECK_THROWS_WITH(resolve_calibration("nope", "/tmp"),
                    Catch::StartsWith("calibration 'nope': neither a preset (qwen3-tts-gpu, "));
  SynthesisSpec s = synthesis_preset("fish-s2-pro-h200");
  CHECK(s.source.find("sglang-omni PR #996") != std::string::npos);
  CHECK_THROWS_WITH(synthesis_preset("x"), "synthesis preset 'x': unknown (known: fish-s2-pro-h200)");
}

TEST_CASE("the synthesis preset reproduces its published calibration points") {
  // 10 s of audio (125 tokens), engine occupancy 2.6 at c=8 and 6.6 at c=16 (see the preset's source).
  SynthesisSpec s = synthesis_preset("fish-s2-pro-h200");
  const int steps = static_cast<int>(std::ceil(125 * s.audio_seconds_per_text_token * s.steps_per_audio_second));
  auto synth_s = [&](double active) {
    return (s.prefill_base_ms + steps * (s.step_base_ms + s.step_per_active_ms * (active - 1))) / 1000;
  };
  CHECK(synth_s(2.6) == Approx(12.14 - 8.257).epsilon(0.03));
  CHECK(synth_s(6.6) == Approx(14.30 - 8.407).epsilon(0.03));
}

TEST_CASE("manifests give an encoder a modelled device and synthesis a preset") {
  const std::string path = std::string(refenc::source_dir()) + "/workloads/test.json";
  json j = json::parse(R"({
    "schema_version": 1, "name": "t",
    "models": [{"name": "qwen3-tts", "encoder": {"device": "modelled", "calibration": "qwen3-tts-gpu"},
                "synthesis": {"preset": "fish-s2-pro-h200"}}],
    "references": {"clips": ["clips/en-m-16k.flac"], "variants": 8},
    "texts": ["hello"], "phases": [{"kind": "cold", "requests": 2}], "arms": [{"name": "m4a"}]
  })");
  Manifest m = parse_manifest(j, path);
  CHECK(m.models[0].encoder.device == "modelled");
  CHECK(m.models[0].encoder.calibration == "qwen3-tts-gpu");
  CHECK(m.models[0].synthesis.step_base_ms == Approx(14.0));
  auto error = [&](const json& k) {
    try {
      parse_manifest(k, path);
    } catch (const refenc::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json k = j;
  k["models"][0]["encoder"].erase("calibration");
  CHECK(error(k) ==
        path + ": models[0].encoder.device: device \"modelled\" needs a \"calibration\" (a preset name or a file)");
  k = j;
  k["models"][0]["encoder"]["device"] = "cpu";
  CHECK(error(k) ==
        path +
            ": models[0].encoder.calibration: a calibration is read only with device \"modelled\" (device is \"cpu\")");
  k = j;
  k["models"][0]["encoder"]["calibration"] = "missing.json";
  CHECK_THAT(error(k),
             Catch::StartsWith(path + ": models[0].encoder.calibration: calibration 'missing.json': neither a preset"));
  k = j;
  k["models"][0]["encoder"]["calibration"] = "fish-s2-pro-cpu";
  CHECK(error(k) ==
        path + ": models[0].encoder.calibration: calibration 'fish-s2-pro-cpu' is for fish-s2-pro, not qwen3-tts");
  k = j;
  k["models"][0]["synthesis"]["preset"] = "nope";
  CHECK(error(k) == path + ": models[0].synthesis.preset: synthesis preset 'nope': unknown (known: fish-s2-pro-h200)");
  k = j;
  k["models"][0]["synthesis"]["step_base_ms"] = 3;
  CHECK(error(k) == path + ": models[0].synthesis.step_base_ms: unknown field");
}

TEST_CASE("a model's calibration survives the report's JSON") {
  ModelEntry m;
  m.name = "qwen3-tts";
  m.encoder.device = "modelled";
  m.encoder.calibration = "qwen3-tts-gpu";
  m.calibration = CalibrationRef{"qwen3-tts-gpu", "", "", "published", "published", "H200", "sglang-omni PR #2172"};
  RunRecord run;
  run.models.push_back(m);
  RunRecord back = run_from_json(to_json(run), "report.json");
  REQUIRE(back.models.size() == 1);
  REQUIRE(back.models[0].calibration);
  CHECK(back.models[0].calibration->source == "sglang-omni PR #2172");
  CHECK(back.models[0].encoder.calibration == "qwen3-tts-gpu");
  back.models[0].calibration.reset();
  RunRecord old = run_from_json(to_json(back), "report.json");
  CHECK_FALSE(old.models[0].calibration);
}
