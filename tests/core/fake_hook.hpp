// A scriptable hook for core tests: each request says what its encode should do.
#pragma once

#include <atomic>
#include <latch>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/reference_encode_service.hpp"

namespace refenc::test {

struct Req {
  int key = 0;
  std::size_t size = 4;  ///< Artifact elements (4 bytes each).
  bool cacheable = true;
  bool fail = false;  ///< encode_one throws Error(encode).
  bool revalidate_ok = true;
  bool revalidate_throws = false;
  bool bad_input = false;         ///< normalize_input throws Error(bad_input).
  std::latch* entered = nullptr;  ///< Counted down when encode_one starts.
  std::latch* release = nullptr;  ///< encode_one waits on it before returning.
  /// Cooperative encode: after `entered`, it polls EncodeContext::cancel_requested() until it is
  /// true, then throws (or, with `return_when_cancelled`, returns an artifact anyway).
  bool until_cancelled = false;
  bool return_when_cancelled = false;
  /// Left out of the concurrent-duplicate check: a request that may give up can leave its encode
  /// running, abandoned, while the next caller of the key starts a new one (by design).
  bool may_overlap = false;
};

using Artifact = std::vector<int>;

class FakeHook : public ReferenceEncodeHook<Req, Artifact, Artifact> {
 public:
  std::optional<ReferenceEncodeKey> cache_key(const Req& r) override {
    if (!r.cacheable) return std::nullopt;
    return key_of(r.key);
  }
  static ReferenceEncodeKey key_of(int k) { return {"fake", "r1", "enc", "cfg", "codes", std::to_string(k), ""}; }

  Req normalize_input(const Req& r) override {
    if (r.bad_input) throw Error(ErrorKind::bad_input, "unreadable clip " + std::to_string(r.key));
    return r;
  }

  Artifact encode_one(const Req& r) override {
    begin(r);
    if (r.entered) r.entered->count_down();
    if (r.release) r.release->wait();
    end(r);
    if (r.fail) throw Error(ErrorKind::encode, "encoder exploded on " + std::to_string(r.key));
    return Artifact(r.size, r.key);
  }

  Artifact encode_one_cancellable(const Req& r, const EncodeContext& ctx) override {
    if (!r.until_cancelled) return encode_one(r);
    begin(r);
    if (r.entered) r.entered->count_down();
    while (!ctx.cancel_requested()) std::this_thread::yield();
    ++cancels_seen_;
    end(r);
    if (!r.return_when_cancelled) throw Error(ErrorKind::encode, "stopped: nobody waits for " + std::to_string(r.key));
    return Artifact(r.size, r.key);
  }
  /// Encodes that saw cancel_requested() become true.
  int cancels_seen() const { return cancels_seen_.load(); }

  Artifact store_artifact(const Artifact& a) override { return a; }
  Artifact load_artifact(const Artifact& s) override { return s; }
  bool revalidate(const Req& r, const ReferenceEncodeKey&) override {
    if (r.revalidate_throws) throw Error(ErrorKind::io, "file vanished: " + std::to_string(r.key));
    return r.revalidate_ok;
  }
  std::size_t stored_bytes(const Artifact& s) const override { return s.size() * sizeof(int); }

  int encodes(int key) const {
    std::lock_guard lock(mutex_);
    auto it = count_.find(key);
    return it == count_.end() ? 0 : it->second;
  }
  int total_encodes() const {
    std::lock_guard lock(mutex_);
    int n = 0;
    for (auto& [k, v] : count_) n += v;
    return n;
  }
  /// Number of times an encode of a key started while another encode of the same key was running.
  int concurrent_duplicates() const { return duplicates_.load(); }

 protected:
  /// Uncacheable requests may legitimately encode one content concurrently: only cacheable ones
  /// are checked for concurrent duplicates.
  void begin(const Req& r, bool count_encode = true) {
    std::lock_guard lock(mutex_);
    if (count_encode) ++count_[r.key];
    if (r.cacheable && !r.may_overlap && active_[r.key]++ > 0) ++duplicates_;
  }
  void end(const Req& r) {
    std::lock_guard lock(mutex_);
    if (r.cacheable && !r.may_overlap) --active_[r.key];
  }

 private:
  mutable std::mutex mutex_;
  std::map<int, int> count_;
  std::map<int, int> active_;
  std::atomic<int> duplicates_{0};
  std::atomic<int> cancels_seen_{0};
};

/// A FakeHook that can batch. A batch fails as a whole when any item has `fail` set (one bad
/// reference poisons the batch), or when `wrong_count` is set.
class BatchHook : public FakeHook {
 public:
  bool can_encode_batch() const override { return true; }
  std::size_t batch_length(const Req& r) const override { return r.size; }
  std::vector<Artifact> encode_batch(std::span<const Req* const> items) override {
    {
      std::lock_guard lock(m_);
      sizes_.push_back(items.size());
    }
    for (const Req* r : items) begin(*r, /*count_encode=*/false);
    struct Done {
      BatchHook* h;
      std::span<const Req* const> items;
      ~Done() {
        for (const Req* r : items) h->end(*r);
      }
    } done{this, items};
    for (const Req* r : items) {
      if (r->entered) r->entered->count_down();
      if (r->release) r->release->wait();
    }
    std::vector<Artifact> out;
    for (const Req* r : items) {
      if (r->fail) throw Error(ErrorKind::encode, "batch poisoned by " + std::to_string(r->key));
      out.emplace_back(r->size, r->key);
    }
    if (wrong_count && !out.empty()) out.pop_back();
    return out;
  }
  std::vector<std::size_t> sizes() const {
    std::lock_guard lock(m_);
    return sizes_;
  }
  std::atomic<bool> wrong_count{false};

 private:
  mutable std::mutex m_;
  std::vector<std::size_t> sizes_;
};

/// A second tier in memory, for the tier contract of the service.
class MemoryTier : public SecondTier<Artifact> {
 public:
  std::shared_ptr<const Artifact> load(const ReferenceEncodeKey& key) noexcept override {
    std::lock_guard lock(m_);
    auto it = map_.find(key);
    if (it == map_.end()) {
      ++s_.disk_misses;
      return nullptr;
    }
    ++s_.disk_hits;
    return std::make_shared<const Artifact>(it->second);
  }
  void store(const ReferenceEncodeKey& key, const Artifact& a) noexcept override {
    std::lock_guard lock(m_);
    map_[key] = a;
    ++s_.disk_writes;
  }
  TierStats stats() const override {
    std::lock_guard lock(m_);
    return s_;
  }

 private:
  mutable std::mutex m_;
  std::unordered_map<ReferenceEncodeKey, Artifact> map_;
  TierStats s_;
};

using Service = ReferenceEncodeService<Req, Artifact, Artifact>;

/// Spins (yielding) until pred() holds: for waiting on another thread's progress without sleeps.
template <class Pred>
void wait_until(Pred pred) {
  while (!pred()) std::this_thread::yield();
}

}  // namespace refenc::test
