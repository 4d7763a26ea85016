#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/prometheus_text.hpp"
#include "core/service_stats.hpp"

using namespace refenc;

namespace {

/// A strict reader of the Prometheus text exposition format (0.0.4), written from the format's
/// description and sharing nothing with the renderer. It accepts only what a scraper must accept and
/// what the conventions ask for: HELP and TYPE lines (one TYPE per family, before its samples, at
/// most one HELP), metric names [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*, quoted
/// label values with the escapes \\ \" \n only, counter families named *_total, histogram samples
/// _bucket (with an `le`, cumulative, ending in +Inf) _sum _count, a family's samples together, no
/// series twice, every line ending in '\n'. Throws std::runtime_error naming the line.
struct Exposition {
  struct Family {
    std::string type, help;
    bool has_help = false;
  };
  std::map<std::string, Family> families;
  std::map<std::string, double> samples;  ///< "name{labels as written, sorted}" -> value
};

bool is_name(const std::string& s, bool colon) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':') ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

double parse_value(const std::string& v) {
  if (v == "+Inf") return INFINITY;
  if (v == "-Inf") return -INFINITY;
  if (v == "NaN") return NAN;
  if (v.empty()) throw std::runtime_error("empty value");
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (end != v.c_str() + v.size() || v.find_first_of("xXpP") != std::string::npos || v == "inf" || v == "nan")
    throw std::runtime_error("bad value '" + v + "'");
  return d;
}

