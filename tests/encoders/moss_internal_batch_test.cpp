// MOSS internal batching: concurrent encode_one calls share network calls, and each caller gets its
// own clip's codes, equal to a lone encode.
#include <catch2/catch.hpp>

#include <latch>
#include <thread>

#include "test_clips.hpp"

using namespace refenc;
using namespace refenc::encoders;
using namespace refenc::encoders::test;

TEST_CASE("moss concurrent encodes return each clip's own codes", "[encoders][moss][batch]") {
  auto hook = make_hook("moss-tts-local", tiny());
  const std::int64_t lengths[] = {7680, 12001, 24000, 30719, 9999, 48000, 19200, 36000, 15360, 27000};
  std::vector<EncodeInput> clips;
  for (int i = 0; i < 10; ++i) clips.push_back(hook->normalize_input(clip_request(24000, lengths[i], 20 + i)));
  std::vector<Artifact> alone;
  for (const auto& c : clips) alone.push_back(hook->encode_one(c));
  const InternalBatchStats before = hook->internal_batch_stats();
  CHECK(before.items == 10);

  std::vector<Artifact> got(clips.size());
  std::latch start(static_cast<std::ptrdiff_t>(clips.size()));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < clips.size(); ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      got[i] = hook->encode_one(clips[i]);
    });
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < clips.size(); ++i) {
    INFO("clip " << i);
    CHECK(got[i] == alone[i]);
  }
  const InternalBatchStats after = hook->internal_batch_stats();
  CHECK(after.items == 20);
  CHECK(after.largest <= 8);
  CHECK(after.batches - before.batches >= 2);  // ten clips never fit one batch of at most 8
}

TEST_CASE("loudness normalisation is applied to moss input only", "[encoders][moss]") {
  auto moss = make_hook("moss-tts-local", tiny());
  auto qwen = make_hook("qwen3-tts", tiny());
  EncodeRequest quiet{audio::ReferenceSource::from_bytes(wav_bytes(
                          [] {
                            auto s = clip_samples(24000, 24000, 1);
                            for (float& x : s) x *= 0.05f;
                            return s;
                          }(),
                          24000)),
                      ""};
  CHECK(moss->normalize_input(quiet).audio.gain_db == Approx(3.0));
  CHECK(qwen->normalize_input(quiet).audio.gain_db == 0.0);
}
