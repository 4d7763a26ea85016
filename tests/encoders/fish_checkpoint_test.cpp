// Fish S2-Pro from a checkpoint in the published format: parity with fish-speech's own encode on the
// same weights (fixtures made by upstream's code, tests/encoders/fixtures/fish-s2-pro/PROVENANCE.md),
// batch parity with real-structure weights, and every kind of bad checkpoint as one clear error.
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "encoders/checkpoint.hpp"
#include "encoders/encoder_hook.hpp"
#include "util/source_dir.hpp"
#include "checkpoint_files.hpp"  // last: it includes Catch after LibTorch

using namespace refenc;
using namespace refenc::encoders;
using namespace refenc::encoders::test;
namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = fs::path(refenc::source_dir()) / "tests/encoders/fixtures/fish-s2-pro";
const char* const kClips[] = {"en-m-44k", "fr-f-44k"};

EncoderOptions with_checkpoint(const fs::path& path) {
  return {.scale = "tiny", .checkpoint = path.string(), .threads = 1};
}

EncodeInput input(ModelHook& hook, const std::string& clip) {
  return hook.normalize_input({audio::ReferenceSource::parse((kFixtures / (clip + ".wav")).string()), {}});
}

std::vector<std::int64_t> codes_of(const Artifact& a) {
  auto v = a.tensor("codes").values<std::int64_t>();
  return {v.begin(), v.end()};
}

std::vector<std::int64_t> expected_codes(const std::string& clip, std::vector<std::int64_t>* shape = nullptr) {
  return ExpectedFile(kFixtures / "expected.safetensors").ints(clip + ".codes", shape);
}

/// The fixture's tensors, as a plain map of owned copies.
WeightMap fixture_tensors() { return owned_tensors(kFixtures / "codec.pth"); }

std::string load_error(const fs::path& path) { return test::load_error("fish-s2-pro", with_checkpoint(path)); }

}  // namespace

TEST_CASE("fish from upstream's checkpoint gives upstream's codes exactly", "[encoders][fish][checkpoint]") {
  auto hook = make_hook("fish-s2-pro", with_checkpoint(kFixtures / "codec.pth"));
  CHECK(hook->config().model_revision.rfind("checkpoint:", 0) == 0);
  for (const char* clip : kClips) {
    INFO(clip);
    std::vector<std::int64_t> shape;
    const std::vector<std::int64_t> want = expected_codes(clip, &shape);
    const Artifact a = hook->encode_one(input(*hook, clip));
    CHECK(a.tensor("codes").shape() == shape);
    const std::vector<std::int64_t> got = codes_of(a);
    REQUIRE(got.size() == want.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < got.size(); ++i) differ += got[i] != want[i];
    CHECK(differ == 0);
  }
}

TEST_CASE("a model folder holding codec.pth loads as the file does", "[encoders][fish][checkpoint]") {
  TempDir dir;
  fs::copy_file(kFixtures / "codec.pth", dir.path / "codec.pth");
  auto from_folder = make_hook("fish-s2-pro", with_checkpoint(dir.path));
  auto from_file = make_hook("fish-s2-pro", with_checkpoint(kFixtures / "codec.pth"));
  CHECK(from_folder->config().config_hash == from_file->config().config_hash);
  CHECK(codes_of(from_folder->encode_one(input(*from_folder, kClips[0]))) == expected_codes(kClips[0]));
}

TEST_CASE("the checkpoint's digest is in the config hash", "[encoders][fish][checkpoint]") {
  TempDir dir;
  WeightMap w = fixture_tensors();
  write_safetensors(dir.path / "a.safetensors", w);
  w.at("encoder.block.0.conv.bias").add_(1e-3);
  write_safetensors(dir.path / "b.safetensors", w);
  auto a = make_hook("fish-s2-pro", with_checkpoint(dir.path / "a.safetensors"));
  auto b = make_hook("fish-s2-pro", with_checkpoint(dir.path / "b.safetensors"));
  auto proxy = make_hook("fish-s2-pro", {.scale = "tiny"});
  CHECK(a->config().config_hash != b->config().config_hash);
  CHECK(a->config().config_hash != proxy->config().config_hash);
  CHECK(a->config().config_json.find("checkpoint_sha256") != std::string::npos);
  // The same tensors as safetensors give the pickle's codes.
  CHECK(codes_of(a->encode_one(input(*a, kClips[1]))) == expected_codes(kClips[1]));
}

