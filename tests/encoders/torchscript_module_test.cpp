// TorchScript modules: the calling convention, and the module digest in the key.
#include <catch2/catch.hpp>

#include <torch/script.h>

#include <filesystem>
#include <fstream>

#include "test_clips.hpp"

using namespace refenc;
using namespace refenc::encoders;
using namespace refenc::encoders::test;

namespace {

/// Saves a module whose forward(wave[1, 1, N]) returns codes [1, 10, ceil(N / 2048)] filled with `fill`.
std::string save_fish_module(const std::string& name, int fill) {
  torch::jit::Module m("FishCodes");
  m.define(R"(
def forward(self, wave: Tensor) -> Tensor:
    t = (wave.size(2) + 2047) // 2048
    return (torch.zeros([1, 10, t]) + )" +
           std::to_string(fill) + R"().long()
)");
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  m.save(path);
  return path;
}

std::string save_qwen_module(const std::string& name) {
  torch::jit::Module m("QwenPrompt");
  m.define(R"(
def forward(self, wave: Tensor) -> Tuple[Tensor, Tensor]:
    t = (wave.size(2) + 1919) // 1920
    return torch.zeros([t, 16]).int(), wave.mean().expand([1024]).float()
)");
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  m.save(path);
  return path;
}

}  // namespace

TEST_CASE("a TorchScript module replaces the proxy and its digest enters the key", "[encoders][torchscript]") {
  const std::string a = save_fish_module("refenc_test_fish_a.pt", 7);
  const std::string b = save_fish_module("refenc_test_fish_b.pt", 9);
  auto hook_a = make_hook("fish-s2-pro", {.module_path = a});
  auto hook_b = make_hook("fish-s2-pro", {.module_path = b});
  auto proxy = make_hook("fish-s2-pro", tiny());

  EncodeInput in = hook_a->normalize_input(clip_request(44100, 30000, 1));
  Artifact art = hook_a->encode_one(in);
  CHECK(art.tensor("codes").describe() == "int64[10, 15]");
  CHECK(art.tensor("codes").values<std::int64_t>()[0] == 7);
  CHECK(art.meta.at("model_revision").rfind("module:", 0) == 0);

  auto ka = hook_a->cache_key(in), kb = hook_b->cache_key(in), kp = proxy->cache_key(in);
  REQUIRE((ka && kb && kp));
  CHECK(ka->model_revision != kb->model_revision);
  CHECK(ka->encoder_config_hash != kb->encoder_config_hash);
  CHECK(ka->encoder_config_hash != kp->encoder_config_hash);
  CHECK(ka->input_key == kp->input_key);
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

TEST_CASE("a qwen module returns a (ref_code, ref_spk_embedding) tuple", "[encoders][torchscript]") {
  const std::string path = save_qwen_module("refenc_test_qwen.pt");
  auto hook = make_hook("qwen3-tts", {.module_path = path});
  Artifact art = hook->encode_one(hook->normalize_input(clip_request(24000, 24000, 1, "hi")));
  CHECK(art.tensor("ref_code").describe() == "int64[13, 16]");
  CHECK(art.tensor("ref_spk_embedding").describe() == "float32[1024]");
  CHECK(art.meta.at("ref_text") == "hi");

  const std::string junk = (std::filesystem::temp_directory_path() / "refenc_test_junk.pt").string();
  { std::ofstream(junk) << "not a module"; }
  CHECK_THROWS_WITH(make_hook("qwen3-tts", {.module_path = junk}), Catch::Contains("not a TorchScript module"));
  std::filesystem::remove(path);
  std::filesystem::remove(junk);
}
