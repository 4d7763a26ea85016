// Qwen3-TTS from a model folder in the published layout: parity with Qwen3-TTS's own speech tokenizer and
// speaker encoder on the same weights (fixtures made by upstream's code,
// tests/encoders/fixtures/qwen3-tts/PROVENANCE.md), and every kind of bad checkpoint as one clear error.
//
// The network is fed the fixture's 24 kHz waveform itself (upstream resamples with soxr, refenc with its
// own filter), so this is the encoders' parity, not the resamplers'.
#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "encoders/checkpoint.hpp"
#include "encoders/encoder_hook.hpp"
#include "encoders/network.hpp"
#include "util/source_dir.hpp"
#include "checkpoint_files.hpp"  // last: it includes Catch after LibTorch

using namespace refenc;
using namespace refenc::encoders;
using namespace refenc::encoders::test;
namespace fs = std::filesystem;

namespace {

const fs::path kQwenFixtures = fs::path(refenc::source_dir()) / "tests/encoders/fixtures/qwen3-tts";
const char* const kQwenClips[] = {"en-m-44k", "fr-f-44k"};

EncoderOptions qwen_checkpoint(const fs::path& folder, const std::string& scale = "tiny") {
  return {.scale = scale, .checkpoint = folder.string(), .threads = 1};
}

/// A copy of the fixture folder that a test may change.
void copy_fixture_folder(const fs::path& to) {
  fs::copy(kQwenFixtures, to, fs::copy_options::recursive);
  fs::remove(to / "expected.safetensors");
}

struct Expected : ExpectedFile {
  Expected() : ExpectedFile(kQwenFixtures / "expected.safetensors") {}
  std::vector<float> wave(const std::string& clip) const { return floats(clip + ".wave_24000"); }
};

NetworkOutput encode(Network& net, const std::vector<float>& wave, bool x_vector_only = false) {
  NetworkItem item{wave, x_vector_only};
  return std::move(net.encode(std::span(&item, 1)).front());
}

std::string qwen_load_error(const fs::path& folder, const std::string& scale = "tiny") {
  return load_error("qwen3-tts", qwen_checkpoint(folder, scale));
}

}  // namespace

TEST_CASE("qwen3-tts from upstream's checkpoint gives upstream's codes and speaker embedding",
          "[encoders][qwen][checkpoint]") {
  auto net = make_network("qwen3-tts", qwen_checkpoint(kQwenFixtures));
  CHECK(net->config().model_revision.rfind("checkpoint:", 0) == 0);
  const Expected expected;
  for (const char* clip : kQwenClips) {
    INFO(clip << " (the codes follow the CPU kernels: run with OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2, "
                 "as ctest does)");
    const NetworkOutput out = encode(*net, expected.wave(clip));
    const at::Tensor want = expected.tensor(std::string(clip) + ".codes");  // upstream's ref_code [T, 16]
    const HostTensor& codes = out.at("ref_code");
    REQUIRE(codes.shape() == want.sizes().vec());
    const auto got = codes.values<std::int64_t>();
    std::size_t differ = 0;
    for (std::int64_t i = 0; i < want.numel(); ++i) differ += got[i] != want.data_ptr<std::int64_t>()[i];
    CHECK(differ == 0);

    const at::Tensor want_embedding = expected.tensor(std::string(clip) + ".spk_embedding");
    const HostTensor& embedding = out.at("ref_spk_embedding");
    REQUIRE(embedding.shape() == want_embedding.sizes().vec());
    const auto e = embedding.values<float>();
    double err = 0, norm = 0;
    for (std::int64_t i = 0; i < want_embedding.numel(); ++i) {
      const double w = want_embedding.data_ptr<float>()[i];
      err = std::max(err, std::abs(e[i] - w));
      norm = std::max(norm, std::abs(w));
    }
    CHECK(err <= 1e-5 * norm);
  }
}

TEST_CASE("qwen3-tts x-vector-only prompts carry the embedding alone", "[encoders][qwen][checkpoint]") {
  auto net = make_network("qwen3-tts", qwen_checkpoint(kQwenFixtures));
  const Expected expected;
  const NetworkOutput full = encode(*net, expected.wave(kQwenClips[1]));
  const NetworkOutput x_vector = encode(*net, expected.wave(kQwenClips[1]), true);
  CHECK(x_vector.count("ref_code") == 0);
  CHECK(x_vector.at("ref_spk_embedding") == full.at("ref_spk_embedding"));
}

TEST_CASE("the qwen3-tts checkpoint's digests are in the config hash", "[encoders][qwen][checkpoint]") {
  TempDir dir;
  copy_fixture_folder(dir.path / "a");
  copy_fixture_folder(dir.path / "b");
  WeightMap w = owned_tensors(dir.path / "b/model.safetensors");
  w.at("speaker_encoder.fc.bias").add_(1e-3);
  write_safetensors(dir.path / "b/model.safetensors", w);
  auto a = make_network("qwen3-tts", qwen_checkpoint(dir.path / "a"));
  auto b = make_network("qwen3-tts", qwen_checkpoint(dir.path / "b"));
  auto fixture = make_network("qwen3-tts", qwen_checkpoint(kQwenFixtures));
  auto proxy = make_network("qwen3-tts", {.scale = "tiny"});
  CHECK(a->config().config_hash == fixture->config().config_hash);  // the folder's place is not part of it
  CHECK(a->config().config_hash != b->config().config_hash);
  CHECK(a->config().config_hash != proxy->config().config_hash);
  CHECK_THAT(a->config().config_json,
             Catch::Contains("\"model.safetensors\"") && Catch::Contains("\"speech_tokenizer/model.safetensors\""));
}

