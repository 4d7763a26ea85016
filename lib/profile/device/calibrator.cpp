#include "profile/device/calibrator.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>

#include <fmt/format.h>

namespace refenc::profile {
namespace {

/// The upper median (the middle element of an odd count, the upper of the two middle ones else).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string list(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

/// One level of one round: calls/s, and per length the mean latency and the log spread.
struct Level {
  double calls_per_s = 0;
  std::vector<double> mean_ms;  ///< Per length.
  double log_ss = 0;            ///< Sum over lengths of the squared deviations of ln(ms) from their length's mean.
  std::size_t log_dof = 0;      ///< Its degrees of freedom: calls minus lengths with a call.
};

/// A sharing series: calls of `batch` at `levels` concurrent callers (1 first), every level once per
/// round (odd rounds in reverse).
struct Series {
  int batch = 1;
  std::vector<int> levels;
  int (*rounds_for)(int k) = nullptr;                   ///< Rounds per caller at level k.
  std::vector<std::vector<double>> capacity;            ///< Per level: calls/s over one caller's, per round.
  std::vector<std::vector<std::vector<double>>> ratio;  ///< Per level and length: mean latency over one caller's.
  std::vector<double> top_calls_per_s;                  ///< The last level's calls/s, per round.
  std::vector<double> log_ss;                           ///< Per level: Level::log_ss summed over rounds.
  std::vector<std::size_t> log_dof;                     ///< Per level: Level::log_dof summed over rounds.

  Series(int b, std::vector<int> ks, int (*rounds)(int), std::size_t lengths)
      : batch(b), levels(std::move(ks)), rounds_for(rounds) {
    capacity.resize(levels.size());
    log_ss.assign(levels.size(), 0);
    log_dof.assign(levels.size(), 0);
    ratio.assign(levels.size(), std::vector<std::vector<double>>(lengths));
  }
  /// Level i's spread: the pooled standard deviation of ln latency within a length and round.
  double spread(std::size_t i) const { return log_dof[i] ? std::sqrt(log_ss[i] / static_cast<double>(log_dof[i])) : 0; }
  /// Level i's factors: the median over rounds of each length's ratio (exactly 1 at one caller).
  std::vector<double> factors(std::size_t i) const {
    std::vector<double> f;
    for (const auto& r : ratio[i]) f.push_back(i == 0 ? 1.0 : median(r));
    return f;
  }
};

class Engine {
 public:
  Engine(const CalibrationPlan& plan, const TimeCall& call, const std::function<double()>& clock)
      : plan_(plan), call_(call), clock_(clock), nl_(plan.lengths_s.size()) {}

  /// k concurrent callers of `batch`, each cycling through every length (caller i starts at length i
  /// mod N, so the lengths in flight stay evenly mixed): calls/s, and each length's mean latency.
  /// Caller i's n-th call starts at clip slot `slot` + i + n / N, so the content moves on with every
  /// round, caller and pass.
  Level measure(int k, int batch, int rounds, std::size_t slot, int round) const {
    std::vector<std::vector<std::vector<double>>> ms(static_cast<std::size_t>(k),
                                                     std::vector<std::vector<double>>(nl_));
    double t0 = 0;
    std::barrier start(k + 1, [&]() noexcept { t0 = clock_(); });  // all warmed up: the level starts
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i)
      threads.emplace_back([&, i] {
        call_({.batch = batch, .length = 0, .slot = 0, .callers = k, .caller = i});  // warm-up, shortest length
        start.arrive_and_wait();
        auto& mine = ms[static_cast<std::size_t>(i)];
        for (std::size_t n = 0; n < static_cast<std::size_t>(rounds) * nl_; ++n) {
          const std::size_t l = (static_cast<std::size_t>(i) + n) % nl_;
          mine[l].push_back(call_({.batch = batch,
                                   .length = l,
                                   .slot = slot + static_cast<std::size_t>(i) + n / nl_,
                                   .callers = k,
                                   .caller = i,
                                   .round = round}));
        }
      });
    start.arrive_and_wait();
    for (auto& t : threads) t.join();
    Level out;
    out.calls_per_s = static_cast<double>(k) * rounds * static_cast<double>(nl_) / (clock_() - t0);
    for (std::size_t l = 0; l < nl_; ++l) {
      double sum = 0, log_sum = 0;
      std::size_t count = 0;
      for (const auto& caller : ms) {
        for (double x : caller[l]) sum += x, log_sum += std::log(std::max(1e-3, x));
        count += caller[l].size();
      }
      out.mean_ms.push_back(std::max(1e-3, sum / static_cast<double>(std::max<std::size_t>(1, count))));
      if (count == 0) continue;
      const double mean_log = log_sum / static_cast<double>(count);
      for (const auto& caller : ms)
        for (double x : caller[l]) out.log_ss += std::pow(std::log(std::max(1e-3, x)) - mean_log, 2);
      out.log_dof += count - 1;
    }
    return out;
  }

