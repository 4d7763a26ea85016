// StageOutputCache: an LRU map bounded by both item count and total bytes.
//
// Values are `std::shared_ptr<const V>`, so a reader can keep using a value after it is evicted.
// Recency is a per-entry stamp rather than a list position, so that `find` changes nothing but that
// stamp: many threads may `find` at once (the service does so in ReadMostlyLock read sections).
// Everything else needs exclusive access; the cache has no lock of its own.
//
// A stamp is (generation, sequence): the generation counts exclusive calls, the sequence counts the
// calling thread's uses. `put` evicts the entry with the oldest last use, exactly, for any order of
// calls made by one thread and for uses separated by an exclusive call; uses by different threads
// between the same two exclusive calls count as simultaneous (either may be taken first). The stamp
// costs no clock read and writes no shared line.
//
//   StageOutputCache<ReferenceEncodeKey, Codes> cache(/*max_items=*/256, /*max_bytes=*/64 << 20);
//   cache.put(key, std::make_shared<const Codes>(codes), codes.bytes());
//   if (auto v = cache.get(key)) use(*v);        // a use: the entry is now the most recent
//   if (const auto* v = cache.find(key)) use(**v);   // the same, safe alongside other finds
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>

#include "core/error.hpp"
#include "core/thread_slot.hpp"

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

  /// The value for `key`, now the most recently used; nullptr when absent.
  Value get(const K& key) {
    const Value* v = find(key);
    return v ? *v : nullptr;
  }

  /// Like get, without copying the shared_ptr; may run concurrently with other `find`s (and nothing
  /// else). The pointer is valid until the next exclusive call.
  const Value* find(const K& key) const {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    it->second.used.generation.store(generation_, std::memory_order_relaxed);
    it->second.used.sequence.store(++thread_uses_, std::memory_order_relaxed);
    return &it->second.value;
  }

  /// True when `key` is present (does not change recency).
  bool contains(const K& key) const { return index_.count(key) != 0; }

  /// Inserts or replaces `key`, then evicts least recently used entries until both bounds hold.
  /// A value larger than max_bytes is never inserted (an existing entry for the key is removed, so
  /// the cache never serves a value older than the newest one offered); returns whether it was stored.
  bool put(const K& key, Value value, std::size_t bytes) {
    erase(key);
    if (bytes > max_bytes_) return false;
    const Stamp t{++generation_, 0};
    auto it = index_.try_emplace(key, std::move(value), bytes, t).first;
    it->second.placed = order_.emplace_hint(order_.end(), t, &*it);
    bytes_ += bytes;
    while (index_.size() > max_items_ || bytes_ > max_bytes_) {
      auto oldest = order_.begin();
      Node* n = oldest->second;
      const Stamp used = n->second.used.load();
      if (used > oldest->first) {  // used since it was placed: place it at its last use, look again
        order_.erase(oldest);      // (before any entry placed at the same instant: the one put is newest)
        n->second.placed = order_.emplace_hint(order_.lower_bound(used), used, n);
        continue;
      }
      bytes_ -= n->second.bytes;
      order_.erase(oldest);
      index_.erase(n->first);
      ++evictions_;
    }
    return true;
  }

  /// Removes `key` if present (not counted as an eviction); returns whether it was present.
  bool erase(const K& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    bytes_ -= it->second.bytes;
    order_.erase(it->second.placed);
    index_.erase(it);
    ++generation_;
    return true;
  }

  void clear() {
    ++generation_;
    order_.clear();
    index_.clear();
    bytes_ = 0;
  }

  std::size_t size() const noexcept { return index_.size(); }
  std::size_t bytes() const noexcept { return bytes_; }
  std::uint64_t evictions() const noexcept { return evictions_; }
  std::size_t max_items() const noexcept { return max_items_; }
  std::size_t max_bytes() const noexcept { return max_bytes_; }

  /// Sum of the recorded sizes of all entries, recomputed (for invariant checks in tests).
  std::size_t recount_bytes() const {
    std::size_t n = 0;
    for (const auto& [key, e] : index_) n += e.bytes;
    return n;
  }

 private:
  /// (generation, the using thread's use count); pairs compare lexicographically.
  using Stamp = std::pair<std::uint64_t, std::uint64_t>;
  struct Entry;
  using Node = std::pair<const K, Entry>;
  /// Entries by the stamp they were last placed at (inserted, or moved at eviction time to their last use).
  using Order = std::multimap<Stamp, Node*>;

  /// Written by every use: on a line of its own, so uses do not disturb readers of the key and value.
  /// Two threads may store at once; within a generation any mix of their values is a valid stamp.
  struct alignas(kCacheLine) UseStamp {
    explicit UseStamp(Stamp s) : generation(s.first), sequence(s.second) {}
    Stamp load() const noexcept {
      return {generation.load(std::memory_order_relaxed), sequence.load(std::memory_order_relaxed)};
    }
    std::atomic<std::uint64_t> generation;
    std::atomic<std::uint64_t> sequence;
  };
  struct Entry {
    Entry(Value v, std::size_t b, Stamp t) : value(std::move(v)), bytes(b), used(t) {}
    Value value;
    std::size_t bytes;
    typename Order::iterator placed;
    mutable UseStamp used;
  };

  std::size_t max_items_;
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::uint64_t evictions_ = 0;
  std::uint64_t generation_ = 0;                              ///< Exclusive calls so far; read (not written) by `find`.
  static inline thread_local std::uint64_t thread_uses_ = 0;  ///< This thread's uses, of any cache.
  std::unordered_map<K, Entry, Hash> index_;
  Order order_;
};

}  // namespace refenc
