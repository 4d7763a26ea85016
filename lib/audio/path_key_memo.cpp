#include "audio/path_key_memo.hpp"

namespace refenc::audio {

std::optional<PathKeyMemo::Entry> PathKeyMemo::find(const std::string& canonical_path) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(canonical_path);
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void PathKeyMemo::store(const std::string& canonical_path, Entry entry) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(canonical_path); it != index_.end()) {
    it->second->second = std::move(entry);
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(canonical_path, std::move(entry));
  index_[canonical_path] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

void PathKeyMemo::erase(const std::string& canonical_path) {
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(canonical_path); it != index_.end()) {
    lru_.erase(it->second);
    index_.erase(it);
  }
}

void PathKeyMemo::clear() {
  std::lock_guard lock(mutex_);
  lru_.clear();
  index_.clear();
  stats_ = {};
}

std::size_t PathKeyMemo::size() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}

PathKeyMemo::Stats PathKeyMemo::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void PathKeyMemo::count_hit() {
  std::lock_guard lock(mutex_);
  ++stats_.hits;
}
void PathKeyMemo::count_miss() {
  std::lock_guard lock(mutex_);
  ++stats_.misses;
}
void PathKeyMemo::count_sentinel_mismatch() {
  std::lock_guard lock(mutex_);
  ++stats_.sentinel_mismatches;
}
void PathKeyMemo::count_unstable() {
  std::lock_guard lock(mutex_);
  ++stats_.unstable;
}

}  // namespace refenc::audio
