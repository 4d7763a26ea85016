#include "core/prometheus_text.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <vector>

#include "core/error.hpp"

namespace refenc {

namespace {

bool name_char(char c, bool first, bool colon) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
  return alpha || (!first && c >= '0' && c <= '9');
}

bool valid_name(std::string_view s, bool colon) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (!name_char(s[i], i == 0, colon)) return false;
  return true;
}

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string number(std::uint64_t v) { return std::to_string(v); }

std::string number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc{} ? std::string(buf, end) : std::string("NaN");
}

double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

/// Collects families in the order they first appear, each with the samples of every snapshot written
/// into it, so several snapshots render as one valid exposition (one HELP and TYPE per family, its
/// samples together).
class Writer {
 public:
  explicit Writer(std::string_view prefix) : prefix_(prefix) {
    if (!prefix_.empty() && !valid_name(prefix_, true))
      throw Error(ErrorKind::config, "invalid Prometheus metric prefix '" + prefix_ + "'");
  }

  /// The labels of the samples written next.
  void labels(const PrometheusLabels& labels) {
    labels_.clear();
    for (const auto& [name, value] : labels) {
      if (!valid_name(name, false) || name.rfind("__", 0) == 0 || name == "le")
        throw Error(ErrorKind::config, "invalid Prometheus label name '" + name + "'");
      if (!labels_.empty()) labels_ += ',';
      labels_ += name + "=\"" + escape_label_value(value) + '"';
    }
  }

  void counter(std::string_view name, std::string_view help, std::uint64_t v) {
    const std::string n = std::string(name) + "_total";
    sample(family(n, "counter", help), n, "", number(v));
  }
  void counter_seconds(std::string_view name, std::string_view help, std::uint64_t ns) {
    const std::string n = std::string(name) + "_seconds_total";
    sample(family(n, "counter", help), n, "", number(seconds(ns)));
  }
  template <class T>
  void gauge(std::string_view name, std::string_view help, T v) {
    const std::string n(name);
    if (!valid_name(prefix_ + n, true)) throw Error(ErrorKind::config, "invalid Prometheus metric name '" + n + "'");
    sample(family(n, "gauge", help), n, "", number(v));
  }
  /// A histogram from per-value counts: counts[i] observations of value i+1, the last also holding
  /// the larger values; `sum` is the sum of all observed values.
  template <std::size_t N>
  void histogram(std::string_view name, std::string_view help, const std::array<std::uint64_t, N>& counts,
                 std::uint64_t sum) {
    const std::string n(name);
    std::string& out = family(n, "histogram", help);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i + 1 < N; ++i) {
      cumulative += counts[i];
      sample(out, n + "_bucket", "le=\"" + std::to_string(i + 1) + '"', number(cumulative));
    }
    cumulative += counts[N - 1];
    sample(out, n + "_bucket", "le=\"+Inf\"", number(cumulative));
    sample(out, n + "_sum", "", number(sum));
    sample(out, n + "_count", "", number(cumulative));
  }

  std::string take() {
    std::string out;
    for (const Family& f : families_) out += f.text;
    return out;
  }

 private:
  struct Family {
    std::string name;
    std::string text;  ///< HELP and TYPE lines, then the samples.
  };

  /// The family's text, begun with its HELP and TYPE lines when it first appears.
  std::string& family(const std::string& name, std::string_view type, std::string_view help) {
    for (Family& f : families_)
      if (f.name == name) return f.text;
    std::string& out = families_.emplace_back(Family{name, {}}).text;
    out += "# HELP " + prefix_ + name + ' ';
    for (char c : help) {  // HELP escapes only backslash and newline
      if (c == '\\')
        out += "\\\\";
      else if (c == '\n')
        out += "\\n";
      else
        out += c;
    }
    out += "\n# TYPE " + prefix_ + name + ' ';
    out += type;
    out += '\n';
    return out;
  }
  void sample(std::string& out, const std::string& name, const std::string& extra_label, const std::string& value) {
    out += prefix_ + name;
    if (!labels_.empty() || !extra_label.empty()) {
      out += '{';
      out += labels_;
      if (!labels_.empty() && !extra_label.empty()) out += ',';
      out += extra_label;
      out += '}';
    }
    out += ' ' + value + '\n';
  }

  std::string prefix_;
  std::string labels_;
  std::vector<Family> families_;
};

