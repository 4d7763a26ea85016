#include "profile/orchestration/synthetic_device.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "core/reference_encode_service.hpp"
#include "core/sha256.hpp"
#include "profile/device/device_queue.hpp"

namespace refenc::profile {
namespace {

/// Strings in (the reference id and transcript), strings of artifact_bytes out, on the device queue.
class SyntheticHook final : public ReferenceEncodeHook<std::string, std::string, std::string> {
 public:
  explicit SyntheticHook(const SyntheticDeviceCost& cost) : cost_(cost), device_(cost.streams) {}

  std::optional<ReferenceEncodeKey> cache_key(const std::string& s) override {
    return ReferenceEncodeKey{"synthetic-device", "1", "device", "cfg", "codes", sha256_hex(s), ""};
  }
  std::string encode_one(const std::string& s) override {
    run(1, false);
    return artifact(s);
  }
  bool can_encode_batch() const override { return true; }
  std::vector<std::string> encode_batch(std::span<const std::string* const> items) override {
    run(items.size(), true);  // from a batch worker feeding the device back to back
    std::vector<std::string> out;
    for (const std::string* s : items) out.push_back(artifact(*s));
    return out;
  }
  std::string store_artifact(const std::string& a) override { return a; }
  std::string load_artifact(const std::string& s) override { return s; }
  std::size_t stored_bytes(const std::string& s) const override { return s.size(); }

 private:
  void run(std::size_t n, bool resume) {
    std::chrono::duration<double, std::milli> ms(cost_.fixed_ms + cost_.per_item_ms * static_cast<double>(n));
    device_.run(std::chrono::duration_cast<DeviceQueue::Clock::duration>(ms), resume);
  }
  std::string artifact(const std::string& s) const {
    std::string a = s.substr(0, cost_.artifact_bytes);
    a.resize(std::max<std::size_t>(cost_.artifact_bytes, 1), '.');
    return a;
  }
  SyntheticDeviceCost cost_;
  DeviceQueue device_;
};

using SyntheticService = ReferenceEncodeService<std::string, std::string, std::string>;

class SyntheticBackend final : public ModelBackend {
 public:
  SyntheticBackend(const ModelSpec& spec, const SyntheticDeviceCost& cost)
      : hook_(std::make_shared<SyntheticHook>(cost)) {
    info_.name = spec.name;
    info_.scale = "synthetic";
    info_.sample_rate = 24000;
    info_.frame_rate = 12.5;
    info_.can_encode_batch = true;
    info_.evidence_grade = fmt::format("synthetic device (modelled: {:g} ms + {:g} ms/item, {} stream{})",
                                       cost.fixed_ms, cost.per_item_ms, cost.streams, cost.streams == 1 ? "" : "s");
    info_.eligibility.reason = "synthetic device: a batch of n costs fixed + per-item * n";
  }
  const ModelEntry& info() const override { return info_; }
  std::unique_ptr<ServiceHandle> make_service(const ArmSpec& arm, const CacheSpec& cache,
                                              const std::string& tier_root) override {
    if (!tier_root.empty()) throw Error(ErrorKind::config, "the synthetic device has no disk tier (warm-disk phase)");
    const ServiceOptions o = service_options(arm, cache);
    return make_service_handle(std::make_shared<SyntheticService>(hook_, o), [](const WorkItem& w) {
      return (w.reference ? w.reference->id : std::string()) + "|" + w.ref_text;
    });
  }

 private:
  std::shared_ptr<SyntheticHook> hook_;
  ModelEntry info_;
};

}  // namespace

double synthetic_knee_rps(const SyntheticDeviceCost& cost, int batch) {
  return 1000.0 * batch * cost.streams / (cost.fixed_ms + cost.per_item_ms * batch);
}

BackendFactory synthetic_device_factory(const SyntheticDeviceCost& cost) {
  return [cost](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    return std::make_unique<SyntheticBackend>(spec, cost);
  };
}

}  // namespace refenc::profile
