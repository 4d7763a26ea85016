// BlockCache: keeps freed large memory blocks for the next allocation of the same size class.
//
// A tensor library allocates and frees buffers of the same few sizes on every call. glibc hands large
// blocks back to the kernel (munmap, heap trimming) and a worker thread's arena cannot hold blocks
// over 64 MiB at all, so each call faults every page in afresh: on a loaded CPU the kernel's page
// zeroing can cost as much as the arithmetic. BlockCache keeps up to `max_cached_bytes` of freed
// blocks of at least `min_block_bytes`, by size class (a quarter of a power of two: at most 25% slack),
// and hands the most recently freed block of the class back; past the bound it releases the least
// recently freed. Smaller blocks go straight to the C library. Thread-safe; the lock is never held
// across a call to the C library. Blocks are 64-byte aligned.
//
//   BlockCache cache(1 << 30);
//   void* p = cache.allocate(40 << 20);   // fresh: from the C library
//   cache.deallocate(p);                  // kept
//   void* q = cache.allocate(38 << 20);   // the same block (same size class), no page faults
//   cache.deallocate(q);
//   BlockCacheStats s = cache.stats();    // hits 1, misses 1, cached_bytes 40 MiB
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <unordered_map>

namespace refenc {

/// A snapshot of a BlockCache's counters.
struct BlockCacheStats {
  std::uint64_t hits = 0;       ///< Cacheable allocations served from a kept block.
  std::uint64_t misses = 0;     ///< Cacheable allocations that went to the C library.
  std::uint64_t evictions = 0;  ///< Kept blocks released to stay within the bound.
  std::size_t cached_blocks = 0;
  std::size_t cached_bytes = 0;  ///< Bytes kept for reuse (not in use by anyone).

  /// The counters' change since `earlier` (the gauges are this snapshot's).
  BlockCacheStats minus(const BlockCacheStats& earlier) const {
    return {hits - earlier.hits, misses - earlier.misses, evictions - earlier.evictions, cached_blocks, cached_bytes};
  }
};

class BlockCache {
 public:
  static constexpr std::size_t kAlignment = 64;
  static constexpr std::size_t kDefaultMinBlock = std::size_t{256} << 10;

  /// `max_cached_bytes` 0 keeps nothing (every block goes back to the C library).
  explicit BlockCache(std::size_t max_cached_bytes, std::size_t min_block_bytes = kDefaultMinBlock);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  /// At least `n` usable bytes, 64-byte aligned. Throws std::bad_alloc when the C library has none.
  void* allocate(std::size_t n);
  /// Takes back a block from `allocate` of this cache; nullptr is ignored.
  void deallocate(void* p) noexcept;

  BlockCacheStats stats() const;
  std::size_t max_cached_bytes() const noexcept { return max_cached_bytes_; }

  /// The bytes a cacheable request of `n` bytes occupies: `n` rounded up to a quarter of the power of
  /// two below it.
  static std::size_t size_class(std::size_t n) noexcept;

 private:
  struct Kept {
    std::size_t size;
    void* block;
  };
  using Lru = std::list<Kept>;  // front: most recently freed

  const std::size_t max_cached_bytes_;
  const std::size_t min_block_bytes_;
  mutable std::mutex mutex_;
  Lru lru_;
  std::unordered_map<std::size_t, std::deque<Lru::iterator>> by_size_;  // per class, oldest first
  BlockCacheStats stats_;
};

}  // namespace refenc