  /// Every level of `s` once in round r (odd rounds in reverse), as ratios to its one-caller level.
  void sharing_round(Series& s, int r) const {
    const std::size_t nk = s.levels.size();
    std::vector<Level> m(nk);
    for (std::size_t j = 0; j < nk; ++j) {
      const std::size_t i = r % 2 ? nk - 1 - j : j;
      m[i] = measure(s.levels[i], s.batch, s.rounds_for(s.levels[i]), static_cast<std::size_t>(r), r);
    }
    for (std::size_t i = 0; i < nk; ++i) {
      s.capacity[i].push_back(m[i].calls_per_s / m[0].calls_per_s);
      for (std::size_t l = 0; l < nl_; ++l) s.ratio[i][l].push_back(m[i].mean_ms[l] / m[0].mean_ms[l]);
    }
    s.top_calls_per_s.push_back(m.back().calls_per_s);
    for (std::size_t i = 0; i < nk; ++i) {
      s.log_ss[i] += m[i].log_ss;
      s.log_dof[i] += m[i].log_dof;
    }
  }

  /// One call of grid point p (batch b = p / N, length p mod N) alone.
  double grid_call(std::size_t p, std::size_t slot, int round) const {
    return call_({.batch = plan_.batch_sizes[p / nl_], .length = p % nl_, .slot = slot, .round = round});
  }

 private:
  const CalibrationPlan& plan_;
  const TimeCall& call_;
  const std::function<double()>& clock_;
  std::size_t nl_;
};

}  // namespace

std::vector<int> batch_sizes_up_to(int max) {
  std::vector<int> b;
  for (int x = 1; x < max; x *= 2) b.push_back(x);
  b.push_back(max);
  return b;
}

std::vector<int> batch_levels(const std::vector<int>& concurrency, const std::vector<int>& batch_concurrency,
                              unsigned cores, std::size_t batch_sizes) {
  std::vector<int> levels;
  if (concurrency.empty() || batch_sizes <= 1) return levels;
  if (batch_concurrency.empty())
    levels.push_back(std::max(
        2, std::min(static_cast<int>(std::max(1u, cores)), *std::max_element(concurrency.begin(), concurrency.end()))));
  else if (batch_concurrency != std::vector<int>{0})
    levels = batch_concurrency;
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  return levels;
}

