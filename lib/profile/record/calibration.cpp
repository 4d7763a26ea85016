#include "profile/record/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "profile/record/json_fields.hpp"
#include "util/atomic_file.hpp"

namespace refenc::profile {

using json = nlohmann::json;

std::string Calibration::evidence_grade() const {
  std::string file = path.empty() ? "preset " + name : path;
  std::string where = context.host.empty() ? "unknown host" : context.host;
  std::string dev = context.device_name.empty() ? context.device : context.device_name;
  return "modelled device (calibration " + file + ", " + where + ", " + dev + ")";
}

namespace {

/// `level.factor`: one positive number per length.
std::vector<double> read_factors(const JsonFields& in, const json& level, const std::string& where,
                                 std::size_t lengths) {
  const json* f = in.find(level, "factor");
  if (!f) in.fail(where + ".factor", "missing");
  if (!f->is_array() || f->size() != lengths)
    in.fail(where + ".factor", "expected " + std::to_string(lengths) + " factors (one per length)" +
                                   (f->is_array() ? ", got " + std::to_string(f->size()) : ""));
  std::vector<double> out;
  for (std::size_t l = 0; l < f->size(); ++l) {
    const json& x = (*f)[l];
    if (!x.is_number() || !(x.get<double>() > 0) || !std::isfinite(x.get<double>()))
      in.fail(JsonFields::idx(where + ".factor", l), "must be a positive number");
    out.push_back(x.get<double>());
  }
  return out;
}

/// `row.spread` (optional): a number in [0, 3], 0 when absent.
double read_spread(const JsonFields& in, const json& row, const std::string& where) {
  const json* x = in.find(row, "spread");
  if (!x) return 0;
  if (!x->is_number() || !(x->get<double>() >= 0) || !(x->get<double>() <= 3))
    in.fail(where + ".spread", "must be a number in [0, 3]");
  return x->get<double>();
}

/// sharing.slowdown (optional): read after lengths_s, whose count each level's factors must match.
void read_slowdown(const JsonFields& in, const json& sharing, Calibration& c) {
  const json& levels = in.arr(sharing, "sharing", "slowdown");
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const std::string where = JsonFields::idx("sharing.slowdown", i);
    const json& level = levels[i];
    if (!level.is_object()) in.fail(where, "expected an object {\"concurrency\": k, \"factor\": [...]}");
    SlowdownLevel s;
    const std::int64_t k = in.integer(level, where, "concurrency", 0, true);
    if (k < 1 || k > 4096) in.fail(where + ".concurrency", "must be 1..4096");
    s.concurrency = static_cast<int>(k);
    if (i > 0 && s.concurrency <= c.sharing.slowdown.back().concurrency)
      in.fail(where + ".concurrency", "levels must be ascending and distinct");
    s.factor = read_factors(in, level, where, c.lengths_s.size());
    s.spread = read_spread(in, level, where);
    c.sharing.slowdown.push_back(std::move(s));
  }
}

/// sharing.batch_slowdown (optional): read after slowdown and batch_sizes.
void read_batch_slowdown(const JsonFields& in, const json& sharing, Calibration& c) {
  const json& rows = in.arr(sharing, "sharing", "batch_slowdown");
  if (!rows.empty() && c.sharing.slowdown.empty())
    in.fail("sharing.batch_slowdown", "needs sharing.slowdown (the batch-1 rows) as well");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string where = JsonFields::idx("sharing.batch_slowdown", i);
    const json& row = rows[i];
    if (!row.is_object()) in.fail(where, "expected an object {\"batch\": b, \"concurrency\": k, \"factor\": [...]}");
    BatchSlowdown s;
    const std::int64_t b = in.integer(row, where, "batch", 0, true);
    if (b < 2 || std::find(c.batch_sizes.begin(), c.batch_sizes.end(), b) == c.batch_sizes.end())
      in.fail(where + ".batch", "must be one of batch_sizes, above 1");
    const std::int64_t k = in.integer(row, where, "concurrency", 0, true);
    if (k < 2 || k > 4096) in.fail(where + ".concurrency", "must be 2..4096");
    s.batch = static_cast<int>(b);
    s.concurrency = static_cast<int>(k);
    if (i > 0) {
      const BatchSlowdown& p = c.sharing.batch_slowdown.back();
      if (s.batch < p.batch || (s.batch == p.batch && s.concurrency <= p.concurrency))
        in.fail(where, "rows must be ascending by batch, then by concurrency, and distinct");
    }
    s.factor = read_factors(in, row, where, c.lengths_s.size());
    s.spread = read_spread(in, row, where);
    c.sharing.batch_slowdown.push_back(std::move(s));
  }
}

}  // namespace

