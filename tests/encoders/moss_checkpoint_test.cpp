// MOSS-TTS Local from a model folder in the published layout: parity with MOSS-Audio-Tokenizer's own encode on
// the same weights (fixtures made by upstream's code, tests/encoders/fixtures/moss-tts-local/PROVENANCE.md),
// batch parity with real-structure weights, the names older saves use, and every kind of bad checkpoint as
// one clear error.
//
// The network is fed the fixture's 24 kHz waveform itself, so this is the encoder's parity, not the loudness
// normaliser's.
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

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

const fs::path kMossFixtures = fs::path(refenc::source_dir()) / "tests/encoders/fixtures/moss-tts-local";
const char* const kMossClips[] = {"de-a", "de-b"};

EncoderOptions moss_checkpoint(const fs::path& path, const std::string& scale = "tiny") {
  return {.scale = scale, .checkpoint = path.string(), .threads = 1};
}

struct MossExpected : ExpectedFile {
  MossExpected() : ExpectedFile(kMossFixtures / "expected.safetensors") {}
  std::vector<float> wave(const std::string& clip) const { return floats(clip + ".wave_24000"); }
  std::vector<std::int64_t> codes(const std::string& name, std::vector<std::int64_t>* shape = nullptr) const {
    return ints(name, shape);
  }
};

std::vector<std::int64_t> codes_of(const HostTensor& t) {
  const auto v = t.values<std::int64_t>();
  return {v.begin(), v.end()};
}

std::size_t differing(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  std::size_t n = a.size() == b.size() ? 0 : std::max(a.size(), b.size());
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += a[i] != b[i];
  return n;
}

std::vector<std::int64_t> encode_codes(Network& net, const std::vector<float>& wave) {
  NetworkItem item{wave};
  return codes_of(net.encode(std::span(&item, 1)).front().at("codes"));
}

std::string moss_load_error(const fs::path& path, const std::string& scale = "tiny") {
  return load_error("moss-tts-local", moss_checkpoint(path, scale));
}

}  // namespace

TEST_CASE("moss-tts-local from upstream's checkpoint gives upstream's codes exactly", "[encoders][moss][checkpoint]") {
  auto net = make_network("moss-tts-local", moss_checkpoint(kMossFixtures));
  CHECK(net->config().model_revision.rfind("checkpoint:", 0) == 0);
  const MossExpected expected;
  for (const char* clip : kMossClips) {
    INFO(clip);
    std::vector<std::int64_t> shape;
    const std::vector<std::int64_t> want = expected.codes(std::string(clip) + ".codes", &shape);  // [T, 32]
    const std::vector<float> wave = expected.wave(clip);
    NetworkItem item{wave};
    const NetworkOutput out = std::move(net->encode(std::span(&item, 1)).front());
    CHECK(out.at("codes").shape() == shape);
    CHECK(shape[0] == static_cast<std::int64_t>(wave.size() / 1920));  // whole frames only, as upstream counts them
    CHECK(differing(codes_of(out.at("codes")), want) == 0);
  }
}

TEST_CASE("moss-tts-local batches with real-structure weights give each clip's own codes",
          "[encoders][moss][checkpoint][batch]") {
  auto net = make_network("moss-tts-local", moss_checkpoint(kMossFixtures));
  const MossExpected expected;
  std::vector<std::vector<float>> waves = {expected.wave(kMossClips[0]), expected.wave(kMossClips[1]),
                                           expected.wave(kMossClips[0])};
  waves[2].resize(1920 * 5 + 7);  // a third, shorter clip
  std::vector<NetworkItem> items;
  for (const auto& w : waves) items.push_back({w});
  const std::vector<NetworkOutput> batched = net->encode(items);
  REQUIRE(batched.size() == items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    INFO("item " << i);
    CHECK(codes_of(batched[i].at("codes")) == encode_codes(*net, waves[i]));
  }
  // Upstream's own zero-padded batch_encode of the two clips gave the single encodes' codes too.
  for (const char* clip : kMossClips) {
    INFO(clip);
    CHECK(expected.codes(std::string("batch.") + clip + ".codes") == expected.codes(std::string(clip) + ".codes"));
  }
  CHECK(differing(codes_of(batched[1].at("codes")), expected.codes(std::string(kMossClips[1]) + ".codes")) == 0);
}

TEST_CASE("moss-tts-local hooks over a checkpoint encode through the internal batcher", "[encoders][moss][checkpoint]") {
  auto hook = make_hook("moss-tts-local", moss_checkpoint(kMossFixtures));
  const MossExpected expected;
  EncodeInput in;
  in.audio.samples = expected.wave(kMossClips[0]);
  in.audio.sample_rate = 24000;
  const Artifact a = hook->encode_one(in);
  CHECK(differing(codes_of(a.tensor("codes")), expected.codes(std::string(kMossClips[0]) + ".codes")) == 0);
  CHECK(a.meta.at("model_revision") == hook->config().model_revision);

  in.audio.samples.resize(1919);  // not one whole 80 ms frame
  try {
    hook->encode_one(in);
    FAIL("a 1919-sample clip encoded");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::bad_input);
    CHECK_THAT(e.what(), Catch::Contains("too short"));
  }
}

