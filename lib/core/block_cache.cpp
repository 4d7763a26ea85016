#include "core/block_cache.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace refenc {

namespace {

// Every block carries its size in a header of one alignment unit just before the caller's bytes.
struct Header {
  std::size_t size;  // bytes after the header: a size class, or the exact request below the minimum
};
static_assert(sizeof(Header) <= BlockCache::kAlignment);

void* raw_allocate(std::size_t usable) {
  constexpr std::size_t a = BlockCache::kAlignment;
  if (usable > SIZE_MAX - 2 * a) throw std::bad_alloc();
  void* raw = std::aligned_alloc(a, (usable + 2 * a - 1) / a * a);  // header + usable, whole units
  if (!raw) throw std::bad_alloc();
  new (raw) Header{usable};
  return static_cast<char*>(raw) + BlockCache::kAlignment;
}

void raw_free(void* p) noexcept { std::free(static_cast<char*>(p) - BlockCache::kAlignment); }

std::size_t usable_size(void* p) noexcept {
  return reinterpret_cast<Header*>(static_cast<char*>(p) - BlockCache::kAlignment)->size;
}

}  // namespace

BlockCache::BlockCache(std::size_t max_cached_bytes, std::size_t min_block_bytes)
    : max_cached_bytes_(max_cached_bytes), min_block_bytes_(std::max(min_block_bytes, std::size_t{4})) {}

BlockCache::~BlockCache() {
  for (const Kept& k : lru_) raw_free(k.block);
}

std::size_t BlockCache::size_class(std::size_t n) noexcept {
  if (n <= 4) return 4;
  const std::size_t step = std::bit_floor(n) / 4;
  return (n + step - 1) / step * step;
}

void* BlockCache::allocate(std::size_t n) {
  // Zero-byte requests still get a distinct block, as malloc gives.
  const std::size_t want = std::max(n, std::size_t{1});
  if (want < min_block_bytes_ || max_cached_bytes_ == 0) return raw_allocate(want);
  const std::size_t size = size_class(want);
  {
    std::lock_guard lock(mutex_);
    if (auto it = by_size_.find(size); it != by_size_.end()) {
      Lru::iterator newest = it->second.back();
      void* block = newest->block;
      it->second.pop_back();
      if (it->second.empty()) by_size_.erase(it);
      lru_.erase(newest);
      stats_.cached_bytes -= size;
      --stats_.cached_blocks;
      ++stats_.hits;
      return block;
    }
    ++stats_.misses;
  }
  return raw_allocate(size);
}

void BlockCache::deallocate(void* p) noexcept {
  if (!p) return;
  const std::size_t size = usable_size(p);
  if (size < min_block_bytes_ || size > max_cached_bytes_) {
    raw_free(p);
    return;
  }
  Lru released;  // spliced out under the lock, freed after it
  {
    std::lock_guard lock(mutex_);
    try {
      lru_.push_front({size, p});
      by_size_[size].push_back(lru_.begin());
    } catch (...) {  // no memory for the bookkeeping: let the block go instead
      if (!lru_.empty() && lru_.front().block == p) lru_.pop_front();
      if (auto cls = by_size_.find(size); cls != by_size_.end() && cls->second.empty()) by_size_.erase(cls);
      raw_free(p);
      return;
    }
    stats_.cached_bytes += size;
    ++stats_.cached_blocks;
    while (stats_.cached_bytes > max_cached_bytes_) {
      auto oldest = std::prev(lru_.end());
      auto cls = by_size_.find(oldest->size);  // the oldest of the cache is the oldest of its class
      cls->second.pop_front();
      if (cls->second.empty()) by_size_.erase(cls);
      stats_.cached_bytes -= oldest->size;
      --stats_.cached_blocks;
      ++stats_.evictions;
      released.splice(released.end(), lru_, oldest);
    }
  }
  for (const Kept& k : released) raw_free(k.block);
}

BlockCacheStats BlockCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace refenc