/// Writes every figure of `s` with the writer's current labels.
void write_stats(Writer& w, const ServiceStats& s) {
  w.counter("hits", "Memory-tier hits.", s.hits);
  w.counter("misses", "Cacheable lookups that missed memory and led a load.", s.misses);
  w.counter("merged", "Callers that waited on a same-key load in flight.", s.merged);
  w.counter("failed", "Leader loads that failed (encode, store or revalidate threw).", s.failed);
  w.counter("uncacheable", "Requests whose input had no cache key.", s.uncacheable);
  w.counter("timeouts", "Callers that gave up at their deadline or the follower timeout.", s.timeouts);
  w.counter("cancelled", "Callers that gave up on a cancel request.", s.cancelled);
  w.counter("abandoned", "Loads whose every caller gave up; their result was discarded.", s.abandoned);
  w.counter("evictions", "Memory-tier evictions.", s.evictions);
  w.counter("oversize", "Artifacts returned but too large to cache.", s.oversize);
  w.counter("loads", "Leader loads that finished, successfully or not.", s.loads);
  w.counter_seconds("load", "Time leaders spent loading after a memory miss (second tier and encode).", s.load_ns);
  w.counter_seconds("encode", "Time spent in encodes, leaders and uncacheable requests.", s.encode_ns);
  w.gauge("mean_miss_penalty_seconds", "Mean time of a leader load (load time over loads).",
          seconds(s.mean_miss_penalty_ns()));
  w.counter("batches", "Successful encode_batch calls.", s.batches);
  w.counter("batched_items", "Items encoded by successful encode_batch calls.", s.batched_items);
  w.counter("failed_batches", "encode_batch calls that failed; their items were retried alone.", s.failed_batches);
  w.counter("batch_length_units", "Successful batches: sum of size times the longest input length.",
            s.batch_length_units);
  w.counter("batch_padded_units", "The part of batch_length_units that is padding.", s.batch_padded_units);
  w.histogram("batch_size", "Sizes of successful batches.", s.batch_sizes, s.batched_items);
  w.gauge("memory_entries", "Memory-tier entries now.", s.entries);
  w.gauge("memory_bytes", "Memory-tier bytes now (stored_bytes of the entries).", s.bytes);
  w.counter("disk_hits", "Second-tier lookups answered from disk.", s.tier.disk_hits);
  w.counter("disk_misses", "Second-tier lookups that found no usable entry.", s.tier.disk_misses);
  w.counter("disk_writes", "Second-tier entries written.", s.tier.disk_writes);
  w.counter("disk_errors", "Second-tier I/O errors turned into misses or skipped writes.", s.tier.disk_errors);
  w.counter("disk_corrupt", "Second-tier entries found invalid, deleted and recomputed.", s.tier.disk_corrupt);
  w.counter("disk_evictions", "Second-tier entries removed to keep the byte bound.", s.tier.disk_evictions);
  w.gauge("disk_bytes", "Second-tier bytes on disk, as this process knows it.", s.tier.disk_bytes);
  w.counter("shared_hits", "Lookups answered from the tier shared by replicas (Redis).", s.tier.shared_hits);
  w.counter("shared_misses", "Shared-tier lookups that found no usable value.", s.tier.shared_misses);
  w.counter("shared_writes", "Shared-tier values written.", s.tier.shared_writes);
  w.counter("shared_errors", "Shared-tier commands that failed or were skipped (circuit open, no connection).",
            s.tier.shared_errors);
  w.counter("shared_corrupt", "Shared-tier values found invalid or foreign, deleted and recomputed.",
            s.tier.shared_corrupt);
  w.counter("shared_lease_waits", "Leaders that waited for another replica's lease on the same key.",
            s.tier.shared_lease_waits);
  w.counter("shared_lease_takeovers", "Leases taken over after their holder let them lapse.",
            s.tier.shared_lease_takeovers);
}

}  // namespace

std::string prometheus_text(const ServiceStats& stats, const PrometheusLabels& labels, std::string_view prefix) {
  Writer w(prefix);
  w.labels(labels);
  write_stats(w, stats);
  return w.take();
}

std::string prometheus_text_many(std::span<const LabelledStats> snapshots, std::string_view prefix) {
  Writer w(prefix);
  for (const auto& [labels, stats] : snapshots) {
    w.labels(labels);
    write_stats(w, stats);
  }
  return w.take();
}

std::string prometheus_gauges(std::span<const PrometheusGauge> gauges, std::string_view prefix) {
  Writer w(prefix);
  for (const PrometheusGauge& g : gauges)
    for (const auto& [labels, value] : g.samples) {
      w.labels(labels);
      w.gauge(g.name, g.help, value);
    }
  return w.take();
}

}  // namespace refenc