TEST_CASE("the moss-tts-local checkpoint's digest is in the config hash", "[encoders][moss][checkpoint]") {
  TempDir dir;
  WeightMap w = owned_tensors(kMossFixtures / "model.safetensors");
  write_safetensors(dir.path / "a.safetensors", w);
  w.at("quantizer.quantizers.0.codebook.weight").add_(1e-3);
  write_safetensors(dir.path / "b.safetensors", w);
  auto folder = make_network("moss-tts-local", moss_checkpoint(kMossFixtures));
  auto file = make_network("moss-tts-local", moss_checkpoint(kMossFixtures / "model.safetensors"));
  auto a = make_network("moss-tts-local", moss_checkpoint(dir.path / "a.safetensors"));
  auto b = make_network("moss-tts-local", moss_checkpoint(dir.path / "b.safetensors"));
  auto proxy = make_network("moss-tts-local", {.scale = "tiny"});
  CHECK(folder->config().config_hash == file->config().config_hash);
  CHECK(a->config().config_hash != b->config().config_hash);
  CHECK(a->config().config_hash != proxy->config().config_hash);
  CHECK(a->config().config_json.find("checkpoint_sha256") != std::string::npos);
}

TEST_CASE("moss-tts-local reads the names older saves use", "[encoders][moss][checkpoint]") {
  // Fused attention projections (upstream's load hook) and weight_g / weight_v (torch's weight-norm hook).
  TempDir dir;
  WeightMap legacy;
  for (auto& [name, t] : owned_tensors(kMossFixtures / "model.safetensors")) {
    std::string n = name;
    auto swap_tail = [&](const std::string& from, const std::string& to) {
      if (n.size() >= from.size() && n.compare(n.size() - from.size(), from.size(), from) == 0)
        n = n.substr(0, n.size() - from.size()) + to;
    };
    swap_tail("self_attn.in_projs.0.weight", "self_attn.in_proj_weight");
    swap_tail("self_attn.out_projs.0.weight", "self_attn.out_proj.weight");
    swap_tail(".parametrizations.weight.original0", ".weight_g");
    swap_tail(".parametrizations.weight.original1", ".weight_v");
    legacy[n] = t;
  }
  REQUIRE(legacy.count("encoder.1.transformer.layers.0.self_attn.in_proj_weight"));
  REQUIRE(legacy.count("quantizer.quantizers.0.in_proj.weight_g"));
  write_safetensors(dir.path / "legacy.safetensors", legacy);
  auto net = make_network("moss-tts-local", moss_checkpoint(dir.path / "legacy.safetensors"));
  const MossExpected expected;
  CHECK(differing(encode_codes(*net, expected.wave(kMossClips[1])), expected.codes(std::string(kMossClips[1]) + ".codes")) == 0);
}

TEST_CASE("bad moss-tts-local checkpoints are one line naming the file and the tensor", "[encoders][moss][checkpoint]") {
  TempDir dir;
  const WeightMap good = owned_tensors(kMossFixtures / "model.safetensors");
  int n = 0;
  auto variant = [&](auto change) {
    const fs::path file = dir.path / ("v" + std::to_string(n++) + ".safetensors");
    WeightMap w = good;
    change(w);
    write_safetensors(file, w);
    return moss_load_error(file);
  };
  const std::string name = "encoder.7.transformer.layers.1.linear1.weight";

  CHECK_THAT(variant([&](WeightMap& w) { w.erase(name); }), Catch::Contains("missing tensor '" + name + "'"));
  CHECK_THAT(variant([](WeightMap& w) { w["encoder.9.input_proj.weight"] = at::ones({2, 2}); }),
             Catch::Contains("unexpected tensor 'encoder.9.input_proj.weight'"));
  CHECK_THAT(variant([&](WeightMap& w) { w[name] = at::zeros({3, 3}); }),
             Catch::Contains("tensor '" + name + "' has shape [3, 3], expected [256, 64]"));
  CHECK_THAT(variant([&](WeightMap& w) { w[name] = at::zeros(w[name].sizes(), at::TensorOptions(at::kLong)); }),
             Catch::Contains("tensor '" + name + "' has dtype Long"));
  CHECK_THAT(variant([](WeightMap& w) { w.erase("quantizer.quantizers.31.codebook.weight"); }),
             Catch::Contains("missing tensor 'quantizer.quantizers.31.codebook.weight'"));
  // The decoder and the quantizer's output projection are accepted and not loaded.
  WeightMap with_decoder = good;
  with_decoder["decoder.0.transformer.layers.9.linear1.weight"] = at::ones({2, 2});
  write_safetensors(dir.path / "decoder.safetensors", with_decoder);
  CHECK_NOTHROW(make_network("moss-tts-local", moss_checkpoint(dir.path / "decoder.safetensors")));

  fs::copy_file(kMossFixtures / "model.safetensors", dir.path / "cut.safetensors");
  fs::resize_file(dir.path / "cut.safetensors", 100000);
  CHECK_THAT(moss_load_error(dir.path / "cut.safetensors"), Catch::Contains("cut.safetensors") && Catch::Contains("truncated"));
  CHECK_THAT(moss_load_error(dir.path / "nowhere"), Catch::Contains("no such checkpoint file or folder"));
  fs::create_directories(dir.path / "empty");
  CHECK_THAT(moss_load_error(dir.path / "empty"), Catch::Contains("looked for model.safetensors"));
  CHECK_THAT(moss_load_error(kMossFixtures, "small"), Catch::Contains("has shape") && Catch::Contains("expected"));
}

