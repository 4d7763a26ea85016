// StageOutputCache: an LRU map bounded by both item count and total bytes.
//
// Values are `std::shared_ptr<const V>`, so a reader can keep using a value after it is evicted.
// Not thread-safe: ReferenceEncodeService guards it with its own lock.
//
//   StageOutputCache<ReferenceEncodeKey, Codes> cache(/*max_items=*/256, /*max_bytes=*/64 << 20);
//   cache.put(key, std::make_shared<const Codes>(codes), codes.bytes());
//   if (auto v = cache.get(key)) use(*v);       // a hit moves the entry to the front
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>

#include "core/error.hpp"

namespace refenc {

template <class K, class V, class Hash = std::hash<K>>
class StageOutputCache {
 public:
  using Value = std::shared_ptr<const V>;

  /// Both bounds must be at least 1 (Error(config) otherwise).
  StageOutputCache(std::size_t max_items, std::size_t max_bytes) : max_items_(max_items), max_bytes_(max_bytes) {
    if (max_items < 1) throw Error(ErrorKind::config, "max_items must be at least 1");
    if (max_bytes < 1) throw Error(ErrorKind::config, "max_bytes must be at least 1");
  }

  /// The value for `key`, moved to most recently used; nullptr when absent.
  Value get(const K& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->value;
  }

  /// True when `key` is present (does not change recency).
  bool contains(const K& key) const { return index_.count(key) != 0; }

  /// Inserts or replaces `key`, then evicts least recently used entries until both bounds hold.
  /// A value larger than max_bytes is never inserted (an existing entry for the key is removed, so
  /// the cache never serves a value older than the newest one offered); returns whether it was stored.
  bool put(const K& key, Value value, std::size_t bytes) {
    erase(key);
    if (bytes > max_bytes_) return false;
    order_.push_front(Entry{key, std::move(value), bytes});
    index_.emplace(key, order_.begin());
    bytes_ += bytes;
    while (order_.size() > max_items_ || bytes_ > max_bytes_) {
      Entry& last = order_.back();
      bytes_ -= last.bytes;
      index_.erase(last.key);
      order_.pop_back();
      ++evictions_;
    }
    return true;
  }

  /// Removes `key` if present (not counted as an eviction); returns whether it was present.
  bool erase(const K& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    bytes_ -= it->second->bytes;
    order_.erase(it->second);
    index_.erase(it);
    return true;
  }

  void clear() {
    index_.clear();
    order_.clear();
    bytes_ = 0;
  }

  std::size_t size() const noexcept { return order_.size(); }
  std::size_t bytes() const noexcept { return bytes_; }
  std::uint64_t evictions() const noexcept { return evictions_; }
  std::size_t max_items() const noexcept { return max_items_; }
  std::size_t max_bytes() const noexcept { return max_bytes_; }

  /// Sum of the recorded sizes of all entries, recomputed (for invariant checks in tests).
  std::size_t recount_bytes() const {
    std::size_t n = 0;
    for (const Entry& e : order_) n += e.bytes;
    return n;
  }

 private:
  struct Entry {
    K key;
    Value value;
    std::size_t bytes;
  };
  std::size_t max_items_;
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::uint64_t evictions_ = 0;
  std::list<Entry> order_;
  std::unordered_map<K, typename std::list<Entry>::iterator, Hash> index_;
};

}  // namespace refenc
