#include "core/prometheus_text.hpp"

#include <array>
#include <charconv>
#include <cstdint>

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
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
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

class Writer {
 public:
  Writer(std::string_view prefix, const PrometheusLabels& labels) : prefix_(prefix) {
    for (const auto& [name, value] : labels) {
      if (!valid_name(name, false) || name.rfind("__", 0) == 0 || name == "le")
        throw Error(ErrorKind::config, "invalid Prometheus label name '" + name + "'");
      if (!labels_.empty()) labels_ += ',';
      labels_ += name + "=\"" + escape_label_value(value) + '"';
    }
  }

  void counter(std::string_view name, std::string_view help, std::uint64_t v) {
    family(std::string(name) + "_total", "counter", help);
    sample(std::string(name) + "_total", "", number(v));
  }
  void counter_seconds(std::string_view name, std::string_view help, std::uint64_t ns) {
    family(std::string(name) + "_seconds_total", "counter", help);
    sample(std::string(name) + "_seconds_total", "", number(seconds(ns)));
  }
  template <class T>
  void gauge(std::string_view name, std::string_view help, T v) {
    family(std::string(name), "gauge", help);
    sample(std::string(name), "", number(v));
  }
  /// A histogram from per-value counts: counts[i] observations of value i+1, the last also holding
  /// the larger values; `sum` is the sum of all observed values.
  template <std::size_t N>
  void histogram(std::string_view name, std::string_view help, const std::array<std::uint64_t, N>& counts,
                 std::uint64_t sum) {
    const std::string n(name);
    family(n, "histogram", help);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i + 1 < N; ++i) {
      cumulative += counts[i];
      sample(n + "_bucket", "le=\"" + std::to_string(i + 1) + '"', number(cumulative));
    }
    cumulative += counts[N - 1];
    sample(n + "_bucket", "le=\"+Inf\"", number(cumulative));
    sample(n + "_sum", "", number(sum));
    sample(n + "_count", "", number(cumulative));
  }

  std::string take() { return std::move(out_); }

 private:
  void family(const std::string& name, std::string_view type, std::string_view help) {
    out_ += "# HELP " + prefix_ + name + ' ';
    for (char c : help) {  // HELP escapes only backslash and newline
      if (c == '\\') out_ += "\\\\";
      else if (c == '\n') out_ += "\\n";
      else out_ += c;
    }
    out_ += "\n# TYPE " + prefix_ + name + ' ';
    out_ += type;
    out_ += '\n';
  }
  void sample(const std::string& name, const std::string& extra_label, const std::string& value) {
    out_ += prefix_ + name;
    if (!labels_.empty() || !extra_label.empty()) {
      out_ += '{';
      out_ += labels_;
      if (!labels_.empty() && !extra_label.empty()) out_ += ',';
      out_ += extra_label;
      out_ += '}';
    }
    out_ += ' ' + value + '\n';
  }

  std::string prefix_;
  std::string labels_;
  std::string out_;
};

}  // namespace

std::string prometheus_text(const ServiceStats& s, const PrometheusLabels& labels, std::string_view prefix) {
  if (!prefix.empty() && !valid_name(prefix, true))
    throw Error(ErrorKind::config, "invalid Prometheus metric prefix '" + std::string(prefix) + "'");
  Writer w(prefix, labels);
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
  w.counter_seconds("load", "Time leaders spent loading after a memory miss (second tier and encode).",
                    s.load_ns);
  w.counter_seconds("encode", "Time spent in encodes, leaders and uncacheable requests.", s.encode_ns);
  w.gauge("mean_miss_penalty_seconds", "Mean time of a leader load (load time over loads).",
          seconds(s.mean_miss_penalty_ns()));
  w.counter("batches", "Successful encode_batch calls.", s.batches);
  w.counter("batched_items", "Items encoded by successful encode_batch calls.", s.batched_items);
  w.counter("failed_batches", "encode_batch calls that failed; their items were retried alone.",
            s.failed_batches);
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
  return w.take();
}

}  // namespace refenc