void measure_calibration(const CalibrationPlan& plan, const TimeCall& call, Calibration& c,
                         const CalibratorOptions& options) {
  const std::function<double()> clock = options.clock ? options.clock : [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  const Engine engine(plan, call, clock);
  c.batch_sizes = plan.batch_sizes;
  c.lengths_s = plan.lengths_s;
  const std::size_t nb = plan.batch_sizes.size(), nl = plan.lengths_s.size();

  // Batch 1 at 1 and every concurrency level: rounds per caller shrink as k grows (k callers give k
  // calls of each length per round), so the high levels stay short; every length still gets at least 8
  // calls per level and round (means of a noisy shared CPU need them), every caller at least 2 rounds.
  // Then each batch size above 1 at one caller and the batch levels, 2 rounds per caller.
  std::vector<Series> series;
  std::vector<int> levels_k{1};
  if (!plan.concurrency.empty()) {
    for (int k : plan.concurrency)
      if (k > 1) levels_k.push_back(k);
    std::sort(levels_k.begin(), levels_k.end());
    levels_k.erase(std::unique(levels_k.begin(), levels_k.end()), levels_k.end());
    series.emplace_back(
        1, levels_k, [](int k) { return std::max(2, (8 + k - 1) / k); }, nl);
    if (!plan.batch_levels.empty()) {
      std::vector<int> levels_b{1};
      levels_b.insert(levels_b.end(), plan.batch_levels.begin(), plan.batch_levels.end());
      for (std::size_t b = 1; b < nb; ++b)
        series.emplace_back(
            plan.batch_sizes[b], levels_b, [](int) { return 2; }, nl);
    }
  }

  // One warm-up call per grid point, then `repeats` rounds. Each round visits every grid point once
  // (odd rounds in reverse) and then runs every sharing series once. So a slow spell of the machine
  // costs each figure one sample of its median, and the times alone and the factors applied to them
  // span the same minutes: this VM drifts by 10-20% over minutes, and a grid measured in one minute
  // read its times alone 25% slower than another's minutes later, while factors measured apart from
  // the grid and divided by it took that drift in (one-caller factors read 0.90-1.20 that way).
  std::vector<std::vector<double>> samples(nb * nl);
  for (std::size_t p = 0; p < nb * nl; ++p) engine.grid_call(p, 0, -1);
  for (int r = 0; r < plan.repeats; ++r) {
    for (std::size_t i = 0; i < nb * nl; ++i) {
      const std::size_t p = r % 2 ? nb * nl - 1 - i : i;
      samples[p].push_back(engine.grid_call(p, static_cast<std::size_t>(r), r));
    }
    for (Series& s : series) engine.sharing_round(s, r);
    if (options.on_round) options.on_round(r);
  }
  c.time_ms.clear();
  for (std::size_t b = 0; b < nb; ++b) {
    std::vector<double> row;
    for (std::size_t l = 0; l < nl; ++l) row.push_back(std::max(1e-3, median(samples[b * nl + l])));
    c.time_ms.push_back(std::move(row));
  }
  auto [intercept, slope] = fit_line(plan.lengths_s, c.time_ms[0]);
  c.overhead_ms = std::max(0.0, intercept);
  c.per_audio_second_ms = slope;

  if (series.empty()) {
    c.assumptions.push_back(
        "sharing not measured (no --concurrency): one stream, calls at their alone time, no per-call spread");
    return;
  }
  const Series& single = series.front();
  c.sharing.capacity.clear();
  c.sharing.slowdown.clear();
  c.sharing.batch_slowdown.clear();
  for (std::size_t i = 0; i < levels_k.size(); ++i) {
    c.sharing.capacity.emplace_back(levels_k[i], i == 0 ? 1.0 : median(single.capacity[i]));
    c.sharing.slowdown.push_back({levels_k[i], single.factors(i), single.spread(i)});
  }
  c.sharing.measured_concurrency = levels_k.back();
  c.sharing.throughput_per_s = median(single.top_calls_per_s);
  for (std::size_t s = 1; s < series.size(); ++s)
    for (std::size_t i = 1; i < series[s].levels.size(); ++i)
      c.sharing.batch_slowdown.push_back(
          {series[s].batch, series[s].levels[i], series[s].factors(i), series[s].spread(i)});
  const double effective = c.sharing.capacity.back().second;
  c.sharing.streams = std::max(1, static_cast<int>(std::lround(effective)));
  c.sharing.stream_slowdown = c.sharing.streams / effective;
  c.assumptions.push_back(fmt::format(
      "sharing: k concurrent callers of batch 1, each cycling through every length (caller i starting at "
      "length i mod {0}), every k once in each of the {1} rounds (after that round's grid calls; 1 first, odd "
      "rounds in reverse), max(2, ceil(8 / k)) rounds per caller after one warm-up call; capacity[k] = calls/s "
      "with k callers over calls/s with one, slowdown[k][l] = mean latency of the length-l calls with k callers "
      "over that with one, each the median over rounds of the ratio within a round (so 1 at k = 1); "
      "slowdown[k].spread = sqrt(sum of squared deviations of ln(latency) from the mean ln of the same length "
      "and round / (calls - lengths)), pooled over lengths and rounds; the modelled device runs a call of "
      "length L among n in flight at 1 / (slowdown(n, L) exp(spread z - spread^2 / 2)) of its alone speed, "
      "z the call's standard normal seeded by its content, time_ms (a batch: its longest reference, its alone "
      "time from the grid)",
      nl, plan.repeats));
  if (!plan.batch_levels.empty())
    c.assumptions.push_back(fmt::format(
        "batches under load: for each batch size b above 1, in each round, one caller and k in {{{0}}} "
        "concurrent callers of batch b, cycling through the lengths as above, 2 rounds per caller; "
        "batch_slowdown[b, k][l] = the median over rounds of their mean latency at length l over one "
        "caller's in the same round (applied to time_ms[b][l]), and its spread as batch 1's; a batch call's "
        "factor comes from its size's rows (linear between sizes, batch 1's growth beyond the last k), its "
        "spread likewise (flat beyond the last k, batch 1's alone spread at n = 1)",
        list(plan.batch_levels)));
}

}  // namespace refenc::profile
