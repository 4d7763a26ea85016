// Cache keys: every identity part, what changes them, and determinism across processes.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "artifact_digest.hpp"
#include "child_mode.hpp"
#include "test_clips.hpp"

using namespace refenc;
using namespace refenc::encoders;
using namespace refenc::encoders::test;

namespace {

ReferenceEncodeKey key_of(ModelHook& hook, const EncodeRequest& req) {
  auto key = hook.cache_key(hook.normalize_input(req));
  REQUIRE(key.has_value());
  return *key;
}

/// test_encoders --child-digest MODEL: prints the digest of MODEL's tiny artifact for a fixed clip.
int print_child_digest(int argc, char** argv) {
  if (argc != 3) return 2;
  std::cout << fixed_clip_digest(argv[2]) << std::endl;
  return 0;
}
const refenc::test::RegisterChildMode child_digest("--child-digest", print_child_digest);

std::string run_child(const std::string& model) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string cmd = "'" + self + "' --child-digest " + model;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  REQUIRE(pipe);
  std::array<char, 256> buf{};
  std::string out;
  while (fgets(buf.data(), buf.size(), pipe.get())) out += buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

TEST_CASE("keys carry every identity part", "[encoders][keys]") {
  auto hook = make_hook("fish-s2-pro", tiny());
  ReferenceEncodeKey k = key_of(*hook, clip_request(44100, 20000, 1));
  CHECK(k.model_id == "fish-s2-pro");
  CHECK(k.model_revision == "proxy-v1");
  CHECK(k.encoder_id == hook->info().encoder_id);
  CHECK(k.encoder_config_hash == hook->config().config_hash);
  CHECK(k.encoder_config_hash.size() == 64);
  CHECK(k.artifact_kind == "codes");
  CHECK(k.input_key.size() == 64);
  CHECK(k.options_key.empty());
  CHECK(hook->config().config_json.find("\"scale\":\"tiny\"") != std::string::npos);
}

TEST_CASE("keys change with scale, dtype and one byte of audio, for every model", "[encoders][keys]") {
  for (const ModelInfo& m : models()) {
    INFO(m.name);
    auto tiny_hook = make_hook(m.name, tiny());
    auto small_hook = make_hook(m.name, {.scale = "small"});
    auto bf16_hook = make_hook(m.name, {.dtype = "bfloat16"});
    auto again = make_hook(m.name, tiny());
    const EncodeRequest req = clip_request(m.sample_rate, m.sample_rate / 2, 1);
    const ReferenceEncodeKey base = key_of(*tiny_hook, req);
    CHECK(key_of(*again, req) == base);
    CHECK(key_of(*small_hook, req).encoder_config_hash != base.encoder_config_hash);
    CHECK(key_of(*bf16_hook, req).encoder_config_hash != base.encoder_config_hash);

    std::string bytes = wav_bytes(clip_samples(m.sample_rate, m.sample_rate / 2, 1), m.sample_rate);
    bytes[bytes.size() - 1] = static_cast<char>(bytes[bytes.size() - 1] ^ 1);
    const ReferenceEncodeKey flipped = key_of(*tiny_hook, {audio::ReferenceSource::from_bytes(bytes), ""});
    CHECK(flipped.input_key != base.input_key);
    CHECK(flipped.digest() != base.digest());
  }
}

TEST_CASE("only qwen3-tts keys the reference text and the x-vector-only mode", "[encoders][keys]") {
  auto qwen = make_hook("qwen3-tts", tiny());
  const ReferenceEncodeKey a = key_of(*qwen, clip_request(24000, 12000, 1, "one text"));
  const ReferenceEncodeKey b = key_of(*qwen, clip_request(24000, 12000, 1, "another text"));
  EncodeRequest x = clip_request(24000, 12000, 1, "one text");
  x.x_vector_only = true;
  const ReferenceEncodeKey c = key_of(*qwen, x);
  CHECK(a.options_key.size() == 64);
  CHECK(a.options_key != b.options_key);
  CHECK(a.options_key != c.options_key);
  CHECK(a.input_key == b.input_key);
  CHECK(key_of(*qwen, clip_request(24000, 12000, 1, "one text")) == a);

  for (const char* name : {"fish-s2-pro", "moss-tts-local"}) {
    auto hook = make_hook(name, tiny());
    const int rate = hook->info().sample_rate;
    CHECK(key_of(*hook, clip_request(rate, rate / 2, 1, "one text")) ==
          key_of(*hook, clip_request(rate, rate / 2, 1, "another text")));
  }
}

TEST_CASE("weights and artifacts are identical across processes", "[encoders][determinism]") {
  for (const ModelInfo& m : models()) {
    INFO(m.name);
    const std::string here = fixed_clip_digest(m.name);
    CHECK(here.size() == 64);
    CHECK(run_child(m.name) == here);
  }
}

TEST_CASE("the service caches by key: a second request is a memory hit with equal artifacts", "[encoders][keys]") {
  EncodeService service(make_hook("qwen3-tts", tiny()));
  const EncodeRequest req = clip_request(24000, 12000, 6, "text");
  RequestTrace t1, t2;
  Artifact first = service.get_or_encode(req, "clip", &t1);
  Artifact second = service.get_or_encode(req, "clip", &t2);
  CHECK(t1.outcome == RequestOutcome::encoded);
  CHECK(t2.outcome == RequestOutcome::hit);
  CHECK(first == second);
}
