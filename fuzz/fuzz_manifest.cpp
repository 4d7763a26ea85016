// libFuzzer target: workload manifest validation. Any JSON document must either become a Manifest or
// be refused with refenc::Error(bad_input) naming the field; no other exception (a JSON type error
// escaping the validator, say), crash or leak is allowed.
//
//   scripts/fuzz.sh 30        # builds build/fuzz/fuzz_manifest and runs it on fuzz/corpus/fuzz_manifest
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "profile/manifest/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    (void)refenc::profile::parse_manifest(j, "fuzz.json");
  } catch (const refenc::Error& e) {
    if (e.kind() != refenc::ErrorKind::bad_input) std::abort();
  }
  return 0;
}
