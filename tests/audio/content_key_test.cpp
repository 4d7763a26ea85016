#include "audio/content_key.hpp"
#include "audio/reference_loader.hpp"
#include "core/sha256.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

using namespace refenc;
using namespace refenc::audio;
using namespace refenc::audio::test;

TEST_CASE("one clip sent as path, bytes, base64 and data URI shares one key", "[key]") {
  TempDir dir;
  const std::string path = dir.file("clip.flac");
  REQUIRE(write_audio(path, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 22050, 2, 22050));
  const std::string bytes = read_bytes(path);
  const std::string b64 = encode_base64(bytes);
  const std::string expected = sha256_hex(bytes);
  const ReferenceSource sources[] = {
      ReferenceSource::from_path(path),
      ReferenceSource::from_bytes(bytes),
      ReferenceSource::from_base64(b64),
      ReferenceSource::from_data_uri("data:audio/flac;base64," + b64),
      ReferenceSource::parse("data:audio/flac;base64," + b64),
  };
  LoadOptions options;
  for (const auto& s : sources) {
    INFO(s.describe());
    CHECK(reference_content_key(s) == expected);
    const LoadedReference r = load_reference(s, options);
    CHECK(r.content_key == expected);
    CHECK(r.payload_bytes == bytes.size());
  }
  // A copy under another name keys the same: never by file name.
  const std::string copy = dir.file("other-name.wav");
  write_bytes(copy, bytes);
  CHECK(reference_path_cache_key(copy) == expected);
}

TEST_CASE("changing one byte changes the key", "[key]") {
  TempDir dir;
  const std::string path = dir.file("clip.wav");
  REQUIRE(write_audio(path, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, 16000));
  std::string bytes = read_bytes(path);
  const std::string before = reference_content_key(ReferenceSource::from_bytes(bytes));
  bytes[bytes.size() / 2] ^= 1;
  CHECK(reference_content_key(ReferenceSource::from_bytes(bytes)) != before);
  CHECK(is_content_digest(before));
}

TEST_CASE("URLs key by a supplied digest only", "[key]") {
  const std::string digest(64, 'a');
  CHECK(reference_content_key(ReferenceSource::from_url("https://h/a.wav")).empty());
  CHECK(reference_content_key(ReferenceSource::from_url("https://h/a.wav", digest)) == digest);
  CHECK_THROWS_WITH(reference_content_key(ReferenceSource::from_url("https://h/a.wav", "abc")),
                    Catch::Contains("not a lower-case SHA-256"));
}

TEST_CASE("sentinel digests depend on size and the three sampled blocks only", "[key]") {
  std::string big(100000, 'a');
  const std::string s = sentinel_digest(big);
  std::string changed_outside = big;
  changed_outside[20000] = 'b';  // between the first and the middle block
  CHECK(sentinel_digest(changed_outside) == s);
  std::string changed_inside = big;
  changed_inside[50000] = 'b';  // in the middle block
  CHECK(sentinel_digest(changed_inside) != s);
  CHECK(sentinel_digest("") != sentinel_digest(std::string(1, '\0')));
}