Exposition parse_exposition(const std::string& text) {
  Exposition out;
  if (!text.empty() && text.back() != '\n') throw std::runtime_error("last line has no newline");
  std::string current;                        // family whose samples are being read
  std::set<std::string> finished;             // families whose samples have ended
  std::map<std::string, double> last_bucket;  // histogram family + labels -> last cumulative count
  std::map<std::string, double> last_le;
  std::size_t pos = 0;
  int line_no = 0;
  auto fail = [&](const std::string& why) { throw std::runtime_error("line " + std::to_string(line_no) + ": " + why); };
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.empty()) fail("empty line");
    if (line[0] == '#') {
      const bool help = line.rfind("# HELP ", 0) == 0, type = line.rfind("# TYPE ", 0) == 0;
      if (!help && !type) fail("comment that is neither HELP nor TYPE");
      const std::string rest = line.substr(7);
      const std::size_t sp = rest.find(' ');
      if (sp == std::string::npos) fail("HELP/TYPE without text");
      const std::string name = rest.substr(0, sp), arg = rest.substr(sp + 1);
      if (!is_name(name, true)) fail("bad metric name '" + name + "'");
      if (finished.count(name) ||
          (name != current && out.families.count(name) && !out.families[name].type.empty() && type))
        fail("family " + name + " declared again");
      Exposition::Family& f = out.families[name];
      if (help) {
        if (f.has_help) fail("second HELP for " + name);
        for (std::size_t i = 0; i < arg.size(); ++i)
          if (arg[i] == '\\' && (i + 1 == arg.size() || (arg[i + 1] != '\\' && arg[i + 1] != 'n')))
            fail("bad escape in HELP");
          else if (arg[i] == '\\')
            ++i;
        f.has_help = true;
        f.help = arg;
      } else {
        if (!f.type.empty()) fail("second TYPE for " + name);
        if (arg != "counter" && arg != "gauge" && arg != "histogram" && arg != "summary" && arg != "untyped")
          fail("unknown type " + arg);
        if (arg == "counter" && !ends_with(name, "_total")) fail("counter " + name + " does not end in _total");
        f.type = arg;
      }
      if (name != current) {
        if (!current.empty()) finished.insert(current);
        current = name;
      }
      continue;
    }
    // A sample: name, optional {labels}, a space, a value (no timestamps here).
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    const std::string name = line.substr(0, i);
    if (!is_name(name, true)) fail("bad metric name '" + name + "'");
    std::map<std::string, std::string> labels;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        std::size_t eq = line.find('=', i);
        if (eq == std::string::npos) fail("label without '='");
        const std::string lname = line.substr(i, eq - i);
        if (!is_name(lname, false) || lname.rfind("__", 0) == 0) fail("bad label name '" + lname + "'");
        i = eq + 1;
        if (i >= line.size() || line[i] != '"') fail("label value not quoted");
        ++i;
        std::string value;
        for (;;) {
          if (i >= line.size()) fail("unterminated label value");
          const char c = line[i++];
          if (c == '"') break;
          if (c == '\\') {
            if (i >= line.size()) fail("dangling escape");
            const char e = line[i++];
            if (e == '\\')
              value += '\\';
            else if (e == '"')
              value += '"';
            else if (e == 'n')
              value += '\n';
            else
              fail("bad escape in label value");
          } else {
            value += c;
          }
        }
        if (!labels.emplace(lname, value).second) fail("label " + lname + " twice");
        if (i < line.size() && line[i] == ',')
          ++i;
        else if (i < line.size() && line[i] != '}')
          fail("expected ',' or '}' after a label");
      }
      if (i >= line.size()) fail("unterminated label set");
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') fail("no space before the value");
    const std::string value_text = line.substr(i + 1);
    if (value_text.find(' ') != std::string::npos) fail("trailing fields (timestamps are not expected)");
    double value = 0;
    try {
      value = parse_value(value_text);
    } catch (const std::exception& e) {
      fail(e.what());
    }

    // Which family does it belong to? Its own name, or a histogram's _bucket/_sum/_count.
    std::string family = name, suffix;
    for (const char* s : {"_bucket", "_sum", "_count"}) {
      const std::string base = name.substr(0, name.size() - std::string(s).size());
      if (ends_with(name, s) && out.families.count(base) && out.families[base].type == "histogram") {
        family = base;
        suffix = s;
      }
    }
    if (family != current) fail("sample " + name + " outside its family's block");
    const Exposition::Family& f = out.families[family];
    if (f.type.empty()) fail("sample before TYPE of " + family);
    if (f.type == "histogram" && suffix.empty()) fail("histogram sample without a suffix");
    if (f.type == "counter" && !(value >= 0)) fail("negative counter");
    std::string series_labels;
    std::string other_labels;  // without le, to group a histogram's buckets
    for (const auto& [k, v] : labels) {
      series_labels += k + "=" + v + ";";
      if (k != "le") other_labels += k + "=" + v + ";";
    }
    if (suffix == "_bucket") {
      auto le = labels.find("le");
      if (le == labels.end()) fail("bucket without le");
      const double bound = parse_value(le->second);
      const std::string group = family + "|" + other_labels;
      if (last_le.count(group) && !(bound > last_le[group])) fail("buckets not in increasing le");
      if (last_bucket.count(group) && value < last_bucket[group]) fail("buckets not cumulative");
      last_le[group] = bound;
      last_bucket[group] = value;
    } else if (labels.count("le")) {
      fail("le outside a bucket");
    }
    if (suffix == "_count") {
      const std::string group = family + "|" + other_labels;
      if (!last_le.count(group) || last_le[group] != INFINITY) fail("histogram without a +Inf bucket");
      if (last_bucket[group] != value) fail("_count differs from the +Inf bucket");
    }
    const std::string series = name + "{" + series_labels + "}";
    if (!out.samples.emplace(series, value).second) fail("series " + series + " twice");
  }
  for (const auto& [name, f] : out.families)
    if (f.type.empty()) throw std::runtime_error("family " + name + " has no TYPE");
  return out;
}

ServiceStats sample_stats() {
  ServiceStats s;
  s.hits = 42;
  s.misses = 7;
  s.merged = 3;
  s.failed = 1;
  s.uncacheable = 2;
  s.timeouts = 4;
  s.cancelled = 5;
  s.abandoned = 1;
  s.evictions = 6;
  s.oversize = 1;
  s.loads = 7;
  s.load_ns = 3'500'000'000;
  s.encode_ns = 3'000'000'000;
  s.batches = 3;
  s.batched_items = 7;
  s.failed_batches = 2;
  s.batch_sizes[0] = 1;  // one batch of 1
  s.batch_sizes[2] = 2;  // two of 3
  s.entries = 5;
  s.bytes = 1234;
  s.tier.disk_hits = 9;
  s.tier.disk_bytes = 4096;
  return s;
}

}  // namespace

