#include <catch2/catch.hpp>

#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>
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
  for (auto field :
       {&ReferenceEncodeKey::model_id, &ReferenceEncodeKey::model_revision, &ReferenceEncodeKey::encoder_id,
        &ReferenceEncodeKey::encoder_config_hash, &ReferenceEncodeKey::artifact_kind, &ReferenceEncodeKey::input_key,
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

namespace {
std::string hex_of(const std::string& s) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += digits[c >> 4];
    out += digits[c & 0xf];
  }
  return out;
}

/// sha256 of Python's json.dumps(key, sort_keys=True, separators=(",", ":")), fields passed as hex of
/// their UTF-8 bytes; no value when /usr/bin/python3 cannot be run.
std::optional<std::string> python_digest(const ReferenceEncodeKey& k) {
  if (access("/usr/bin/python3", X_OK) != 0) return std::nullopt;
  std::string cmd =
      "/usr/bin/python3 -c 'import sys,json,hashlib;"
      "n=[\"model_id\",\"model_revision\",\"encoder_id\",\"encoder_config_hash\",\"artifact_kind\",\"input_key\","
      "\"options_key\"];"
      "d={a:bytes.fromhex(b[1:-1]).decode(\"utf-8\") for a,b in zip(n,sys.argv[1:])};"
      "print(hashlib.sha256(json.dumps(d,sort_keys=True,separators=(\",\",\":\")).encode()).hexdigest())'";
  for (const std::string* f : {&k.model_id, &k.model_revision, &k.encoder_id, &k.encoder_config_hash, &k.artifact_kind,
                               &k.input_key, &k.options_key})
    cmd += " x" + hex_of(*f) + "x";  // x...x keeps an empty field an argument; b[1:-1] strips it
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  char buf[128] = {};
  const bool read = std::fgets(buf, sizeof buf, p) != nullptr;
  if (pclose(p) != 0 || !read) return std::nullopt;
  std::string out(buf);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

ReferenceEncodeKey escapes_key() {
  return {"m\"q\\x", "r\n\t\b\f\r", "e\x01\x1f", "/slash/", "codes ~", "0123456789abcdef", "opt"};
}
}  // namespace

TEST_CASE("key: ASCII keys keep their digests (disk-tier file names depend on them)") {
  // Digests written by the earlier canonical form (nlohmann::json's dump): they must not change.
  CHECK(sample().digest() == "2c7cdf176c24462d06e03e1104f89e1d5b7e58684921dc7f76317fe10a8faf9f");
  CHECK(escapes_key().digest() == "ac3b77b62afa4ba783890487ba299fb89b772c18d126b0919dd9b27558ae0a83");
  CHECK(escapes_key().canonical() ==
        R"({"artifact_kind":"codes ~","encoder_config_hash":"/slash/","encoder_id":"e\u0001\u001f",)"
        R"("input_key":"0123456789abcdef","model_id":"m\"q\\x","model_revision":"r\n\t\b\f\r","options_key":"opt"})");
}

TEST_CASE("key: non-ASCII fields are written as Python's json.dumps writes them") {
  ReferenceEncodeKey k = sample();
  k.model_id = "caf\xc3\xa9";                           // U+00E9
  k.options_key = "\xe2\x82\xac \xf0\x9f\x8e\xa4\x7f";  // U+20AC, U+1F3A4 (astral), DEL
  const std::string c = k.canonical();
  CHECK(c.find(R"("model_id":"caf\u00e9")") != std::string::npos);
  CHECK(c.find(R"("options_key":"\u20ac \ud83c\udfa4\u007f")") != std::string::npos);
  CHECK(ReferenceEncodeKey::from_canonical(c) == k);
}

TEST_CASE("key: a field that is not well-formed UTF-8 is refused with bad_input") {
  for (std::string bad : {std::string("\xc3"), std::string("\xc0\x80"), std::string("\xed\xa0\x80"),
                          std::string("\xf4\x90\x80\x80"), std::string("\xff"),
                          std::string("a\x80"
                                      "b"),
                          std::string("\xe2\x82")}) {
    ReferenceEncodeKey k = sample();
    k.input_key = bad;
    try {
      (void)k.digest();
      FAIL("accepted invalid UTF-8");
    } catch (const refenc::Error& e) {
      CHECK(e.kind() == refenc::ErrorKind::bad_input);
    }
  }
}

TEST_CASE("key: digests match Python's for non-ASCII and control characters") {
  std::vector<ReferenceEncodeKey> keys{sample(), escapes_key()};
  ReferenceEncodeKey k = sample();
  k.model_id = "caf\xc3\xa9";
  k.model_revision = "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e";  // 日本語
  k.encoder_id = "\xf0\x9f\x8e\xa4\xf0\x90\x80\x80";          // astral: surrogate pairs
  k.artifact_kind = std::string(
      "\x7f\x1b\x0b\0"
      "end",
      7);                                                              // DEL, ESC, VT, NUL
  k.options_key = "text=\"Gr\xc3\xbc\xc3\x9f dich\"\\\n\xef\xbf\xbf";  // quote, backslash, U+FFFF
  keys.push_back(k);
  for (const ReferenceEncodeKey& key : keys) {
    std::optional<std::string> py = python_digest(key);
    if (!py) {
      WARN("python3 not available: digest comparison skipped");
      return;
    }
    CHECK(key.digest() == *py);
  }
}
