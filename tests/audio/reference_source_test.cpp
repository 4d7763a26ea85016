#include "audio/base64.hpp"
#include "audio/data_uri.hpp"
#include "audio/reference_loader.hpp"
#include "core/error.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

using namespace refenc;
using namespace refenc::audio;
using Kind = ReferenceSource::Kind;
using namespace std::string_literals;

TEST_CASE("parse tells paths, data URIs and URLs apart", "[source]") {
  CHECK(ReferenceSource::parse("clip.flac").kind == Kind::path);
  CHECK(ReferenceSource::parse("/abs/dir with space/clip.wav").kind == Kind::path);
  CHECK(ReferenceSource::parse("data:audio/wav;base64,AAAA").kind == Kind::data_uri);
  CHECK(ReferenceSource::parse("DATA:audio/wav;base64,AAAA").kind == Kind::data_uri);
  CHECK(ReferenceSource::parse("http://example.com/a.wav").kind == Kind::url);
  CHECK(ReferenceSource::parse("HTTPS://example.com/a.wav").kind == Kind::url);
  CHECK(ReferenceSource::parse("s3://bucket/a.wav").kind == Kind::url);
  CHECK(ReferenceSource::parse("dir/http://x").kind == Kind::path);
  CHECK(ReferenceSource::parse("data.wav").kind == Kind::path);
}

TEST_CASE("describe names the input without leaking payloads or URL secrets", "[source]") {
  CHECK(ReferenceSource::from_path("clip.flac").describe() == "clip.flac");
  CHECK(ReferenceSource::from_bytes(std::string(4096, 'x')).describe() == "4096 raw bytes");
  CHECK(ReferenceSource::from_base64("QUJD").describe() == "base64 payload (4 chars)");
  CHECK(ReferenceSource::from_data_uri("data:,abc").describe() == "data URI (9 bytes)");
  CHECK(ReferenceSource::from_url("https://user:pw@host/a.wav?token=1#f").describe() == "URL https://host/a.wav");
}

TEST_CASE("base64 decodes both alphabets, with or without padding and whitespace", "[source][base64]") {
  CHECK(decode_base64("QUJD", "t", 100) == "ABC");
  CHECK(decode_base64("QUI=", "t", 100) == "AB");
  CHECK(decode_base64("QUI", "t", 100) == "AB");
  CHECK(decode_base64("QQ==", "t", 100) == "A");
  CHECK(decode_base64("QU\r\nJD\n", "t", 100) == "ABC");
  CHECK(decode_base64("-_-_", "t", 100) == decode_base64("+/+/", "t", 100));
  CHECK(decode_base64("", "t", 100).empty());
  const std::string bytes = "\x00\x01\xfe\xffRIFF"s;
  CHECK(decode_base64(test::encode_base64(bytes), "t", 100) == bytes);
}

TEST_CASE("base64 refuses malformed text and oversized payloads", "[source][base64]") {
  CHECK_THROWS_WITH(decode_base64("QU$D", "b64", 100), "b64: malformed base64: invalid character '$' at offset 2");
  CHECK_THROWS_WITH(decode_base64("QUJDQ", "b64", 100), Catch::Contains("truncated"));
  CHECK_THROWS_WITH(decode_base64("QQ=A", "b64", 100), Catch::Contains("data after '=' padding"));
  CHECK_THROWS_WITH(decode_base64("QQ===", "b64", 100), Catch::Contains("padding"));
  CHECK_THROWS_WITH(decode_base64("QUJDQUJD", "b64", 5), Catch::Contains("payload too large"));
}

TEST_CASE("data URIs: base64, percent-encoded, media types", "[source][data_uri]") {
  const DataUri u = parse_data_uri("data:Audio/WAV;codecs=1;base64,QUJD", "d");
  CHECK(u.media_type == "audio/wav");
  CHECK(u.base64);
  CHECK(u.payload == "QUJD");
  CHECK(decode_data_uri("data:audio/wav;base64,QUJD", "d", 100) == "ABC");
  CHECK(decode_data_uri("data:audio/wav;base64,QUI%3D", "d", 100) == "AB");
  CHECK(decode_data_uri("data:,A%42C", "d", 100) == "ABC");
  CHECK(decode_data_uri("data:application/octet-stream;base64,QUJD", "d", 100) == "ABC");
  CHECK_THROWS_WITH(decode_data_uri("data:audio/wav;base64", "d", 100), Catch::Contains("no ','"));
  CHECK_THROWS_WITH(decode_data_uri("data:text/plain;base64,QUJD", "d", 100), Catch::Contains("is not audio"));
  CHECK_THROWS_WITH(decode_data_uri("data:,A%4", "d", 100), Catch::Contains("bad percent escape"));
  CHECK_THROWS_WITH(decode_data_uri("data:audio/wav;base64,QU*D", "d", 100), Catch::Contains("malformed base64"));
  CHECK_THROWS_WITH(decode_data_uri("data:audio/wav;base64;x=y,QUJD", "d", 100), Catch::Contains("last parameter"));
  CHECK_THROWS_WITH(decode_data_uri("http://x", "d", 100), Catch::Contains("does not start with"));
}
