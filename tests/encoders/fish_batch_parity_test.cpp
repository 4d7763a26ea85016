// Fish batching (M4b): each item's codes from encode_batch equal its encode_one codes exactly, for
// batch sizes 1..8 and mixed lengths, directly and through a batching service.
#include <catch2/catch.hpp>

#include <latch>
#include <thread>

#include "test_clips.hpp"

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

}  // namespace

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