std::pair<double, double> fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n == 0) return {0, 0};
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
  double slope = sxx > 0 ? sxy / sxx : 0;
  return {my - slope * mx, slope};
}

json calibration_to_json(const Calibration& c) {
  const CalibrationContext& x = c.context;
  json out{{"schema_version", c.schema_version},
           {"kind", "refenc-calibration"},
           {"name", c.name},
           {"model", c.model},
           {"origin", c.origin},
           {"source", c.source},
           {"assumptions", c.assumptions},
           {"context",
            {{"host", x.host},
             {"device", x.device},
             {"device_name", x.device_name},
             {"libtorch", x.libtorch},
             {"module_sha256", x.module_sha256},
             {"scale", x.scale},
             {"threads", x.threads},
             {"cores", x.cores},
             {"date_utc", x.date_utc}}},
           {"sharing",
            {{"streams", c.sharing.streams},
             {"stream_slowdown", c.sharing.stream_slowdown},
             {"measured_concurrency", c.sharing.measured_concurrency},
             {"throughput_per_s", c.sharing.throughput_per_s},
             {"capacity", c.sharing.capacity}}},
           {"batch_sizes", c.batch_sizes},
           {"lengths_s", c.lengths_s},
           {"time_ms", c.time_ms},
           {"overhead_ms", c.overhead_ms},
           {"per_audio_second_ms", c.per_audio_second_ms},
           {"peak_memory", {{"bytes", c.peak_memory_bytes}, {"kind", c.peak_memory_kind}}}};
  if (!c.sharing.slowdown.empty()) {
    json& levels = out["sharing"]["slowdown"] = json::array();
    for (const SlowdownLevel& s : c.sharing.slowdown) {
      levels.push_back({{"concurrency", s.concurrency}, {"factor", s.factor}});
      if (s.spread > 0) levels.back()["spread"] = s.spread;
    }
  }
  if (!c.sharing.batch_slowdown.empty()) {
    json& rows = out["sharing"]["batch_slowdown"] = json::array();
    for (const BatchSlowdown& s : c.sharing.batch_slowdown) {
      rows.push_back({{"batch", s.batch}, {"concurrency", s.concurrency}, {"factor", s.factor}});
      if (s.spread > 0) rows.back()["spread"] = s.spread;
    }
  }
  return out;
}

