// ModelBackend: what the profiler needs from a model, independent of LibTorch and of the encoders.
//
// A backend describes the model (rates, batching capability, evidence grade) and makes services, one
// per cell, each wrapped as a ServiceHandle that encodes one work item and reports its stats. The
// encoders' backend lives in encoder_backend.cpp; tests use a fake hook through make_service_handle.
//
//   auto handle = make_service_handle(std::make_shared<Service>(hook, opts, tier),
//                                     [](const WorkItem& w) { return w.reference->id + "|" + w.ref_text; });
//   RequestTrace t;
//   handle->encode(item, t);      // throws on failure; t is filled by the service
//   std::uint64_t misses = handle->stats().misses;
//   handle->keep_batched(8);                       // parity: keep up to 8 batched artifacts ...
//   std::vector<ParityCheck> checks = handle->check_parity();   // ... and compare with single encodes
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/reference_encode_hook.hpp"
#include "core/reference_encode_service.hpp"
#include "core/request_trace.hpp"
#include "core/service_stats.hpp"
#include "profile/record/run_record.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/manifest/reference_set.hpp"

namespace refenc::profile {

/// One request as sent: the reference, its transcript and the text to synthesise.
struct WorkItem {
  std::size_t index = 0;
  const ReferenceItem* reference = nullptr;
  std::string text;      ///< Text to synthesise (the synthesis model's input).
  std::string ref_text;  ///< Transcript of the reference (encoders that read it key on it).
};

/// A batched artifact compared with a single encode of the same request.
struct ParityCheck {
  std::size_t index = 0;  ///< WorkItem::index of the request.
  ArtifactParity parity;
  std::string error;  ///< Set when the single encode or the comparison threw.
};

/// One service under test.
class ServiceHandle {
 public:
  virtual ~ServiceHandle() = default;
  /// Encodes `item` through the service's get_or_encode with `trace`; throws what the service throws.
  virtual void encode(const WorkItem& item, RequestTrace& trace) = 0;
  virtual ServiceStats stats() const = 0;
  /// True when M4b batching is active in this service.
  virtual bool batching() const = 0;
  /// From now on, keeps the request and artifact of up to `limit` encode calls whose artifact a batch
  /// produced (0: keep none), for check_parity.
  virtual void keep_batched(std::size_t limit) { (void)limit; }
  /// Encodes each kept request alone through the hook (outside the service: nothing is cached or
  /// counted), compares it with the kept artifact, and forgets the kept ones.
  virtual std::vector<ParityCheck> check_parity() { return {}; }
  /// Runs `calls` encoder calls at once through the hook, outside the service (nothing is cached or
  /// counted): each one batch of every item of `items` when the hook batches and there are several,
  /// else a single encode of the first. Returns when all are done. Failures are ignored: priming only
  /// warms the process (CellWarmup), and the cell's own requests meet and record any error.
  virtual void prime(std::span<const WorkItem> items, int calls) {
    (void)items;
    (void)calls;
  }
};

/// The service options of an arm over the manifest's memory-tier bounds: every backend builds its
/// cell's service from these.
inline ServiceOptions service_options(const ArmSpec& arm, const CacheSpec& cache) {
  ServiceOptions o;
  o.max_items = cache.max_items;
  o.max_bytes = cache.max_bytes;
  o.max_batch_size = static_cast<std::size_t>(arm.max_batch_size);
  o.max_batch_wait = std::chrono::microseconds(static_cast<long>(arm.max_batch_wait_ms * 1000));
  o.cache_batched = arm.cache_batched;
  o.batch_workers = static_cast<std::size_t>(std::max(1, arm.batch_workers));
  o.batch_grouping = arm.group_by_length;
  return o;
}

class ModelBackend {
 public:
  virtual ~ModelBackend() = default;
  /// The model as the run record lists it: name, scale, evidence grade, weights, rates, batching
  /// capability, and in `eligibility.reason` why batching is or is not applicable (may be empty). The
  /// profiler decides `eligibility.eligible` and fills `encoder` and `synthesis` from the manifest.
  virtual const ModelEntry& info() const = 0;
  /// A fresh service for `arm` (empty memory tier). With a non-empty `tier_root`, the service has a
  /// disk (second) tier rooted there; services made over the same root share it.
  virtual std::unique_ptr<ServiceHandle> make_service(const ArmSpec& arm, const CacheSpec& cache,
                                                      const std::string& tier_root) = 0;
  /// The encoder library's intra-op threads as the encodes use them now (0 = unknown).
  virtual int intra_op_threads() const { return 0; }
  /// Sets the encoder library's intra-op threads for the cells that follow (threads as a profiled
  /// dimension); false when this backend cannot.
  virtual bool set_intra_op_threads(int threads) {
    (void)threads;
    return false;
  }
  /// Calls a modelled device runs at once (its streams); 0 for a real device. M4b's matched batch
  /// workers are these streams when set.
  virtual int device_streams() const { return 0; }
};

/// Makes the backend of a manifest's model; throws Error(config) for an unknown model.
using BackendFactory = std::function<std::unique_ptr<ModelBackend>(const ModelSpec&)>;

/// Wraps a ReferenceEncodeService (any instantiation) as a ServiceHandle; `to_raw` builds its request.
template <class Service, class ToRaw>
std::unique_ptr<ServiceHandle> make_service_handle(std::shared_ptr<Service> service, ToRaw to_raw) {
  class Handle final : public ServiceHandle {
   public:
    Handle(std::shared_ptr<Service> s, ToRaw f) : service_(std::move(s)), to_raw_(std::move(f)) {}
    void encode(const WorkItem& item, RequestTrace& trace) override {
      auto raw = to_raw_(item);
      auto out = service_->get_or_encode(raw, item.reference ? item.reference->id : std::string(), &trace);
      if (trace.batch_size > 0) {
        std::lock_guard lock(mutex_);
        if (kept_.size() < limit_) kept_.push_back({item.index, std::move(raw), std::move(out)});
      }
    }
    ServiceStats stats() const override { return service_->stats(); }
    bool batching() const override { return service_->batching(); }
    void keep_batched(std::size_t limit) override {
      std::lock_guard lock(mutex_);
      limit_ = limit;
    }
    std::vector<ParityCheck> check_parity() override {
      std::vector<Kept> kept;
      {
        std::lock_guard lock(mutex_);
        kept.swap(kept_);
      }
      auto& hook = service_->hook();
      std::vector<ParityCheck> out;
      for (const Kept& k : kept) {
        ParityCheck c{k.index, {}, {}};
        try {
          auto single = hook.load_artifact(hook.store_artifact(hook.encode_one(hook.normalize_input(k.raw))));
          c.parity = hook.compare_artifacts(k.artifact, single);
        } catch (const std::exception& e) {
          c.parity.identical = false;
          c.error = e.what();
        }
        out.push_back(std::move(c));
      }
      return out;
    }
    void prime(std::span<const WorkItem> items, int calls) override {
      auto& hook = service_->hook();
      using Input = std::decay_t<decltype(hook.normalize_input(std::declval<const Raw&>()))>;
      std::vector<Input> inputs;
      try {
        for (const WorkItem& w : items) inputs.push_back(hook.normalize_input(to_raw_(w)));
      } catch (const std::exception&) {
        return;
      }
      if (inputs.empty()) return;
      std::vector<const Input*> batch;
      for (const Input& in : inputs) batch.push_back(&in);
      const bool batched = batch.size() > 1 && hook.can_encode_batch();
      std::vector<std::jthread> threads;
      for (int c = 0; c < calls; ++c)
        threads.emplace_back([&] {
          try {
            if (batched)
              hook.encode_batch(batch);
            else
              hook.encode_one(*batch.front());
          } catch (const std::exception&) {
          }
        });
    }

   private:
    using Raw = std::decay_t<decltype(std::declval<ToRaw&>()(std::declval<const WorkItem&>()))>;
    using Artifact = std::decay_t<decltype(std::declval<Service&>().get_or_encode(std::declval<const Raw&>()))>;
    struct Kept {
      std::size_t index;
      Raw raw;
      Artifact artifact;
    };
    std::shared_ptr<Service> service_;
    ToRaw to_raw_;
    std::mutex mutex_;
    std::size_t limit_ = 0;
    std::vector<Kept> kept_;
  };
  return std::make_unique<Handle>(std::move(service), std::move(to_raw));
}

}  // namespace refenc::profile
