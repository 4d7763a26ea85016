// LibTorch's CPU buffers on the block cache (installed by this binary's main), and BLAS threads that
// follow LibTorch's.
#include <catch2/catch.hpp>

#include "encoders/cpu_tensor_memory.hpp"
#include "test_clips.hpp"

using namespace refenc;
using namespace refenc::encoders;
using namespace refenc::encoders::test;

TEST_CASE("encodes reuse the cached CPU buffers and give the same artifact", "[encoders][memory]") {
  REQUIRE(cpu_tensor_cache_bytes() == std::size_t{256} << 20);
  CHECK_FALSE(cache_cpu_tensor_blocks(std::size_t{1} << 20));  // the first call decided
  CHECK(cpu_tensor_cache_bytes() == std::size_t{256} << 20);

  auto hook = make_hook("fish-s2-pro", tiny());
  const EncodeInput clip = hook->normalize_input(clip_request(44100, 44100 * 6, 3));
  const Artifact first = hook->encode_one(clip);
  const BlockCacheStats before = cpu_tensor_block_stats();
  const Artifact second = hook->encode_one(clip);
  const BlockCacheStats d = cpu_tensor_block_stats().minus(before);
  INFO("hits " << d.hits << ", misses " << d.misses);
  CHECK(second == first);
  CHECK(d.hits > 0);
  CHECK(d.misses == 0);  // the second call needs no buffer the first did not free
  CHECK(cpu_tensor_block_stats().cached_bytes <= cpu_tensor_cache_bytes());
}

TEST_CASE("set_torch_threads sets OpenBLAS's threads with LibTorch's", "[encoders][threads]") {
  const int before = torch_threads();
  set_torch_threads(1);
  CHECK(torch_threads() == 1);
  CHECK((blas_threads() == 0 || blas_threads() == 1));  // 0: LibTorch is not on OpenBLAS
  set_torch_threads(2);
  CHECK(torch_threads() == 2);
  CHECK((blas_threads() == 0 || blas_threads() == 2));
  set_torch_threads(before);
}
