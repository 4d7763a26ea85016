// `refenc calibrate`: measures an encoder network's cost surface on this machine (time per call over
// batch sizes and reference lengths, the per-call overhead fit, how concurrent calls share the device,
// peak memory) and writes a calibration file that a modelled device reads; `--preset NAME` writes a
// published preset instead.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "audio/reference_loader.hpp"
#include "command.hpp"
#include "core/error.hpp"
#include "encoder_backend.hpp"
#include "encoders/encoder_hook.hpp"
#include "encoders/network.hpp"
#include "profile/run/calibration_presets.hpp"
#include "profile/run/run_context.hpp"

namespace refenc::cli {

namespace {

struct CalibrateOptions {
  std::string model;
  std::string scale = "tiny";
  std::string module_path;
  std::string device = "cpu";
  std::string dtype = "float32";
  int threads = 0;
  int batch_max = 8;
  std::vector<double> lengths{2, 5, 10};
  int repeats = 3;
  std::vector<int> concurrency;
  std::vector<int> batch_concurrency;  ///< Empty: min(cores, the largest --concurrency); {0}: none.
  std::vector<std::string> clips;
  std::string out;
  std::string name;
  std::string preset;
};

using Clock = std::chrono::steady_clock;

/// A deterministic test clip: a few partials plus seeded noise, at `rate`.
std::vector<float> synthetic_clip(double seconds, int rate, std::uint64_t seed) {
  std::vector<float> x(static_cast<std::size_t>(seconds * rate));
  std::uint64_t s = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < x.size(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double noise = static_cast<double>(s >> 40) / static_cast<double>(1ull << 24) - 0.5;
    double t = static_cast<double>(i) / rate;
    x[i] = static_cast<float>(0.3 * std::sin(2 * M_PI * 180 * t) + 0.1 * std::sin(2 * M_PI * 720 * t) + 0.05 * noise);
  }
  return x;
}

/// Peak resident set of this process (VmHWM), bytes; 0 when unreadable.
std::uint64_t peak_rss() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

/// `seconds` of audio at `rate` from `decoded`, starting with clip `first` and going on through the
/// next ones (cyclically) until it is long enough.
std::vector<float> clip_from(const std::vector<std::vector<float>>& decoded, std::size_t first, double seconds,
                             int rate) {
  std::vector<float> x(static_cast<std::size_t>(seconds * rate));
  std::size_t filled = 0;
  for (std::size_t c = first; filled < x.size(); ++c) {
    const std::vector<float>& from = decoded[c % decoded.size()];
    const std::size_t n = std::min(from.size(), x.size() - filled);
    std::copy_n(from.begin(), n, x.begin() + static_cast<std::ptrdiff_t>(filled));
    filled += n;
  }
  return x;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::vector<int> batch_sizes(int max) {
  std::vector<int> b;
  for (int x = 1; x < max; x *= 2) b.push_back(x);
  b.push_back(max);
  return b;
}

int write_preset(const CalibrateOptions& o) {
  const profile::Calibration* c = profile::find_calibration_preset(o.preset);
  if (!c) {
    std::string known;
    for (const auto& p : profile::calibration_presets()) known += (known.empty() ? "" : ", ") + p.name;
    throw Error(ErrorKind::bad_input, "--preset " + o.preset + ": unknown (known: " + known + ")");
  }
  profile::save_calibration(*c, o.out);
  std::cout << fmt::format("wrote {} (preset {}, {})\n", o.out, c->name, c->source);
  return 0;
}

int run(const CalibrateOptions& o) {
  if (o.out.empty()) throw Error(ErrorKind::bad_input, "--out: required (the calibration file to write)");
  if (!o.preset.empty()) return write_preset(o);
  if (o.model.empty()) throw Error(ErrorKind::bad_input, "--model: required (or --preset NAME)");
  if (o.batch_max < 1 || o.batch_max > 64) throw Error(ErrorKind::bad_input, "--batch-max: must be 1..64");
  if (o.repeats < 1 || o.repeats > 100) throw Error(ErrorKind::bad_input, "--repeats: must be 1..100");
  for (int k : o.concurrency)
    if (k < 1 || k > 256) throw Error(ErrorKind::bad_input, "--concurrency: each level must be 1..256");
  for (int k : o.batch_concurrency)
    if ((k < 2 || k > 256) && !(k == 0 && o.batch_concurrency.size() == 1))
      throw Error(ErrorKind::bad_input, "--batch-concurrency: each level must be 2..256 (or 0 alone: none)");
  std::vector<double> lengths = o.lengths;
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  if (lengths.empty() || lengths.front() <= 0 || lengths.back() > 600)
    throw Error(ErrorKind::bad_input, "--lengths: seconds in (0, 600]");

  const encoders::ModelInfo& info = encoders::model_info(o.model);
  encoders::EncoderOptions eo;
  eo.scale = o.scale;
  eo.dtype = o.dtype;
  eo.device = o.device;
  eo.module_path = o.module_path;
  eo.threads = o.threads;
  std::unique_ptr<encoders::Network> net = encoders::make_network(o.model, eo);
  // The content the network sees: the given clips decoded as the family's hook decodes them (real
  // speech has quiet stretches whose subnormal activations can cost a CPU far more than a steady tone).
  std::vector<std::vector<float>> decoded;
  std::string clip_names;
  for (const std::string& path : o.clips) {
    audio::LoadedReference r;
    try {
      r = audio::load_reference(audio::ReferenceSource::parse(path), encoders::reference_load_options(info));
    } catch (const Error& e) {
      throw Error(ErrorKind::bad_input, "--clips " + path + ": " + e.what());
    }
    if (r.samples.empty()) throw Error(ErrorKind::bad_input, "--clips " + path + ": no audio samples");
    decoded.push_back(std::move(r.samples));
    clip_names += (clip_names.empty() ? "" : ",") + path;
  }

  profile::Calibration c;
  c.model = info.name;
  c.origin = "measured";
  c.name = o.name.empty() ? fmt::format("{}-{}-{}", info.name, o.module_path.empty() ? o.scale : "module", o.device)
                          : o.name;
  profile::RunContext ctx = profile::make_context(profile::Manifest{});
  profile::LibraryContext lib = profile::torch_library_context();
  c.context.host = ctx.host;
  c.context.device = o.device;
  c.context.device_name = o.device == "cpu" ? ctx.cpu_model : o.device;
  c.context.libtorch = lib.version;
  const std::string& rev = net->config().model_revision;
  c.context.module_sha256 = rev.rfind("module:", 0) == 0 ? rev.substr(7) : "";
  c.context.scale = o.module_path.empty() ? o.scale : "";
  c.context.threads = encoders::torch_threads();
  c.context.date_utc = ctx.started_utc;
  c.batch_sizes = batch_sizes(o.batch_max);
  c.lengths_s = lengths;
  c.context.cores = static_cast<int>(ctx.cores);
  // Batches under load: min(cores, the largest --concurrency) callers by default, as many as M4b's
  // matched batch workers on this host at that concurrency.
  std::vector<int> batch_levels;
  if (!o.concurrency.empty() && c.batch_sizes.size() > 1) {
    if (o.batch_concurrency.empty())
      batch_levels.push_back(std::max(2, std::min(static_cast<int>(std::max(1u, ctx.cores)),
                                                  *std::max_element(o.concurrency.begin(), o.concurrency.end()))));
    else if (o.batch_concurrency != std::vector<int>{0})
      batch_levels = o.batch_concurrency;
    std::sort(batch_levels.begin(), batch_levels.end());
    batch_levels.erase(std::unique(batch_levels.begin(), batch_levels.end()), batch_levels.end());
  }
  auto list = [](const auto& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + fmt::format("{}", x);
    return out;
  };
  c.source = fmt::format(
      "refenc calibrate --model {} {} --device {} --threads {} --lengths {} --batch-max {} "
      "--repeats {}{}{}{} on {}",
      info.name, o.module_path.empty() ? "--scale " + o.scale : "--module " + o.module_path, o.device,
      c.context.threads, list(lengths), o.batch_max, o.repeats,
      o.concurrency.empty() ? "" : " --concurrency " + list(o.concurrency),
      o.concurrency.empty() ? "" : " --batch-concurrency " + (batch_levels.empty() ? "0" : list(batch_levels)),
      clip_names.empty() ? "" : " --clips " + clip_names, ctx.host);
  c.assumptions.push_back(
      "each time is the median of " + std::to_string(o.repeats) +
      " calls, one per round over the whole grid (odd rounds reversed; round r's batches start at clip slot r; "
      "each round followed by that round's sharing measurements) after one warm-up call per point, on " +
      (decoded.empty() ? std::string("seeded synthetic clips (partials plus noise) of the stated lengths")
                       : "the stated lengths cut from " + std::to_string(decoded.size()) +
                             " given clip(s), decoded as the model's hook decodes them, placed end to end"));

  // One clip per length and batch slot (distinct content).
  std::vector<std::vector<std::vector<float>>> clips(lengths.size());
  for (std::size_t l = 0; l < lengths.size(); ++l)
    for (int b = 0; b < o.batch_max; ++b) {
      const std::size_t slot = l * static_cast<std::size_t>(o.batch_max) + static_cast<std::size_t>(b);
      clips[l].push_back(decoded.empty()
                             ? synthetic_clip(lengths[l], info.sample_rate, 100 * l + static_cast<std::uint64_t>(b))
                             : clip_from(decoded, slot, lengths[l], info.sample_rate));
    }
  // A call of `batch` clips of length l, from slot `first` on: the slot moves with every round and
  // call, so each point's samples cover every slot's content (its cost varies with the content).
  auto call = [&](int batch, std::size_t l, std::size_t first) {
    std::vector<encoders::NetworkItem> items;
    for (int b = 0; b < batch; ++b)
      items.push_back({clips[l][(first + static_cast<std::size_t>(b)) % static_cast<std::size_t>(o.batch_max)]});
    auto t0 = Clock::now();
    net->encode(items);
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };

  std::cout << fmt::format("calibrating {} ({}) on {} [{}], {} intra-op threads\n", info.name,
                           o.module_path.empty() ? "proxy scale " + o.scale : "module " + o.module_path, o.device,
                           c.context.device_name, c.context.threads);
  const std::size_t nb = c.batch_sizes.size(), nl = lengths.size();

  // k concurrent callers of `batch`, each cycling through every length (caller i starts at length
  // i mod N, so the lengths in flight stay evenly mixed): calls/s, and each length's mean latency.
  // Caller i's n-th call starts at clip slot `slot` + i + n / N, so the content moves on with every
  // round, caller and pass.
  struct Level {
    double calls_per_s = 0;
    std::vector<double> mean_ms;  ///< Per length.
    double log_ss = 0;        ///< Sum over lengths of the squared deviations of ln(ms) from their length's mean.
    std::size_t log_dof = 0;  ///< Its degrees of freedom: calls minus lengths with a call.
  };
  auto measure = [&](int k, int batch, int rounds, std::size_t slot) {
    std::vector<std::vector<std::vector<double>>> ms(static_cast<std::size_t>(k), std::vector<std::vector<double>>(nl));
    std::barrier start(k + 1);
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i)
      threads.emplace_back([&, i] {
        call(batch, 0, 0);  // this thread's warm-up, on the shortest length
        start.arrive_and_wait();
        auto& mine = ms[static_cast<std::size_t>(i)];
        for (std::size_t n = 0; n < static_cast<std::size_t>(rounds) * nl; ++n) {
          const std::size_t l = (static_cast<std::size_t>(i) + n) % nl;
          mine[l].push_back(call(batch, l, slot + static_cast<std::size_t>(i) + n / nl));
        }
      });
    start.arrive_and_wait();
    auto t0 = Clock::now();
    for (auto& t : threads) t.join();
    Level out;
    out.calls_per_s = static_cast<double>(k) * rounds * static_cast<double>(nl) /
                      std::chrono::duration<double>(Clock::now() - t0).count();
    for (std::size_t l = 0; l < nl; ++l) {
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
  };

  // A sharing series: calls of `batch` at `levels` concurrent callers (1 first), every level once per
  // round (odd rounds in reverse). A level's factors are ratios to the one-caller level of the same
  // round, and the file keeps their median over rounds.
  struct Series {
    int batch = 1;
    std::vector<int> levels;
    int (*rounds_for)(int k) = nullptr;                    ///< Rounds per caller at level k.
    std::vector<std::vector<double>> capacity;            ///< Per level: calls/s over one caller's, per round.
    std::vector<std::vector<std::vector<double>>> ratio;  ///< Per level and length: mean latency over one caller's.
    std::vector<double> top_calls_per_s;                  ///< The last level's calls/s, per round.
    std::vector<double> log_ss;                            ///< Per level: Level::log_ss summed over rounds.
    std::vector<std::size_t> log_dof;                      ///< Per level: Level::log_dof summed over rounds.
    /// Level i's spread: the pooled standard deviation of ln latency within a length and round.
    double spread(std::size_t i) const { return log_dof[i] ? std::sqrt(log_ss[i] / static_cast<double>(log_dof[i])) : 0; }
  };
  auto add_series = [&](std::vector<Series>& to, int batch, std::vector<int> levels, int (*rounds_for)(int)) {
    Series s;
    s.batch = batch;
    s.capacity.resize(levels.size());
    s.log_ss.assign(levels.size(), 0);
    s.log_dof.assign(levels.size(), 0);
    s.ratio.assign(levels.size(), std::vector<std::vector<double>>(nl));
    s.levels = std::move(levels);
    s.rounds_for = rounds_for;
    to.push_back(std::move(s));
  };
  auto sharing_round = [&](Series& s, int r) {
    const std::size_t nk = s.levels.size();
    std::vector<Level> m(nk);
    for (std::size_t j = 0; j < nk; ++j) {
      const std::size_t i = r % 2 ? nk - 1 - j : j;
      m[i] = measure(s.levels[i], s.batch, s.rounds_for(s.levels[i]), static_cast<std::size_t>(r));
    }
    for (std::size_t i = 0; i < nk; ++i) {
      s.capacity[i].push_back(m[i].calls_per_s / m[0].calls_per_s);
      for (std::size_t l = 0; l < nl; ++l) s.ratio[i][l].push_back(m[i].mean_ms[l] / m[0].mean_ms[l]);
    }
    s.top_calls_per_s.push_back(m.back().calls_per_s);
    for (std::size_t i = 0; i < nk; ++i) {
      s.log_ss[i] += m[i].log_ss;
      s.log_dof[i] += m[i].log_dof;
    }
  };
  // Batch 1 at 1 and every --concurrency level: rounds per caller shrink as k grows (k callers give k
  // calls of each length per round), so the high levels stay short; every length still gets at least 8
  // calls per level and round (means of a noisy shared CPU need them), every caller at least 2 rounds.
  // Then each batch size above 1 at one caller and the batch levels, 2 rounds per caller.
  std::vector<Series> series;
  std::vector<int> levels_k{1};
  if (!o.concurrency.empty()) {
    for (int k : o.concurrency)
      if (k > 1) levels_k.push_back(k);
    std::sort(levels_k.begin(), levels_k.end());
    levels_k.erase(std::unique(levels_k.begin(), levels_k.end()), levels_k.end());
    add_series(series, 1, levels_k, [](int k) { return std::max(2, (8 + k - 1) / k); });
    if (!batch_levels.empty()) {
      std::vector<int> levels_b{1};
      levels_b.insert(levels_b.end(), batch_levels.begin(), batch_levels.end());
      for (std::size_t b = 1; b < nb; ++b) add_series(series, c.batch_sizes[b], levels_b, [](int) { return 2; });
    }
  }

  // One warm-up call per grid point, then `repeats` rounds. Each round visits every grid point once
  // (odd rounds in reverse) and then runs every sharing series once. So a slow spell of the machine
  // costs each figure one sample of its median, and the times alone and the factors applied to them
  // span the same minutes: this VM drifts by 10-20% over minutes, and a grid measured in one minute
  // read its times alone 25% slower than another's minutes later, while factors measured apart from
  // the grid and divided by it took that drift in (one-caller factors read 0.90-1.20 that way).
  std::vector<std::vector<double>> samples(nb * nl);
  for (std::size_t p = 0; p < nb * nl; ++p) call(c.batch_sizes[p / nl], p % nl, 0);
  std::cout << fmt::format("  {} rounds of the grid{} ", o.repeats, series.empty() ? "" : " and the sharing levels")
            << std::flush;
  for (int r = 0; r < o.repeats; ++r) {
    for (std::size_t i = 0; i < nb * nl; ++i) {
      const std::size_t p = r % 2 ? nb * nl - 1 - i : i;
      samples[p].push_back(call(c.batch_sizes[p / nl], p % nl, static_cast<std::size_t>(r)));
    }
    for (Series& s : series) sharing_round(s, r);
    std::cout << '.' << std::flush;
  }
  std::cout << '\n' << fmt::format("  {:>6}", "batch");
  for (double l : lengths) std::cout << fmt::format(" {:>9}", fmt::format("{:g} s", l));
  std::cout << fmt::format("   (ms per call, median of {} rounds)\n", o.repeats);
  for (std::size_t b = 0; b < nb; ++b) {
    std::vector<double> row;
    std::cout << fmt::format("  {:>6}", c.batch_sizes[b]);
    for (std::size_t l = 0; l < nl; ++l) {
      row.push_back(std::max(1e-3, median(samples[b * nl + l])));
      std::cout << fmt::format(" {:>9.1f}", row.back());
    }
    std::cout << '\n';
    c.time_ms.push_back(std::move(row));
  }
  auto [intercept, slope] = profile::fit_line(lengths, c.time_ms[0]);
  c.overhead_ms = std::max(0.0, intercept);
  c.per_audio_second_ms = slope;
  std::cout << fmt::format("  fit (batch 1): {:.1f} ms per call + {:.1f} ms per second of reference\n", c.overhead_ms,
                           c.per_audio_second_ms);

  if (!series.empty()) {
    auto factors = [&](const Series& s, std::size_t i) {
      std::vector<double> f;
      for (std::size_t l = 0; l < nl; ++l) f.push_back(i == 0 ? 1.0 : median(s.ratio[i][l]));
      return f;
    };
    auto print_row = [&](const std::string& label, const std::vector<double>& f, double spread) {
      std::cout << fmt::format("  {:>6}", label);
      for (double x : f) std::cout << fmt::format(" {:>9.2f}", x);
      std::cout << fmt::format(" {:>9.3f}\n", spread);
    };
    auto print_header = [&](const char* what) {
      std::cout << fmt::format("  {:>6}", "load");
      for (double l : lengths) std::cout << fmt::format(" {:>9}", fmt::format("{:g} s", l));
      std::cout << fmt::format(" {:>9}", "spread") << "   (" << what
                << ": mean latency under load / one caller's, median of " << o.repeats
                << " rounds; spread: sigma of ln latency within a length)\n";
    };
    const Series& single = series.front();
    std::cout << "  sharing, batch 1, lengths mixed (calls/s over one caller's):";
    for (std::size_t i = 0; i < levels_k.size(); ++i) {
      c.sharing.capacity.emplace_back(levels_k[i], i == 0 ? 1.0 : median(single.capacity[i]));
      std::cout << fmt::format(" c{} {:.2f}x", levels_k[i], c.sharing.capacity.back().second);
    }
    c.sharing.measured_concurrency = levels_k.back();
    c.sharing.throughput_per_s = median(single.top_calls_per_s);
    std::cout << '\n';
    print_header("slowdown");
    for (std::size_t i = 0; i < levels_k.size(); ++i) {
      c.sharing.slowdown.push_back({levels_k[i], factors(single, i), single.spread(i)});
      print_row(fmt::format("c{}", levels_k[i]), c.sharing.slowdown.back().factor, single.spread(i));
    }
    if (series.size() > 1) print_header("batch slowdown");
    for (std::size_t s = 1; s < series.size(); ++s)
      for (std::size_t i = 1; i < series[s].levels.size(); ++i) {
        c.sharing.batch_slowdown.push_back(
            {series[s].batch, series[s].levels[i], factors(series[s], i), series[s].spread(i)});
        print_row(fmt::format("b{} c{}", series[s].batch, series[s].levels[i]), c.sharing.batch_slowdown.back().factor,
                  series[s].spread(i));
      }
    std::cout << std::flush;
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
        nl, o.repeats));
    if (!batch_levels.empty())
      c.assumptions.push_back(fmt::format(
          "batches under load: for each batch size b above 1, in each round, one caller and k in {{{0}}} "
          "concurrent callers of batch b, cycling through the lengths as above, 2 rounds per caller; "
          "batch_slowdown[b, k][l] = the median over rounds of their mean latency at length l over one "
          "caller's in the same round (applied to time_ms[b][l]), and its spread as batch 1's; a batch call's "
          "factor comes from its size's rows (linear between sizes, batch 1's growth beyond the last k), its "
          "spread likewise (flat beyond the last k, batch 1's alone spread at n = 1)",
          list(batch_levels)));
  } else {
    c.assumptions.push_back("sharing not measured (no --concurrency): one stream, calls at their alone time, no per-call spread");
  }
  c.peak_memory_bytes = peak_rss();
  c.peak_memory_kind = c.peak_memory_bytes ? "rss" : "";
  if (o.device != "cpu")
    c.assumptions.push_back("peak memory is the host process's RSS: this build reads no device memory counters");
  std::cout << fmt::format("  peak memory: {:.1f} MiB ({})\n", c.peak_memory_bytes / 1048576.0,
                           c.peak_memory_kind.empty() ? "not read" : c.peak_memory_kind);
  profile::save_calibration(c, o.out);
  std::cout << fmt::format("wrote {}\n", o.out);
  return 0;
}

Registration reg{
    "calibrate", "Measure an encoder's cost surface for a modelled device", [](CLI::App& app) {
      auto o = std::make_shared<CalibrateOptions>();
      app.add_option("--model", o->model, "Encoder: fish-s2-pro, qwen3-tts, moss-tts-local");
      app.add_option("--scale", o->scale, "Proxy scale: tiny, small, full")->capture_default_str();
      app.add_option("--module", o->module_path, "TorchScript module instead of the proxy");
      app.add_option("--device", o->device, "cpu or cuda:N")->capture_default_str();
      app.add_option("--dtype", o->dtype, "float32 or bfloat16")->capture_default_str();
      app.add_option("--threads", o->threads, "LibTorch intra-op threads (0: library default)");
      app.add_option("--batch-max", o->batch_max, "Largest batch (sizes 1, 2, 4, ... and this)")->capture_default_str();
      app.add_option("--lengths", o->lengths, "Reference lengths in seconds")->delimiter(',')->capture_default_str();
      app.add_option("--repeats", o->repeats,
                     "Rounds: each times every grid point once, then measures every sharing level (at least 8 calls "
                     "per length and level, every factor a ratio to one caller in the same round)")
          ->capture_default_str();
      app.add_option("--concurrency", o->concurrency,
                     "Concurrent callers for the sharing measurement (throughput and latency per length), "
                     "e.g. 2,4,8,16 (none: not measured)")
          ->delimiter(',');
      app.add_option("--batch-concurrency", o->batch_concurrency,
                     "Concurrent callers for batches under load, each batch size above 1 (default: min(cores, "
                     "the largest --concurrency), M4b's matched batch workers; 0: not measured)")
          ->delimiter(',');
      app.add_option("--clips", o->clips,
                     "Reference clips whose content the calibration encodes, cut to each length (default: "
                     "synthetic tones); real speech can cost a CPU more than a steady tone")
          ->delimiter(',');
      app.add_option("--name", o->name, "Calibration name (default MODEL-SCALE-DEVICE)");
      app.add_option("--preset", o->preset, "Write this published preset instead of measuring");
      app.add_option("--out", o->out, "Calibration file to write")->required();
      return [o] { return run(*o); };
    }};

}  // namespace

}  // namespace refenc::cli