TEST_CASE("a safetensors file whose header length starts with byte 0x80 is not taken for a pickle",
          "[encoders][checkpoint]") {
  TempDir dir;
  const fs::path file = dir.path / "x.safetensors";
  for (int pad = 0; pad < 300; ++pad) {  // header lengths step by 8: one in 32 starts with byte 0x80
    write_safetensors(file, {{"t" + std::string(static_cast<std::size_t>(pad), 'x'), at::ones({2})}});
    std::ifstream in(file, std::ios::binary);
    if (in.get() == 0x80) break;
  }
  std::ifstream in(file, std::ios::binary);
  REQUIRE(in.get() == 0x80);
  CHECK(read_checkpoint(file.string(), {}).format == "safetensors");
}

TEST_CASE("a checkpoint saved in shards loads from its index", "[encoders][moss][checkpoint]") {
  TempDir dir;
  WeightMap first, second;
  nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
  for (auto& [name, t] : owned_tensors(kMossFixtures / "model.safetensors")) {
    const bool in_first = name.rfind("encoder.", 0) == 0;
    (in_first ? first : second)[name] = t;
    index["weight_map"][name] = in_first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  write_safetensors(dir.path / "model-00001-of-00002.safetensors", first);
  write_safetensors(dir.path / "model-00002-of-00002.safetensors", second);
  std::ofstream(dir.path / "model.safetensors.index.json") << index.dump();
  auto net = make_network("moss-tts-local", moss_checkpoint(dir.path));
  CHECK_THAT(net->config().checkpoint, Catch::EndsWith("model.safetensors.index.json"));
  const MossExpected expected;
  CHECK(differing(encode_codes(*net, expected.wave(kMossClips[0])), expected.codes(std::string(kMossClips[0]) + ".codes")) == 0);

  // A tensor the index puts in a shard that lacks it; an index that is not JSON.
  index["weight_map"]["encoder.1.input_proj.weight"] = "model-00002-of-00002.safetensors";
  std::ofstream(dir.path / "model.safetensors.index.json") << index.dump();
  CHECK_THAT(moss_load_error(dir.path), Catch::Contains("model-00002-of-00002.safetensors") &&
                                            Catch::Contains("puts tensor 'encoder.1.input_proj.weight' in this shard"));
  std::ofstream(dir.path / "model.safetensors.index.json") << "{not json";
  CHECK_THAT(moss_load_error(dir.path), Catch::Contains("model.safetensors.index.json") && Catch::Contains("not JSON"));
}

// A manual check at the published config (the files are too large to commit): REFENC_MOSS_FULL names a folder
// that the fixture generator wrote at full size (model.safetensors, expected.safetensors); docs/figures.md.
TEST_CASE("moss-tts-local at the published config gives upstream's codes", "[.][moss-full]") {
  const char* folder = std::getenv("REFENC_MOSS_FULL");
  if (!folder) {
    WARN("REFENC_MOSS_FULL is not set: nothing checked");
    return;
  }
  auto net = make_network("moss-tts-local", {.scale = "full", .checkpoint = folder, .threads = 1});
  const CheckpointFile expected = read_checkpoint((fs::path(folder) / "expected.safetensors").string(), {});
  const at::Tensor wave_t = expected.tensors.at("de-a.wave_24000").contiguous();
  const std::vector<float> wave(wave_t.data_ptr<float>(), wave_t.data_ptr<float>() + wave_t.numel());
  const at::Tensor want_t = expected.tensors.at("de-a.codes").contiguous();
  const std::vector<std::int64_t> want(want_t.data_ptr<std::int64_t>(), want_t.data_ptr<std::int64_t>() + want_t.numel());
  const std::vector<std::int64_t> got = encode_codes(*net, wave);
  INFO(net->config().parameters << " parameters");
  CHECK(got.size() == want.size());
  CHECK(differing(got, want) == 0);
}
