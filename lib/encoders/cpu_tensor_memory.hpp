// CPU tensor memory: LibTorch's CPU tensors on a BlockCache, and BLAS threads that follow LibTorch's.
//
// An encode allocates and frees the same large buffers on every call; left to glibc they go back to
// the kernel and every call faults its pages in again (on this project's 2-core VM the kernel's share
// of an encode's CPU time was as large as the arithmetic's). `cache_cpu_tensor_blocks` makes LibTorch
// take its CPU buffers from a BlockCache (core/block_cache.hpp) that keeps up to a bound of freed
// buffers. It is a process-wide setting, like LibTorch's own allocator: the CLI calls it once at start.
//
//   encoders::cache_cpu_tensor_blocks(std::size_t{1} << 30);   // keep up to 1 GiB of freed buffers
//   auto hook = encoders::make_hook("fish-s2-pro", options);   // its tensors now come from the cache
//   BlockCacheStats s = encoders::cpu_tensor_block_stats();    // hits, misses, bytes kept
#pragma once

#include <cstddef>

#include "core/block_cache.hpp"

namespace refenc::encoders {

/// Installs the block cache as LibTorch's CPU allocator, keeping up to `max_cached_bytes` of freed
/// buffers (0: none kept, every buffer goes back to the C library). Buffers allocated before keep their
/// own deleter. The first call decides; a later call changes nothing and returns false.
bool cache_cpu_tensor_blocks(std::size_t max_cached_bytes);

/// The installed cache's bound, or 0 when none is installed.
std::size_t cpu_tensor_cache_bytes();

/// The installed cache's counters (all zero when none is installed).
BlockCacheStats cpu_tensor_block_stats();

/// Sets LibTorch's intra-op threads and, where LibTorch runs on OpenBLAS, OpenBLAS's threads to the
/// same count, so that `threads: 1` means one thread per encode: OpenBLAS's own pool otherwise
/// stays at one thread per core and its idle workers spin beside the callers. (How it splits a product
/// over its threads depends on the product's shape; the proxies call it with one shape per weight, so
/// their batch parity does not depend on the count, see nn_blocks.hpp.) Every encoder built calls it,
/// with LibTorch's current count when its `threads` is 0. `threads` > 0.
void set_torch_threads(int threads);

/// OpenBLAS's thread count, or 0 when LibTorch does not run on OpenBLAS.
int blas_threads();

}  // namespace refenc::encoders
