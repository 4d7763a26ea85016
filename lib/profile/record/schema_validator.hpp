// A small JSON Schema validator (the subset reports/report.schema.json uses): type (string or list),
// required, properties, additionalProperties (boolean), items, enum, const, minimum, maximum, minItems.
//
//   std::vector<std::string> errors = validate_schema(schema, report);   // empty = valid
//   // errors[0] == "cells[2].stages.e2e.p95: expected number, got string"
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace refenc::profile {

/// Every violation of `schema` by `doc`, each prefixed by its JSON path. Empty when valid.
std::vector<std::string> validate_schema(const nlohmann::json& schema, const nlohmann::json& doc);

}  // namespace refenc::profile
