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
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/request_trace.hpp"
#include "core/service_stats.hpp"
#include "profile/record/run_record.hpp"
#include "profile/run/manifest.hpp"
#include "profile/run/reference_set.hpp"

namespace refenc::profile {

/// One request as sent: the reference, its transcript and the text to synthesise.
struct WorkItem {
  std::size_t index = 0;
  const ReferenceItem* reference = nullptr;
  std::string text;      ///< Text to synthesise (the synthesis model's input).
  std::string ref_text;  ///< Transcript of the reference (encoders that read it key on it).
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
};

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
      (void)service_->get_or_encode(raw, item.reference ? item.reference->id : std::string(), &trace);
    }
    ServiceStats stats() const override { return service_->stats(); }
    bool batching() const override { return service_->batching(); }

   private:
    std::shared_ptr<Service> service_;
    ToRaw to_raw_;
  };
  return std::make_unique<Handle>(std::move(service), std::move(to_raw));
}

}  // namespace refenc::profile