TEST_CASE("fish encode_batch with real-structure weights equals encode_one", "[encoders][fish][checkpoint][batch]") {
  auto hook = make_hook("fish-s2-pro", with_checkpoint(kFixtures / "codec.pth"));
  std::vector<EncodeInput> clips;
  for (const char* clip : kClips) clips.push_back(input(*hook, clip));
  clips.push_back(input(*hook, kClips[0]));
  clips.back().audio.samples.resize(2048 * 7 + 5);  // a third, shorter clip
  std::vector<const EncodeInput*> batch;
  for (const auto& c : clips) batch.push_back(&c);
  const std::vector<Artifact> batched = hook->encode_batch(batch);
  REQUIRE(batched.size() == clips.size());
  for (std::size_t i = 0; i < clips.size(); ++i) {
    INFO("item " << i);
    CHECK(codes_of(batched[i]) == codes_of(hook->encode_one(clips[i])));
  }
  CHECK(codes_of(batched[0]) == expected_codes(kClips[0]));
}

TEST_CASE("bad checkpoints are one line naming the file and the tensor", "[encoders][fish][checkpoint]") {
  TempDir dir;
  const WeightMap good = fixture_tensors();
  auto variant = [&](const std::string& file, auto change) {
    WeightMap w = good;
    change(w);
    write_safetensors(dir.path / file, w);
    return load_error(dir.path / file);
  };
  const std::string name = "quantizer.pre_module.layers.0.attention.wqkv.weight";

  CHECK_THAT(variant("missing.safetensors", [&](WeightMap& w) { w.erase(name); }),
             Catch::Contains("missing.safetensors") && Catch::Contains("missing tensor '" + name + "'"));
  CHECK_THAT(variant("extra.safetensors", [](WeightMap& w) { w["encoder.block.9.alpha"] = at::ones({1, 4, 1}); }),
             Catch::Contains("unexpected tensor 'encoder.block.9.alpha'"));
  CHECK_THAT(variant("shape.safetensors", [&](WeightMap& w) { w[name] = at::zeros({3, 3}); }),
             Catch::Contains("tensor '" + name + "' has shape [3, 3], expected [192, 64]"));
  CHECK_THAT(variant("dtype.safetensors",
                     [&](WeightMap& w) { w[name] = at::zeros(w[name].sizes(), at::TensorOptions(at::kLong)); }),
             Catch::Contains("tensor '" + name + "' has dtype Long"));
  CHECK_THAT(variant("two.safetensors", [&](WeightMap& w) { w.erase(name), w.erase("encoder.block.0.conv.bias"); }),
             Catch::Contains("missing tensor 'encoder.block.0.conv.bias'") && Catch::Contains("and 1 more"));
  // The decoder's tensors are accepted and not loaded.
  CHECK_NOTHROW(make_hook("fish-s2-pro", with_checkpoint(kFixtures / "codec.pth")));

  // Truncated files, both formats.
  auto truncated = [&](const fs::path& from, const std::string& file, double keep) {
    std::ifstream in(from, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(dir.path / file, std::ios::binary) << bytes.substr(0, static_cast<std::size_t>(bytes.size() * keep));
    return load_error(dir.path / file);
  };
  write_safetensors(dir.path / "whole.safetensors", good);
  CHECK_THAT(truncated(dir.path / "whole.safetensors", "cut.safetensors", 0.7),
             Catch::Contains("cut.safetensors") && Catch::Contains("truncated"));
  CHECK_THAT(truncated(kFixtures / "codec.pth", "cut.pth", 0.7),
             Catch::Contains("cut.pth") && Catch::Contains("not a readable torch checkpoint"));
  CHECK_THAT(truncated(dir.path / "whole.safetensors", "header.safetensors", 0.000001),
             Catch::Contains("header.safetensors"));

  // A file that is neither, a missing path, a folder without the file, another scale's checkpoint.
  std::ofstream(dir.path / "junk.pth") << "not a checkpoint at all";
  CHECK_THAT(load_error(dir.path / "junk.pth"), Catch::Contains("junk.pth"));
  CHECK_THAT(load_error(dir.path / "nowhere.pth"), Catch::Contains("no such checkpoint file or folder"));
  fs::create_directories(dir.path / "empty");
  CHECK_THAT(load_error(dir.path / "empty"), Catch::Contains("looked for codec.pth"));
  try {
    make_hook("fish-s2-pro", {.scale = "small", .checkpoint = (kFixtures / "codec.pth").string()});
    FAIL("a tiny checkpoint loaded at scale small");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("has shape") && Catch::Contains("expected"));
  }
  CHECK_THROWS_AS(make_hook("fish-s2-pro", {.module_path = "m.pt", .checkpoint = "c.pth"}), Error);
}
