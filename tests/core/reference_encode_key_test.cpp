#include <catch2/catch.hpp>

#include <unordered_set>

#include "core/error.hpp"
#include "core/reference_encode_key.hpp"
#include "core/sha256.hpp"

using refenc::ReferenceEncodeKey;

namespace {
ReferenceEncodeKey sample() { return {"fish-s2-pro", "proxy-v1", "modded-dac", "abc", "codes", "deadbeef", ""}; }
}  // namespace

TEST_CASE("key: equality and hashing cover all seven fields") {
  const ReferenceEncodeKey a = sample();
  std::unordered_set<ReferenceEncodeKey> set{a};
  REQUIRE(set.count(sample()) == 1);
  for (auto field : {&ReferenceEncodeKey::model_id, &ReferenceEncodeKey::model_revision,
                     &ReferenceEncodeKey::encoder_id, &ReferenceEncodeKey::encoder_config_hash,
                     &ReferenceEncodeKey::artifact_kind, &ReferenceEncodeKey::input_key,
                     &ReferenceEncodeKey::options_key}) {
    ReferenceEncodeKey b = a;
    b.*field += "x";
    CHECK_FALSE(a == b);
    CHECK(set.count(b) == 0);
    CHECK(a.digest() != b.digest());
  }
}

TEST_CASE("key: canonical string is sorted JSON and round-trips") {
  const ReferenceEncodeKey a = sample();
  CHECK(a.canonical() ==
        R"({"artifact_kind":"codes","encoder_config_hash":"abc","encoder_id":"modded-dac","input_key":"deadbeef",)"
        R"("model_id":"fish-s2-pro","model_revision":"proxy-v1","options_key":""})");
  CHECK(ReferenceEncodeKey::from_canonical(a.canonical()) == a);
  CHECK(a.digest() == refenc::sha256_hex(a.canonical()));
  CHECK(a.digest().size() == 64);
  CHECK_THROWS_AS(ReferenceEncodeKey::from_canonical("{\"model_id\":1}"), refenc::Error);
  CHECK_THROWS_AS(ReferenceEncodeKey::from_canonical("not json"), refenc::Error);
}

TEST_CASE("key: fields cannot bleed into each other") {
  ReferenceEncodeKey a = sample(), b = sample();
  a.model_id = "ab";
  a.model_revision = "c";
  b.model_id = "a";
  b.model_revision = "bc";
  CHECK(a.canonical() != b.canonical());
  a.input_key = "x\",\"options_key\":\"y";
  CHECK(ReferenceEncodeKey::from_canonical(a.canonical()) == a);
}

TEST_CASE("sha256: known vectors") {
  CHECK(refenc::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(refenc::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  refenc::Sha256 h;
  h.update("a");
  h.update("bc");
  CHECK(h.hex_digest() == refenc::sha256_hex("abc"));
}

TEST_CASE("error: with_context makes an independent copy that keeps the kind") {
  refenc::Error e(refenc::ErrorKind::timeout, "waited too long");
  refenc::Error c = e.with_context("clip 7");
  CHECK(c.kind() == refenc::ErrorKind::timeout);
  CHECK(std::string(c.what()) == "clip 7: waited too long");
  CHECK(std::string(e.what()) == "waited too long");
  CHECK(refenc::exit_code(refenc::ErrorKind::bad_input) != refenc::exit_code(refenc::ErrorKind::encode));
}
