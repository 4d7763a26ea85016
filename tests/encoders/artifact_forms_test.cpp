// Stored (compact, cache-owned) and loaded (int64, caller-owned) artifact forms.
#include <catch2/catch.hpp>

#include "test_clips.hpp"

using namespace refenc;
using namespace refenc::encoders;
using namespace refenc::encoders::test;

TEST_CASE("stored artifacts hold int16 codes and float32 embeddings; loads are int64 copies", "[encoders][store]") {
  for (const ModelInfo& m : models()) {
    INFO(m.name);
    auto hook = make_hook(m.name, tiny());
    Artifact a = hook->encode_one(hook->normalize_input(clip_request(m.sample_rate, m.sample_rate / 2, 2, "t")));
    Artifact stored = hook->store_artifact(a);
    for (const auto& [name, t] : stored.tensors) {
      INFO(name);
      CHECK(t.dtype() == (name == "ref_spk_embedding" ? DType::float32 : DType::int16));
    }
    CHECK(hook->stored_bytes(stored) == stored.byte_size());
    CHECK(hook->stored_bytes(stored) < a.byte_size());

    Artifact loaded = hook->load_artifact(stored);
    CHECK(loaded == a);
    const std::string codes = m.name == "qwen3-tts" ? "ref_code" : "codes";
    CHECK(loaded.tensor(codes).dtype() == DType::int64);
    loaded.tensors.at(codes).values<std::int64_t>()[0] += 1;
    loaded.meta["model"] = "changed";
    CHECK(hook->load_artifact(stored) == a);  // the stored form is untouched
  }
}
