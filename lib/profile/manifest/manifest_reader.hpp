// ManifestReader: reads the fields of a manifest's JSON (and of the files it names) one at a time,
// checking each one's type and range, and throwing Error(bad_input) with one line that names the file
// and the field's JSON path, e.g. "workloads/x.json: capacity.rates[1]: must be > 0". Every parser
// of a manifest block (manifest.cpp, capacity_spec.cpp, noise_manifest.cpp) reads through it, so all
// of them word their errors alike.
//
//   refenc::profile::ManifestReader r("workloads/x.json");
//   nlohmann::json j = nlohmann::json::parse(R"({"gate": {"confidence": 0.9}})");
//   r.object(j, "", {"gate"});                                          // unknown fields are errors
//   double c = r.num(j["gate"], "gate", "confidence", 0.95, 0.5, 1.0);  // 0.9; absent: 0.95
#pragma once

#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace refenc::profile {

/// Walks a JSON document keeping the path of the current field for error messages.
class ManifestReader {
 public:
  explicit ManifestReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& why) const {
    throw Error(ErrorKind::bad_input, file_ + ": " + (where.empty() ? std::string("(top level)") : where) + ": " + why);
  }

  static std::string key(const std::string& base, const std::string& k) { return base.empty() ? k : base + "." + k; }
  static std::string idx(const std::string& base, std::size_t i) { return base + "[" + std::to_string(i) + "]"; }

  void object(const nlohmann::json& j, const std::string& where, std::initializer_list<const char*> allowed) const {
    if (!j.is_object()) fail(where, "must be an object");
    std::set<std::string> ok(allowed.begin(), allowed.end());
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!ok.count(it.key())) fail(key(where, it.key()), "unknown field");
  }

  const nlohmann::json* find(const nlohmann::json& obj, const char* k) const {
    auto it = obj.find(k);
    return it == obj.end() ? nullptr : &*it;
  }

  std::string str(const nlohmann::json& obj, const std::string& where, const char* k, std::optional<std::string> def,
                  bool non_empty = false) const {
    const nlohmann::json* v = find(obj, k);
    if (!v) {
      if (!def) fail(key(where, k), "required");
      return *def;
    }
    if (!v->is_string()) fail(key(where, k), "must be a string");
    auto s = v->get<std::string>();
    if (non_empty && s.empty()) fail(key(where, k), "must not be empty");
    return s;
  }

  double num(const nlohmann::json& obj, const std::string& where, const char* k, double def, double lo, double hi,
             bool lo_open = false) const {
    const nlohmann::json* v = find(obj, k);
    if (!v) return def;
    return num_value(*v, key(where, k), lo, hi, lo_open);
  }

  double num_value(const nlohmann::json& v, const std::string& where, double lo, double hi,
                   bool lo_open = false) const {
    if (!v.is_number()) fail(where, "must be a number");
    double d = v.get<double>();
    if (lo_open ? !(d > lo) : !(d >= lo)) fail(where, std::string("must be ") + (lo_open ? "> " : ">= ") + fmt(lo));
    if (d > hi) fail(where, "must be <= " + fmt(hi));
    return d;
  }

  long long integer(const nlohmann::json& obj, const std::string& where, const char* k, long long def, long long lo,
                    long long hi) const {
    const nlohmann::json* v = find(obj, k);
    if (!v) return def;
    return int_value(*v, key(where, k), lo, hi);
  }

  long long int_value(const nlohmann::json& v, const std::string& where, long long lo, long long hi) const {
    if (!v.is_number_integer()) fail(where, "must be an integer");
    long long x = v.get<long long>();
    if (x < lo) fail(where, "must be >= " + std::to_string(lo));
    if (x > hi) fail(where, "must be <= " + std::to_string(hi));
    return x;
  }

  const nlohmann::json& array(const nlohmann::json& obj, const std::string& where, const char* k,
                              bool non_empty) const {
    const nlohmann::json* v = find(obj, k);
    if (!v) fail(key(where, k), "required");
    if (!v->is_array()) fail(key(where, k), "must be an array");
    if (non_empty && v->empty()) fail(key(where, k), "must not be empty");
    return *v;
  }

  static std::string fmt(double d) {
    std::ostringstream os;
    os << d;
    return os.str();
  }

 private:
  std::string file_;
};

}  // namespace refenc::profile
