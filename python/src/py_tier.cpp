#include "py_tier.hpp"

#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "core/log.hpp"

namespace py = pybind11;

namespace refenc::python {

std::shared_ptr<const SharedRef> PyTier::to_python(const std::shared_ptr<const Artifact>& entry) noexcept {
  if (!entry) return nullptr;
  std::string failure;
  {
    py::gil_scoped_acquire gil;
    try {
      py::object object = codec_->from_artifact(*entry);
      return std::make_shared<const SharedRef>(std::make_shared<const PyRef>(PyRef::steal(object.release().ptr())));
    } catch (py::error_already_set& e) {
      failure = e.what();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  unconvertible_.fetch_add(1, std::memory_order_relaxed);
  if (!warned_.exchange(true)) log::warn("second-tier entry not convertible to Python, treated as a miss: " + failure);
  return nullptr;
}

std::shared_ptr<const SharedRef> PyTier::load(const ReferenceEncodeKey& key) noexcept {
  return to_python(inner_->load(key));
}

TierLookup<SharedRef> PyTier::load_or_lead(const ReferenceEncodeKey& key, std::chrono::milliseconds wait) noexcept {
  TierLookup<Artifact> found = inner_->load_or_lead(key, wait);
  return {to_python(found.stored), std::move(found.lease), found.shared};
}

void PyTier::store(const ReferenceEncodeKey& key, const SharedRef& stored) noexcept {
  Artifact entry;
  std::string failure;
  {
    py::gil_scoped_acquire gil;
    try {
      entry = codec_->to_artifact(py::handle(stored->get()));
    } catch (py::error_already_set& e) {
      failure = e.what();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  if (!failure.empty()) {
    unconvertible_.fetch_add(1, std::memory_order_relaxed);
    if (!warned_.exchange(true))
      log::warn("stored artifact has no entry form (a tensor or a dict of tensors and strings), not written: " +
                failure);
    return;
  }
  inner_->store(key, entry);
}

}  // namespace refenc::python
