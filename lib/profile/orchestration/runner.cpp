#include "profile/orchestration/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

#include "core/error.hpp"

namespace refenc::profile {
namespace {

using Clock = std::chrono::steady_clock;

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

RunResult run_requests(ServiceHandle& service, const std::vector<WorkItem>& items, const RunOptions& options,
                       SynthesisModel* synth, double frame_rate) {
  if (options.concurrency < 1) throw Error(ErrorKind::config, "runner concurrency must be at least 1");
  if (options.open_loop && options.arrivals_s.empty() && !(options.rate_per_s > 0))
    throw Error(ErrorKind::config, "open-loop runner needs a rate above 0");
  if (!options.arrivals_s.empty() && options.arrivals_s.size() != items.size())
    throw Error(ErrorKind::config, "runner arrivals: one time per item");
  const std::size_t n = items.size();
  RunResult result;
  std::vector<RequestRecord> records(n);
  std::vector<char> sent(n, 0);
  std::vector<double> completion(n, 0);

  auto t0 = Clock::now();
  std::vector<double> schedule(n, 0);
  double tolerance = 0.005;
  if (options.open_loop && !options.arrivals_s.empty()) {
    schedule = options.arrivals_s;
    const double span = n > 1 ? schedule.back() - schedule.front() : 0;
    if (span > 0) tolerance = std::max(tolerance, 0.5 * span / static_cast<double>(n - 1));
  } else if (options.open_loop) {
    std::mt19937_64 rng(options.seed);
    double t = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double u = (static_cast<double>(rng() >> 11) + 0.5) / static_cast<double>(1ULL << 53);  // (0, 1)
      t += -std::log(u) / options.rate_per_s;
      schedule[i] = t;
    }
    tolerance = std::max(tolerance, 0.5 / options.rate_per_s);
  }

  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  auto worker = [&](int worker_id) {
    for (;;) {
      if (options.stop && options.stop->load()) return;
      std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      const WorkItem& item = items[i];
      RequestRecord& rec = records[i];
      Clock::time_point scheduled;
      if (options.open_loop) {
        scheduled = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(schedule[i]));
        std::this_thread::sleep_until(scheduled);
      } else {
        scheduled = Clock::now();
      }
      rec.index = item.index;
      rec.reference = item.reference ? item.reference->id : std::string();
      rec.ref_seconds = item.reference ? item.reference->seconds : 0.0;
      rec.scheduled_s = secs(scheduled - t0);
      RequestTrace trace;
      try {
        service.encode(item, trace);
      } catch (const std::exception& e) {
        rec.error = e.what();
        trace.outcome = RequestOutcome::failed;
      } catch (...) {
        rec.error = "unknown error";
        trace.outcome = RequestOutcome::failed;
      }
      auto start = trace.start == Clock::time_point{} ? scheduled : trace.start;
      rec.queue_s = std::max(0.0, secs(start - scheduled));
      rec.outcome = std::string(to_string(trace.outcome));
      rec.batch_size = trace.batch_size;
      rec.batch_id = trace.batch_id;
      rec.batch_padding = trace.batch_padding;
      rec.worker = worker_id;
      if (trace.key) rec.key = trace.key->digest();
      rec.stored_bytes = trace.stored_bytes;
      if (trace.outcome != RequestOutcome::failed) {
        rec.preprocessing_s = secs(trace.normalized - trace.start) + secs(trace.keyed - trace.normalized);
        rec.encode_s = secs(trace.end - trace.keyed);
        double service_s = rec.queue_s + rec.preprocessing_s + rec.encode_s;
        rec.ttfa_s = rec.e2e_s = service_s;
        if (synth) {
          rec.text_tokens = synth->text_tokens(item.text);
          SynthesisTiming st = synth->run(rec.ref_seconds * frame_rate, rec.text_tokens);
          rec.synthesis_first_s = st.first_audio_s;
          rec.synthesis_end_s = st.end_s;
          rec.audio_seconds = st.audio_seconds;
          rec.ttfa_s = service_s + st.first_audio_s;
          rec.e2e_s = service_s + st.end_s;
        }
      }
      completion[i] = secs(Clock::now() - t0);
      sent[i] = 1;
      std::size_t d = done.fetch_add(1) + 1;
      if (options.on_done) options.on_done(d);
    }
  };
  std::vector<std::thread> threads;
  int workers = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(options.concurrency), std::max<std::size_t>(n, 1)));
  for (int w = 0; w < workers; ++w) threads.emplace_back(worker, w);
  for (auto& t : threads) t.join();

  double first = -1, last = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!sent[i]) {
      result.interrupted = true;
      continue;
    }
    const auto& rec = records[i];
    if (first < 0 || rec.scheduled_s < first) first = rec.scheduled_s;
    last = std::max(last, completion[i]);
    if (options.open_loop) {
      result.max_lag_s = std::max(result.max_lag_s, rec.queue_s);
      if (rec.queue_s > tolerance) ++result.late;
    }
    result.records.push_back(rec);
  }
  result.wall_s = first < 0 ? 0 : last - first;
  result.generator_behind = result.late > 0;
  return result;
}

}  // namespace refenc::profile
