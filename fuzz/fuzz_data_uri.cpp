// libFuzzer target: ReferenceSource parsing and the base64 / data URI decoders. Any input must either
// decode or throw refenc::Error(bad_input); nothing else (crash, leak, other exception) is allowed.
//
//   scripts/fuzz.sh 30        # builds build/fuzz/fuzz_data_uri and runs it on fuzz/corpus/fuzz_data_uri
#include "audio/base64.hpp"
#include "audio/data_uri.hpp"
#include "audio/reference_loader.hpp"
#include "core/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace refenc;
using namespace refenc::audio;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t limit = 1 << 16;
  const ReferenceSource parsed = ReferenceSource::parse(text);
  (void)parsed.describe();
  try {
    const std::string bytes = decode_base64(text, "fuzz", limit);
    if (bytes.size() > text.size()) std::abort();  // base64 never expands
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::bad_input) std::abort();
  }
  try {
    (void)decode_data_uri(text, "fuzz", limit);
    (void)decode_data_uri("data:audio/wav;base64," + text, "fuzz", limit);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::bad_input) std::abort();
  }
  try {
    // Keys never decode audio; a path source is skipped to keep the fuzzer off the file system.
    if (parsed.kind != ReferenceSource::Kind::path) (void)reference_content_key(parsed);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::bad_input) std::abort();
  }
  return 0;
}
