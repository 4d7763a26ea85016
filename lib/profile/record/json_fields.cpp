#include "profile/record/json_fields.hpp"

#include <cmath>

#include "core/error.hpp"

namespace refenc::profile {

using nlohmann::json;

void JsonFields::fail(const std::string& where, const std::string& what) const {
  throw Error(ErrorKind::bad_input, file_ + ": " + (where.empty() ? std::string() : where + ": ") + what);
}

const json* JsonFields::find(const json& j, const char* key) const {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string JsonFields::str(const json& j, const std::string& where, const char* k, const std::string& fallback,
                            bool required) const {
  const json* v = find(j, k);
  if (!v || v->is_null()) {
    if (required) fail(key(where, k), "missing");
    return fallback;
  }
  if (!v->is_string()) fail(key(where, k), std::string("expected a string, got ") + v->type_name());
  return v->get<std::string>();
}

double JsonFields::num(const json& j, const std::string& where, const char* k, double fallback, bool required) const {
  const json* v = find(j, k);
  if (!v || v->is_null()) {
    if (required) fail(key(where, k), "missing");
    return fallback;
  }
  if (!v->is_number()) fail(key(where, k), std::string("expected a number, got ") + v->type_name());
  return v->get<double>();
}

std::int64_t JsonFields::integer(const json& j, const std::string& where, const char* k, std::int64_t fallback,
                                 bool required) const {
  const json* v = find(j, k);
  if (!v || v->is_null()) {
    if (required) fail(key(where, k), "missing");
    return fallback;
  }
  if (v->is_number_integer()) return v->get<std::int64_t>();
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<std::int64_t>(d);
  }
  fail(key(where, k), std::string("expected an integer, got ") + v->type_name());
}

bool JsonFields::flag(const json& j, const std::string& where, const char* k, bool fallback) const {
  const json* v = find(j, k);
  if (!v || v->is_null()) return fallback;
  if (!v->is_boolean()) fail(key(where, k), std::string("expected a boolean, got ") + v->type_name());
  return v->get<bool>();
}

const json& JsonFields::obj(const json& j, const std::string& where, const char* k) const {
  static const json empty = json::object();
  const json* v = find(j, k);
  if (!v || v->is_null()) return empty;
  if (!v->is_object()) fail(key(where, k), std::string("expected an object, got ") + v->type_name());
  return *v;
}

const json& JsonFields::arr(const json& j, const std::string& where, const char* k) const {
  static const json empty = json::array();
  const json* v = find(j, k);
  if (!v || v->is_null()) return empty;
  if (!v->is_array()) fail(key(where, k), std::string("expected an array, got ") + v->type_name());
  return *v;
}

}  // namespace refenc::profile