TEST_CASE("qwen3-tts hooks over a checkpoint encode clips through the service path", "[encoders][qwen][checkpoint]") {
  auto hook = make_hook("qwen3-tts", qwen_checkpoint(kQwenFixtures));
  const Expected expected;
  EncodeInput in;
  in.audio.samples = expected.wave(kQwenClips[0]);
  in.audio.sample_rate = 24000;
  in.text = "reference text";
  const Artifact a = hook->encode_one(in);
  CHECK(a.tensor("ref_code").shape() == expected.tensor(std::string(kQwenClips[0]) + ".codes").sizes().vec());
  CHECK(a.meta.at("model_revision") == hook->config().model_revision);

  in.audio.samples.resize(1000);  // under 5 mel frames: the speaker encoder cannot pad it
  try {
    hook->encode_one(in);
    FAIL("a 1000-sample clip encoded");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::bad_input);
    CHECK_THAT(e.what(), Catch::Contains("too short"));
  }
}

TEST_CASE("bad qwen3-tts checkpoints are one line naming the file and the tensor", "[encoders][qwen][checkpoint]") {
  TempDir dir;
  const WeightMap tokenizer = owned_tensors(kQwenFixtures / "speech_tokenizer/model.safetensors");
  const WeightMap model = owned_tensors(kQwenFixtures / "model.safetensors");
  int n = 0;
  auto write_variant = [&](auto change_tokenizer, auto change_model) {
    const fs::path folder = dir.path / ("v" + std::to_string(n++));
    fs::create_directories(folder / "speech_tokenizer");
    WeightMap t = tokenizer, m = model;
    change_tokenizer(t);
    change_model(m);
    write_safetensors(folder / "speech_tokenizer/model.safetensors", t);
    write_safetensors(folder / "model.safetensors", m);
    return folder;
  };
  auto variant = [&](auto change_tokenizer, auto change_model) {
    return qwen_load_error(write_variant(change_tokenizer, change_model));
  };
  auto same = [](WeightMap&) {};
  const std::string q = "encoder.encoder_transformer.layers.0.self_attn.q_proj.weight";
  const std::string fc = "speaker_encoder.fc.weight";

  CHECK_THAT(variant([&](WeightMap& w) { w.erase(q); }, same),
             Catch::Contains("speech_tokenizer/model.safetensors") && Catch::Contains("missing tensor '" + q + "'"));
  CHECK_THAT(variant([](WeightMap& w) { w["encoder.extra.weight"] = at::ones({2}); }, same),
             Catch::Contains("unexpected tensor 'encoder.extra.weight'"));
  CHECK_THAT(variant(same, [&](WeightMap& w) { w[fc] = at::zeros({3, 3}); }),
             Catch::Contains("model.safetensors") && Catch::Contains("tensor '" + fc + "' has shape [3, 3], expected [128, 192, 1]"));
  CHECK_THAT(variant(same, [&](WeightMap& w) { w[fc] = at::zeros(w[fc].sizes(), at::TensorOptions(at::kLong)); }),
             Catch::Contains("tensor '" + fc + "' has dtype Long"));
  CHECK_THAT(variant(same, [&](WeightMap& w) { w.erase(fc); }), Catch::Contains("missing tensor '" + fc + "'"));
  CHECK_THAT(variant(same, [](WeightMap& w) { std::erase_if(w, [](const auto& kv) { return kv.first.rfind("speaker_encoder.", 0) == 0; }); }),
             Catch::Contains("holds no speaker_encoder.* tensors"));
  // The decoder, the output projections, the unused acoustic codebook and the talker are accepted, not loaded.
  const fs::path with_talker =
      write_variant(same, [](WeightMap& w) { w["talker.model.layers.0.mlp.up_proj.weight"] = at::ones({4, 4}); });
  CHECK_NOTHROW(make_network("qwen3-tts", qwen_checkpoint(with_talker)));

  // A file instead of the folder, a missing path, a folder without the tokenizer, a truncated file.
  CHECK_THAT(qwen_load_error(kQwenFixtures / "model.safetensors"), Catch::Contains("reads a model folder"));
  CHECK_THAT(qwen_load_error(dir.path / "nowhere"), Catch::Contains("no such checkpoint file or folder"));
  fs::create_directories(dir.path / "no_tokenizer");
  fs::copy_file(kQwenFixtures / "model.safetensors", dir.path / "no_tokenizer/model.safetensors");
  CHECK_THAT(qwen_load_error(dir.path / "no_tokenizer"), Catch::Contains("speech_tokenizer"));
  copy_fixture_folder(dir.path / "cut");
  fs::resize_file(dir.path / "cut/speech_tokenizer/model.safetensors", 100000);
  CHECK_THAT(qwen_load_error(dir.path / "cut"), Catch::Contains("truncated"));
  // Another scale's checkpoint.
  CHECK_THAT(qwen_load_error(kQwenFixtures, "small"), Catch::Contains("has shape") && Catch::Contains("expected"));
}
