// Internal to the record module: typed reads of JSON fields that name the file and the field's path
// in every error, and take a default when a field is absent.
//
//   JsonFields in("runs/x/report.json");
//   std::string name = in.str(model, "models[0]", "name", "", /*required=*/true);
//   const nlohmann::json& cells = in.arr(report, "", "cells");   // empty array when absent
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "profile/record/gate_report.hpp"
#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// Reads fields of one JSON document, naming it and the field in every error.
class JsonFields {
 public:
  explicit JsonFields(std::string file) : file_(std::move(file)) {}

  /// Throws Error(bad_input) "<file>: <where>: <what>".
  [[noreturn]] void fail(const std::string& where, const std::string& what) const;

  static std::string key(const std::string& where, const char* key) { return where.empty() ? key : where + "." + key; }
  static std::string idx(const std::string& where, std::size_t i) { return where + "[" + std::to_string(i) + "]"; }

  /// The field, or null when `j` is not an object or lacks it.
  const nlohmann::json* find(const nlohmann::json& j, const char* key) const;

  std::string str(const nlohmann::json& j, const std::string& where, const char* key, const std::string& fallback = "",
                  bool required = false) const;
  double num(const nlohmann::json& j, const std::string& where, const char* key, double fallback = 0,
             bool required = false) const;
  std::int64_t integer(const nlohmann::json& j, const std::string& where, const char* key, std::int64_t fallback = 0,
                       bool required = false) const;
  bool flag(const nlohmann::json& j, const std::string& where, const char* key, bool fallback = false) const;
  /// An object field (an empty object when absent).
  const nlohmann::json& obj(const nlohmann::json& j, const std::string& where, const char* key) const;
  /// An array field (an empty array when absent).
  const nlohmann::json& arr(const nlohmann::json& j, const std::string& where, const char* key) const;
  /// A field of a closed vocabulary read with `parse` (labels.hpp); `fallback` when absent, required
  /// when `fallback` is empty.
  template <class Parse>
  auto label(const nlohmann::json& j, const std::string& where, const char* k, const std::string& fallback,
             Parse parse) const {
    std::string text = str(j, where, k, fallback, fallback.empty());
    try {
      return parse(text);
    } catch (const std::exception& e) {
      fail(key(where, k), e.what());
    }
  }

 private:
  std::string file_;
};

/// Reads report.json's gate block (result_json.cpp).
GateReport gate_from_json(const JsonFields& in, const nlohmann::json& gate);

/// A cell of report.json and back (cell_json.cpp).
nlohmann::json cell_to_json(const Cell& cell);
Cell cell_from_json(const JsonFields& in, const nlohmann::json& cell, const std::string& where);

/// The capacity block of report.json and the gate's capacity criterion, both ways (capacity_json.cpp).
nlohmann::json capacity_to_json(const CapacityReport& capacity);
CapacityReport capacity_from_json(const JsonFields& in, const nlohmann::json& capacity);
nlohmann::json capacity_result_json(const CapacityResult& result);
CapacityResult capacity_result_from_json(const JsonFields& in, const nlohmann::json& result, const std::string& where);
/// A cell's A/A flag, host load and contamination, and report.json's "noise" block (noise_json.cpp).
void add_noise_fields(const Cell& cell, nlohmann::json& out);
void read_noise_fields(const JsonFields& in, const nlohmann::json& cell, const std::string& where, Cell& into);
nlohmann::json noise_json(const NoiseSettings& noise);
NoiseSettings read_noise(const JsonFields& in, const nlohmann::json& noise);
/// A gate model's contaminated cells and verdict stability (noise_json.cpp).
void add_stability_fields(const ModelVerdict& model, nlohmann::json& out);
void read_stability_fields(const JsonFields& in, const nlohmann::json& model, const std::string& where,
                           ModelVerdict& into);

}  // namespace refenc::profile