TEST_CASE("prometheus: the exposition of a snapshot parses strictly and carries every value") {
  const ServiceStats s = sample_stats();
  const std::string text = prometheus_text(s, {{"model", "fish \"s2\"\\pro\nx"}, {"replica", "a"}});
  Exposition e;
  REQUIRE_NOTHROW(e = parse_exposition(text));
  const std::string l = "model=fish \"s2\"\\pro\nx;replica=a;";
  auto at = [&](const std::string& name, const std::string& extra = "") {
    auto it = e.samples.find(name + "{" + extra + l + "}");
    if (it == e.samples.end()) it = e.samples.find(name + "{" + l + extra + "}");
    REQUIRE(it != e.samples.end());
    return it->second;
  };
  CHECK(at("refenc_hits_total") == 42);
  CHECK(at("refenc_misses_total") == 7);
  CHECK(at("refenc_merged_total") == 3);
  CHECK(at("refenc_timeouts_total") == 4);
  CHECK(at("refenc_cancelled_total") == 5);
  CHECK(at("refenc_abandoned_total") == 1);
  CHECK(at("refenc_failed_batches_total") == 2);
  CHECK(at("refenc_batches_total") == 3);
  CHECK(at("refenc_load_seconds_total") == Approx(3.5));
  CHECK(at("refenc_encode_seconds_total") == Approx(3.0));
  CHECK(at("refenc_mean_miss_penalty_seconds") == Approx(0.5));
  CHECK(at("refenc_memory_entries") == 5);
  CHECK(at("refenc_memory_bytes") == 1234);
  CHECK(at("refenc_disk_hits_total") == 9);
  CHECK(at("refenc_disk_bytes") == 4096);
  CHECK(at("refenc_batch_size_bucket", "le=1;") == 1);
  CHECK(at("refenc_batch_size_bucket", "le=2;") == 1);
  CHECK(at("refenc_batch_size_bucket", "le=3;") == 3);
  CHECK(at("refenc_batch_size_bucket", "le=+Inf;") == 3);
  CHECK(at("refenc_batch_size_count") == 3);
  CHECK(at("refenc_batch_size_sum") == 7);
  CHECK(e.families.at("refenc_hits_total").type == "counter");
  CHECK(e.families.at("refenc_memory_bytes").type == "gauge");
  CHECK(e.families.at("refenc_batch_size").type == "histogram");
  for (const auto& [name, f] : e.families) CHECK(f.has_help);
  // Every counter and gauge of ServiceStats::fields() is exposed.
  CHECK(e.families.size() >= s.fields().size());
}

TEST_CASE("prometheus: an empty snapshot, no labels and another prefix also parse") {
  Exposition e;
  REQUIRE_NOTHROW(e = parse_exposition(prometheus_text(ServiceStats{}, {}, "tts:refenc_")));
  CHECK(e.samples.at("tts:refenc_hits_total{}") == 0);
  CHECK(e.samples.at("tts:refenc_mean_miss_penalty_seconds{}") == 0);
  CHECK(e.samples.at("tts:refenc_batch_size_count{}") == 0);
}

TEST_CASE("prometheus: invalid label names and prefixes are refused") {
  CHECK_THROWS_AS(prometheus_text({}, {{"9lives", "x"}}), Error);
  CHECK_THROWS_AS(prometheus_text({}, {{"__reserved", "x"}}), Error);
  CHECK_THROWS_AS(prometheus_text({}, {{"le", "1"}}), Error);
  CHECK_THROWS_AS(prometheus_text({}, {{"a-b", "x"}}), Error);
  CHECK_THROWS_AS(prometheus_text({}, {}, "1refenc_"), Error);
  CHECK_THROWS_AS(prometheus_text({}, {}, "ref enc"), Error);
}

