// A fake model for the profiler's tests: strings in, strings out, a deterministic spin as encode cost,
// an optional gate that holds encodes until the test releases them, and an in-memory "disk" tier shared
// by every service made over the same root.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/reference_encode_service.hpp"
#include "core/sha256.hpp"
#include "profile/orchestration/model_backend.hpp"

namespace refenc::profile::testing {

struct FakeHook : ReferenceEncodeHook<std::string, std::string, std::string> {
  bool batch = false;
  int spin = 2000;
  std::atomic<bool>* hold = nullptr;  ///< When set, encodes wait until it turns false.
  std::atomic<int> encodes{0};
  std::atomic<int> keyed{0};  ///< Requests that reached cache_key.
  std::string perturb;        ///< When set, a batch changes one code of each item that starts with it.

  std::optional<ReferenceEncodeKey> cache_key(const std::string& s) override {
    ++keyed;
    if (s.rfind("nokey:", 0) == 0) return std::nullopt;
    return ReferenceEncodeKey{"fake", "1", "fake-enc", "cfg", "codes", sha256_hex(s), ""};
  }
  std::string encode_one(const std::string& s) override {
    while (hold && hold->load()) std::this_thread::yield();
    if (s.rfind("fail:", 0) == 0) throw Error(ErrorKind::encode, "fake encoder refuses " + s);
    ++encodes;
    volatile unsigned x = 0;
    for (int i = 0; i < spin; ++i) x = x * 31u + static_cast<unsigned>(i);
    return "codes(" + s + ")";
  }
  std::string store_artifact(const std::string& a) override { return a; }
  std::string load_artifact(const std::string& s) override { return s; }
  std::size_t stored_bytes(const std::string& s) const override { return s.size(); }
  bool can_encode_batch() const override { return batch; }
  std::vector<std::string> encode_batch(std::span<const std::string* const> items) override {
    auto out = ReferenceEncodeHook::encode_batch(items);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (!perturb.empty() && items[i]->rfind(perturb, 0) == 0) out[i][0] = 'C';  // "codes(" -> "Codes("
    return out;
  }
};

struct FakeTier : SecondTier<std::string> {
  std::mutex m;
  std::map<std::string, std::string> entries;
  TierStats counters;
  std::shared_ptr<const std::string> load(const ReferenceEncodeKey& key) noexcept override {
    std::lock_guard lock(m);
    auto it = entries.find(key.digest());
    if (it == entries.end()) {
      ++counters.disk_misses;
      return nullptr;
    }
    ++counters.disk_hits;
    return std::make_shared<const std::string>(it->second);
  }
  void store(const ReferenceEncodeKey& key, const std::string& s) noexcept override {
    std::lock_guard lock(m);
    entries[key.digest()] = s;
    ++counters.disk_writes;
  }
  TierStats stats() const override {
    auto& self = const_cast<FakeTier&>(*this);
    std::lock_guard lock(self.m);
    return counters;
  }
};

using FakeService = ReferenceEncodeService<std::string, std::string, std::string>;

/// The request a work item becomes: its reference id (the content) and transcript.
inline std::string fake_raw(const WorkItem& w) {
  return (w.reference ? w.reference->id : std::string()) + "|" + w.ref_text;
}

class FakeBackend : public ModelBackend {
 public:
  explicit FakeBackend(ModelEntry info, bool batch) : info_(std::move(info)) {
    hook = std::make_shared<FakeHook>();
    hook->batch = batch;
  }
  const ModelEntry& info() const override { return info_; }
  std::unique_ptr<ServiceHandle> make_service(const ArmSpec& arm, const CacheSpec& cache,
                                              const std::string& tier_root) override {
    std::shared_ptr<FakeTier> tier;
    if (!tier_root.empty()) {
      auto& t = tiers[tier_root];
      if (!t) t = std::make_shared<FakeTier>();
      tier = t;
    }
    const ServiceOptions o = service_options(arm, cache);
    last_service = std::make_shared<FakeService>(hook, o, tier);
    return make_service_handle(last_service, fake_raw);
  }
  std::shared_ptr<FakeHook> hook;
  std::shared_ptr<FakeService> last_service;
  std::map<std::string, std::shared_ptr<FakeTier>> tiers;

 private:
  ModelEntry info_;
};

inline ModelEntry fake_info(const std::string& name, bool batch, bool internal = false) {
  ModelEntry i;
  i.name = name;
  i.sample_rate = 24000;
  i.frame_rate = 12.5;
  i.can_encode_batch = batch;
  i.has_internal_batching = internal;
  i.evidence_grade = "fake hook (tests)";
  i.scale = "fake";
  return i;
}

}  // namespace refenc::profile::testing
