// The error parse_manifest gives for a manifest read as `path` (checked to be a bad-input error), or
// "no error": what each manifest test compares with the one line it expects.
//
//   CHECK(manifest_error(j, "workloads/t.json") == "workloads/t.json: models: required");
#pragma once

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "profile/manifest/manifest.hpp"

namespace refenc::profile::testing {

inline std::string manifest_error(const nlohmann::json& j, const std::string& path) {
  try {
    parse_manifest(j, path);
  } catch (const refenc::Error& e) {
    CHECK(e.kind() == refenc::ErrorKind::bad_input);
    return e.what();
  }
  return "no error";
}

}  // namespace refenc::profile::testing
