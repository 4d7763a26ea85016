#include "profile/record/schema_validator.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;

bool has_type(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  return false;
}

std::string type_name(const json& v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  return v.type_name();
}

void check(const json& s, const json& v, const std::string& path, std::vector<std::string>& errors) {
  const std::string where = path.empty() ? "(root)" : path;
  if (s.contains("type")) {
    bool ok = false;
    std::string want;
    if (s["type"].is_array()) {
      for (const auto& t : s["type"]) {
        ok = ok || has_type(v, t.get<std::string>());
        want += (want.empty() ? "" : " or ") + t.get<std::string>();
      }
    } else {
      want = s["type"].get<std::string>();
      ok = has_type(v, want);
    }
    if (!ok) {
      errors.push_back(where + ": expected " + want + ", got " + type_name(v));
      return;
    }
  }
  if (s.contains("const") && v != s["const"]) errors.push_back(where + ": must equal " + s["const"].dump());
  if (s.contains("enum")) {
    bool found = false;
    for (const auto& e : s["enum"]) found = found || e == v;
    if (!found) errors.push_back(where + ": " + v.dump() + " is not one of " + s["enum"].dump());
  }
  if (v.is_number()) {
    if (s.contains("minimum") && v.get<double>() < s["minimum"].get<double>())
      errors.push_back(where + ": must be >= " + s["minimum"].dump());
    if (s.contains("maximum") && v.get<double>() > s["maximum"].get<double>())
      errors.push_back(where + ": must be <= " + s["maximum"].dump());
  }
  if (v.is_object()) {
    if (s.contains("required"))
      for (const auto& r : s["required"])
        if (!v.contains(r.get<std::string>()))
          errors.push_back(where + ": missing required field '" + r.get<std::string>() + "'");
    const json* props = s.contains("properties") ? &s["properties"] : nullptr;
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string child = path.empty() ? it.key() : path + "." + it.key();
      if (props && props->contains(it.key())) {
        check((*props)[it.key()], it.value(), child, errors);
      } else if (s.contains("additionalProperties")) {
        const json& ap = s["additionalProperties"];
        if (ap.is_boolean() && !ap.get<bool>())
          errors.push_back(child + ": unexpected field");
        else if (ap.is_object())
          check(ap, it.value(), child, errors);
      }
    }
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>())
      errors.push_back(where + ": needs at least " + s["minItems"].dump() + " items");
    if (s.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], path + "[" + std::to_string(i) + "]", errors);
  }
}

}  // namespace

std::vector<std::string> validate_schema(const json& schema, const json& doc) {
  std::vector<std::string> errors;
  check(schema, doc, "", errors);
  return errors;
}

}  // namespace refenc::profile
