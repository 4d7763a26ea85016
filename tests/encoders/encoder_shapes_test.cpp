// Artifact shapes, dtypes, value ranges and frame counts around frame boundaries, per family.
#include <catch2/catch.hpp>

#include <algorithm>

#include "test_clips.hpp"

using namespace refenc;
using namespace refenc::encoders;
using namespace refenc::encoders::test;

namespace {

void check_range(const HostTensor& t, std::int64_t lo, std::int64_t hi) {
  auto v = t.values<std::int64_t>();
  REQUIRE(!v.empty());
  CHECK(*std::min_element(v.begin(), v.end()) >= lo);
  CHECK(*std::max_element(v.begin(), v.end()) <= hi);
}

}  // namespace

TEST_CASE("fish-s2-pro codes are int64 [10, ceil(samples / 2048)]", "[encoders][shapes]") {
  auto hook = make_hook("fish-s2-pro", tiny());
  for (std::int64_t n : {12287, 12288, 12289, 14335, 14336}) {
    Artifact a = hook->encode_one(hook->normalize_input(clip_request(44100, n, 1)));
    const HostTensor& codes = a.tensor("codes");
    INFO("samples " << n);
    CHECK(codes.describe() == "int64[10, " + std::to_string((n + 2047) / 2048) + "]");
    CHECK(a.meta.at("model") == "fish-s2-pro");
    check_range(codes, 0, 4095);
    auto v = codes.values<std::int64_t>();
    CHECK(*std::max_element(v.begin() + codes.shape()[1], v.end()) <= 1023);  // rows 1..9
  }
}

TEST_CASE("qwen3-tts prompt holds ref_code [T, 16], the speaker embedding and the text", "[encoders][shapes]") {
  auto hook = make_hook("qwen3-tts", tiny());
  for (std::int64_t n : {7679, 7680, 7681}) {
    Artifact a = hook->encode_one(hook->normalize_input(clip_request(24000, n, 2, "Hello, world.")));
    INFO("samples " << n);
    CHECK(a.tensor("ref_code").describe() == "int64[" + std::to_string((n + 1919) / 1920) + ", 16]");
    check_range(a.tensor("ref_code"), 0, 2047);
    CHECK(a.tensor("ref_spk_embedding").describe() == "float32[128]");
    CHECK(a.meta.at("ref_text") == "Hello, world.");
    CHECK(a.meta.at("x_vector_only") == "false");
  }
  EncodeRequest xvec = clip_request(24000, 24000, 2, "Hello");
  xvec.x_vector_only = true;
  Artifact a = hook->encode_one(hook->normalize_input(xvec));
  CHECK(a.tensors.count("ref_code") == 0);
  CHECK(a.tensor("ref_spk_embedding").describe() == "float32[128]");
  CHECK(a.meta.at("x_vector_only") == "true");
}

TEST_CASE("moss-tts-local codes are int64 [floor(samples / 1920), 32]", "[encoders][shapes]") {
  auto hook = make_hook("moss-tts-local", tiny());
  for (std::int64_t n : {7679, 7680, 7681}) {
    Artifact a = hook->encode_one(hook->normalize_input(clip_request(24000, n, 4)));
    INFO("samples " << n);
    CHECK(a.tensor("codes").describe() == "int64[" + std::to_string(n / 1920) + ", 32]");  // whole frames, as upstream
    check_range(a.tensor("codes"), 0, 1023);
  }
}

TEST_CASE("clips at another rate are resampled to the model's rate", "[encoders][shapes]") {
  auto hook = make_hook("fish-s2-pro", tiny());
  EncodeInput in = hook->normalize_input(clip_request(16000, 16000, 5));
  CHECK(in.audio.sample_rate == 44100);
  Artifact a = hook->encode_one(in);
  CHECK(a.tensor("codes").shape()[1] == hook->info().frames_for(static_cast<std::int64_t>(in.audio.samples.size())));
}

TEST_CASE("models() describes the three families", "[encoders][registry]") {
  REQUIRE(models().size() == 3);
  CHECK(model_info("fish-s2-pro").can_encode_batch);
  CHECK_FALSE(model_info("qwen3-tts").can_encode_batch);
  CHECK_FALSE(model_info("moss-tts-local").can_encode_batch);
  CHECK(model_info("moss-tts-local").has_internal_batching);
  CHECK(model_info("fish-s2-pro").frames_for(441000) == 216);
  CHECK(model_info("moss-tts-local").frames_for(240000) == 125);
  CHECK(model_info("moss-tts-local").frames_for(241919) == 125);
  CHECK(model_info("fish-s2-pro").frames_for(440320) == 215);
  CHECK(model_info("fish-s2-pro").frames_for(440321) == 216);
  CHECK(make_hook("qwen3-tts", tiny())->can_encode_batch() == false);
  CHECK(make_hook("moss-tts-local", tiny())->can_encode_batch() == false);
  CHECK(make_hook("fish-s2-pro", tiny())->can_encode_batch() == true);
}

TEST_CASE("bad names and options are config errors", "[encoders][errors]") {
  auto kind_of = [](auto fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::io;
  };
  CHECK(kind_of([] { make_hook("whisper", tiny()); }) == ErrorKind::config);
  CHECK(kind_of([] { make_hook("fish-s2-pro", {.scale = "huge"}); }) == ErrorKind::config);
  CHECK(kind_of([] { make_hook("fish-s2-pro", {.dtype = "float16"}); }) == ErrorKind::config);
  CHECK(kind_of([] { make_hook("fish-s2-pro", {.device = "tpu"}); }) == ErrorKind::config);
  CHECK(kind_of([] { make_hook("qwen3-tts", {.module_path = "/nonexistent/module.pt"}); }) == ErrorKind::config);
  CHECK_THROWS_WITH(make_hook("whisper", tiny()), Catch::Contains("whisper"));
}

TEST_CASE("bad audio reaches the caller as bad_input with its message", "[encoders][errors]") {
  EncodeService service(make_hook("fish-s2-pro", tiny()));
  EncodeRequest junk{audio::ReferenceSource::from_bytes("this is not an audio file at all"), ""};
  try {
    service.get_or_encode(junk, "junk clip");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::bad_input);
    CHECK_THAT(e.what(), Catch::StartsWith("junk clip: "));
    CHECK(std::string(e.what()).size() > std::string("junk clip: ").size());
  }
  EncodeRequest missing{audio::ReferenceSource::from_path("/nonexistent/clip.wav"), ""};
  CHECK_THROWS_MATCHES(service.get_or_encode(missing), Error, Catch::Matchers::Predicate<Error>([](const Error& e) {
                         return e.kind() == ErrorKind::bad_input &&
                                std::string(e.what()).find("/nonexistent/clip.wav") != std::string::npos;
                       }));
}
