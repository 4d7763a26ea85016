#include <catch2/catch.hpp>

#include <set>
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

TEST_CASE("key: the fast hash separates fields, including values swapped between fields") {
  refenc::ReferenceEncodeKey base{"m", "r", "e", "c", "codes", "0123456789abcdef0123456789", ""};
  const std::size_t h = refenc::hash_value(base);
  CHECK(refenc::hash_value(base) == h);  // deterministic in-process
  std::set<std::size_t> seen{h};
  std::string refenc::ReferenceEncodeKey::*fields[] = {
      &refenc::ReferenceEncodeKey::model_id,      &refenc::ReferenceEncodeKey::model_revision,
      &refenc::ReferenceEncodeKey::encoder_id,    &refenc::ReferenceEncodeKey::encoder_config_hash,
      &refenc::ReferenceEncodeKey::artifact_kind, &refenc::ReferenceEncodeKey::input_key,
      &refenc::ReferenceEncodeKey::options_key};
  for (auto f : fields) {
    auto k = base;
    k.*f += "x";
    CHECK(seen.insert(refenc::hash_value(k)).second);
  }
  auto swapped = base;
  std::swap(swapped.model_id, swapped.model_revision);
  CHECK(seen.insert(refenc::hash_value(swapped)).second);
  auto moved = base;  // the same characters split differently between two fields
  moved.model_id = "mr";
  moved.model_revision = "";
  CHECK(seen.insert(refenc::hash_value(moved)).second);
  std::set<std::size_t> many;
  for (int i = 0; i < 10000; ++i) {
    auto k = base;
    k.input_key = std::to_string(i);
    many.insert(refenc::hash_value(k));
  }
  CHECK(many.size() == 10000);
}