Calibration parse_calibration(const json& j, const std::string& path) {
  JsonFields in(path);
  if (!j.is_object()) in.fail("", "expected a JSON object");
  Calibration c;
  c.path = path;
  c.schema_version = static_cast<int>(in.integer(j, "", "schema_version", 0, true));
  if (c.schema_version < 1 || c.schema_version > calibration_schema_version)
    in.fail("schema_version", "unsupported version " + std::to_string(c.schema_version) + " (this build reads 1)");
  if (in.str(j, "", "kind", "", true) != "refenc-calibration") in.fail("kind", "must be \"refenc-calibration\"");
  c.name = in.str(j, "", "name", "", true);
  c.model = in.str(j, "", "model", "", true);
  c.origin = in.str(j, "", "origin", "", true);
  if (c.origin != "measured" && c.origin != "published") in.fail("origin", "must be \"measured\" or \"published\"");
  c.source = in.str(j, "", "source", "", true);
  const json& as = in.arr(j, "", "assumptions");
  for (std::size_t i = 0; i < as.size(); ++i) {
    if (!as[i].is_string()) in.fail(JsonFields::idx("assumptions", i), "expected a string");
    c.assumptions.push_back(as[i].get<std::string>());
  }
  const json& x = in.obj(j, "", "context");
  c.context.host = in.str(x, "context", "host");
  c.context.device = in.str(x, "context", "device", "", true);
  c.context.device_name = in.str(x, "context", "device_name");
  c.context.libtorch = in.str(x, "context", "libtorch");
  c.context.module_sha256 = in.str(x, "context", "module_sha256");
  c.context.scale = in.str(x, "context", "scale");
  c.context.threads = static_cast<int>(in.integer(x, "context", "threads"));
  c.context.cores = static_cast<int>(in.integer(x, "context", "cores"));
  c.context.date_utc = in.str(x, "context", "date_utc");
  const json& s = in.obj(j, "", "sharing");
  c.sharing.streams = static_cast<int>(in.integer(s, "sharing", "streams", 1));
  if (c.sharing.streams < 1 || c.sharing.streams > 4096) in.fail("sharing.streams", "must be 1..4096");
  c.sharing.stream_slowdown = in.num(s, "sharing", "stream_slowdown", 1);
  if (!(c.sharing.stream_slowdown > 0) || c.sharing.stream_slowdown > 1000)
    in.fail("sharing.stream_slowdown", "must be > 0 and <= 1000");
  c.sharing.measured_concurrency = static_cast<int>(in.integer(s, "sharing", "measured_concurrency", 1));
  c.sharing.throughput_per_s = in.num(s, "sharing", "throughput_per_s");
  const json& cap = in.arr(s, "sharing", "capacity");
  for (std::size_t i = 0; i < cap.size(); ++i) {
    const json& p = cap[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || p[0].get<long long>() < 1 || !p[1].is_number() ||
        !(p[1].get<double>() > 0) || (i > 0 && p[0].get<long long>() <= cap[i - 1][0].get<long long>()))
      in.fail(JsonFields::idx("sharing.capacity", i),
              "expected [concurrency, effective]: concurrency ascending from 1, effective > 0");
    c.sharing.capacity.emplace_back(p[0].get<int>(), p[1].get<double>());
  }

  const json& bs = in.arr(j, "", "batch_sizes");
  for (std::size_t i = 0; i < bs.size(); ++i) {
    if (!bs[i].is_number_integer() || bs[i].get<long long>() < 1 ||
        (i > 0 && bs[i].get<long long>() <= bs[i - 1].get<long long>()) || (i == 0 && bs[i].get<long long>() != 1))
      in.fail(JsonFields::idx("batch_sizes", i), "batch sizes must be integers ascending from 1");
    c.batch_sizes.push_back(bs[i].get<int>());
  }
  if (c.batch_sizes.empty()) in.fail("batch_sizes", "required, at least [1]");
  const json& ls = in.arr(j, "", "lengths_s");
  for (std::size_t i = 0; i < ls.size(); ++i) {
    if (!ls[i].is_number() || !(ls[i].get<double>() > 0) || (i > 0 && ls[i].get<double>() <= ls[i - 1].get<double>()))
      in.fail(JsonFields::idx("lengths_s", i), "lengths must be positive and ascending");
    c.lengths_s.push_back(ls[i].get<double>());
  }
  if (c.lengths_s.empty()) in.fail("lengths_s", "required, at least one length");
  const json& t = in.arr(j, "", "time_ms");
  if (t.size() != c.batch_sizes.size())
    in.fail("time_ms", "expected " + std::to_string(c.batch_sizes.size()) + " rows (one per batch size), got " +
                           std::to_string(t.size()));
  for (std::size_t b = 0; b < t.size(); ++b) {
    std::string wb = JsonFields::idx("time_ms", b);
    if (!t[b].is_array() || t[b].size() != c.lengths_s.size())
      in.fail(wb, "expected " + std::to_string(c.lengths_s.size()) + " times (one per length)");
    std::vector<double> row;
    for (std::size_t l = 0; l < t[b].size(); ++l) {
      if (!t[b][l].is_number() || !(t[b][l].get<double>() > 0) || !std::isfinite(t[b][l].get<double>()))
        in.fail(JsonFields::idx(wb, l), "must be a positive number of milliseconds");
      row.push_back(t[b][l].get<double>());
    }
    c.time_ms.push_back(std::move(row));
  }
  read_slowdown(in, s, c);
  read_batch_slowdown(in, s, c);
  c.overhead_ms = in.num(j, "", "overhead_ms");
  c.per_audio_second_ms = in.num(j, "", "per_audio_second_ms");
  const json& pm = in.obj(j, "", "peak_memory");
  c.peak_memory_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, in.integer(pm, "peak_memory", "bytes")));
  c.peak_memory_kind = in.str(pm, "peak_memory", "kind");
  return c;
}

Calibration load_calibration(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::bad_input, path + ": cannot read calibration file");
  std::stringstream ss;
  ss << f.rdbuf();
  std::string bytes = ss.str();
  json j = json::parse(bytes, nullptr, false);
  if (j.is_discarded()) throw Error(ErrorKind::bad_input, path + ": not valid JSON");
  Calibration c = parse_calibration(j, path);
  c.sha256 = sha256_hex(bytes);
  return c;
}

void save_calibration(const Calibration& c, const std::string& path) {
  write_file_atomic(path, calibration_to_json(c).dump(2) + "\n");
}

}  // namespace refenc::profile
