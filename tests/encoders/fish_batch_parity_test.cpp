// Fish batching (M4b): each item's codes from encode_batch equal its encode_one codes exactly, for
// batch sizes 1..8 and mixed lengths, directly and through a batching service, on synthetic tones
// and on the shipped speech clips (3-12 s, where near-tied quantiser distances are common enough
// that one differently rounded product shows up as a flipped code).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <latch>
#include <thread>

#include "audio/decode.hpp"
#include "test_clips.hpp"
#include "util/source_dir.hpp"

using namespace refenc;
using namespace refenc::encoders;
using namespace refenc::encoders::test;

namespace {

/// Ten clips of different lengths (0.3 s to 2.9 s, some on frame boundaries) and content.
std::vector<EncodeInput> parity_clips(ModelHook& hook) {
  const std::int64_t lengths[] = {13230,         2048 * 40, 2048 * 40 + 1, 127891, 45000,
                                  2048 * 11 - 1, 99999,     64000,         31337,  88200};
  std::vector<EncodeInput> out;
  int variant = 10;
  for (std::int64_t n : lengths) out.push_back(hook.normalize_input(clip_request(44100, n, variant++)));
  return out;
}

/// The shipped speech clips at two gains each, as the model's inputs (16 clips, 3-12 s).
std::vector<EncodeInput> speech_clips(ModelHook& hook) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(refenc::source_dir()) / "workloads/clips"))
    if (e.path().extension() == ".flac") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<EncodeInput> out;
  for (const auto& f : files) {
    const audio::DecodedAudio a = audio::decode_audio_file(f.string(), audio::DecodeLimits{});
    for (float gain : {1.0f, 0.55f}) {
      std::vector<float> s = a.samples;
      for (float& x : s) x *= gain;
      out.push_back(hook.normalize_input({audio::ReferenceSource::from_bytes(wav_bytes(s, a.sample_rate)), {}}));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("fish encode_batch equals encode_one on speech in batches of 3 and 8", "[encoders][fish][batch]") {
  auto hook = make_hook("fish-s2-pro", tiny());
  std::vector<EncodeInput> clips = speech_clips(*hook);
  REQUIRE(clips.size() == 16);
  std::vector<Artifact> single;
  for (const auto& c : clips) single.push_back(hook->encode_one(c));
  // Every clip in a batch of each size, at shifting positions and with shifting neighbours.
  for (std::size_t size : {3u, 8u}) {
    for (std::size_t first = 0; first < clips.size(); first += size) {
      std::vector<const EncodeInput*> batch;
      std::vector<std::size_t> which;
      for (std::size_t i = 0; i < size; ++i) {
        which.push_back((first + i + size / 2) % clips.size());
        batch.push_back(&clips[which.back()]);
      }
      std::vector<Artifact> out = hook->encode_batch(batch);
      REQUIRE(out.size() == size);
      for (std::size_t i = 0; i < size; ++i) {
        INFO("batch size " << size << " item " << i << " clip " << which[i]);
        CHECK(out[i] == single[which[i]]);
      }
    }
  }
}

TEST_CASE("fish encode_batch equals encode_one for batch sizes 1..8 and mixed lengths", "[encoders][fish][batch]") {
  auto hook = make_hook("fish-s2-pro", tiny());
  std::vector<EncodeInput> clips = parity_clips(*hook);
  std::vector<Artifact> single;
  for (const auto& c : clips) single.push_back(hook->encode_one(c));

  for (std::size_t size = 1; size <= 8; ++size) {
    for (std::size_t start = 0; start < clips.size(); start += 3) {
      std::vector<const EncodeInput*> batch;
      std::vector<std::size_t> which;
      for (std::size_t i = 0; i < size; ++i) {
        // Alternate direction so the longest clip sits at different positions.
        const std::size_t idx = (size % 2 ? start + i : start + clips.size() - i) % clips.size();
        batch.push_back(&clips[idx]);
        which.push_back(idx);
      }
      std::vector<Artifact> out = hook->encode_batch(batch);
      REQUIRE(out.size() == size);
      for (std::size_t i = 0; i < size; ++i) {
        INFO("batch size " << size << " start " << start << " item " << i << " clip " << which[i]);
        CHECK(out[i] == single[which[i]]);
      }
    }
  }
}

TEST_CASE("a batching service returns each clip's encode_one codes", "[encoders][fish][batch]") {
  auto hook = make_hook("fish-s2-pro", tiny());
  std::vector<EncodeInput> clips = parity_clips(*hook);
  std::vector<Artifact> single;
  for (const auto& c : clips) single.push_back(hook->encode_one(c));

  EncodeService service(hook, {.max_batch_size = 8, .max_batch_wait = std::chrono::microseconds(20000)});
  REQUIRE(service.batching());
  const std::int64_t lengths[] = {13230, 2048 * 40, 2048 * 40 + 1, 127891, 45000, 2048 * 11 - 1, 99999, 64000};
  std::vector<Artifact> got(8);
  std::latch start(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      got[i] = service.get_or_encode(clip_request(44100, lengths[i], 10 + i));
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) {
    INFO("clip " << i);
    CHECK(got[i] == single[i]);
  }
  CHECK(service.stats().batched_items == 8);
}