TEST_CASE("prometheus: the test's parser itself refuses malformed expositions") {
  const char* bad[] = {
      "# TYPE a_total counter\na_total 1",                                               // no final newline
      "# TYPE a counter\na 1\n",                                                         // counter without _total
      "# TYPE a_total counter\n# TYPE a_total counter\na_total 1\n",                     // two TYPEs
      "a_total 1\n",                                                                     // sample before TYPE
      "# TYPE 1a gauge\n1a 1\n",                                                         // bad name
      "# TYPE a gauge\na{b=\"x} 1\n",                                                    // unterminated value
      "# TYPE a gauge\na{b=\"\\t\"} 1\n",                                                // bad escape
      "# TYPE a gauge\na{__b=\"x\"} 1\n",                                                // reserved label
      "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na 2\n",                                 // family split
      "# TYPE a gauge\na 1\na 2\n",                                                      // series twice
      "# TYPE a_total counter\na_total -1\n",                                            // negative counter
      "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",  // not cumulative
      "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\n",                           // no +Inf bucket
      "# TYPE a gauge\n\na 1\n",                                                         // empty line
      "# comment\n",                                                                     // stray comment
      "# TYPE a gauge\na one\n",                                                         // bad value
  };
  for (const char* text : bad) {
    INFO(text);
    CHECK_THROWS_AS(parse_exposition(text), std::runtime_error);
  }
  CHECK_NOTHROW(parse_exposition("# HELP a_total A \\\\ counter.\n# TYPE a_total counter\na_total{x=\"\\\"\"} 1\n"));
}

TEST_CASE("prometheus: several snapshots form one exposition, each family declared once") {
  ServiceStats a = sample_stats(), b;
  b.hits = 5;
  b.batch_sizes[1] = 4;
  b.batched_items = 8;
  const std::vector<LabelledStats> both = {{{{"model", "fish-s2-pro"}}, a}, {{{"model", "qwen3-tts"}}, b}};
  const std::string text = prometheus_text_many(both);
  Exposition e;
  REQUIRE_NOTHROW(e = parse_exposition(text));  // the parser refuses a family declared twice or split
  CHECK(e.samples.at("refenc_hits_total{model=fish-s2-pro;}") == 42);
  CHECK(e.samples.at("refenc_hits_total{model=qwen3-tts;}") == 5);
  CHECK(e.samples.at("refenc_batch_size_bucket{le=2;model=qwen3-tts;}") == 4);
  CHECK(e.samples.at("refenc_batch_size_count{model=qwen3-tts;}") == 4);
  CHECK(e.families.size() == parse_exposition(prometheus_text(a)).families.size());
  // Two single expositions pasted together are not valid: what the overload exists for.
  CHECK_THROWS_AS(parse_exposition(prometheus_text(a, {{"model", "x"}}) + prometheus_text(b, {{"model", "y"}})),
                  std::runtime_error);
}

TEST_CASE("prometheus: plain gauges parse strictly; bad names are refused") {
  const std::vector<PrometheusGauge> gauges = {
      {"disk_entries", "Entries in the disk tier.", {{{{"model", "fish"}}, 3}, {{{"model", "qwen"}}, 4}}},
      {"disk_max_bytes", "Byte bound of the disk tier.", {{{}, 2147483648.0}}},
  };
  Exposition e;
  REQUIRE_NOTHROW(e = parse_exposition(prometheus_gauges(gauges)));
  CHECK(e.families.at("refenc_disk_entries").type == "gauge");
  CHECK(e.samples.at("refenc_disk_entries{model=fish;}") == 3);
  CHECK(e.samples.at("refenc_disk_entries{model=qwen;}") == 4);
  CHECK(e.samples.at("refenc_disk_max_bytes{}") == 2147483648.0);
  const std::vector<PrometheusGauge> bad = {{"disk entries", "x", {{{}, 1}}}};
  CHECK_THROWS_AS(prometheus_gauges(bad), Error);
}
