// PyService: the C++ ReferenceEncodeService as the Python package drives it, with the GIL rules.
//
// The Python layer (refenc/__init__.py) normalizes the input and computes its key, then calls
// get_or_encode, which releases the GIL for the whole of the service's work (lookups, waits on a
// same-key leader, the batch queue, the second tier) and takes it back only to call the hook (see
// PyHook) and, once the service has returned, to call hook.load_artifact on the stored object. Python
// objects held on the C++ side are PyRefs: refcounted only under the GIL, released later otherwise.
// close() stops the batch worker from a helper thread and waits for it at most a given time, so that
// a close() made while a batch is stuck in the hook returns (as Python's thread join with a timeout).
//
//   PyService service(hook, sizer, can_batch, options, tier, error_factory);   // GIL held
//   pybind11::object artifact = service.get_or_encode(item, key, pybind11::str("user 42 clip"));
//   pybind11::dict stats = service.stats();
//   service.close(5.0);
#pragma once

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/reference_encode_service.hpp"
#include "hook_errors.hpp"
#include "py_hook.hpp"
#include "py_tier.hpp"

namespace refenc::python {

using Service = ReferenceEncodeService<PreparedPtr, Outcome, SharedRef, PreparedPtr>;

class PyService {
 public:
  /// `hook`: the Python hook. `sizer(stored) -> int`. `can_batch`: hook.can_encode_batch().
  /// `error_factory(kind, message, hook_exception_or_None, desc_or_None) -> exception` builds what a
  /// failed call raises. `tier` may be null. Throws Error(config) for options the service refuses.
  PyService(pybind11::object hook, pybind11::object sizer, bool can_batch, ServiceOptions options,
            std::shared_ptr<PyTier> tier, pybind11::object error_factory);
  /// Stops the batch worker (GIL released meanwhile) and drops every Python object held.
  ~PyService();
  PyService(const PyService&) = delete;
  PyService& operator=(const PyService&) = delete;

  /// The artifact for `item` (keyed `key`: a ReferenceEncodeKey, or None for uncacheable), owned by
  /// the caller; `desc` (a str or None) is the caller's context. Raises what error_factory builds on
  /// failure.
  pybind11::object get_or_encode(pybind11::handle item, pybind11::handle key, pybind11::handle desc);
  /// Counters and gauges by name (ServiceStats::fields(), plus "unconvertible" with a tier).
  pybind11::dict stats() const;
  /// The stats in the Prometheus text format, with `labels` on every sample.
  std::string prometheus(const std::vector<std::pair<std::string, std::string>>& labels,
                         const std::string& prefix) const;
  /// Encodes in flight now.
  std::size_t inflight() const;
  /// Stops the batch worker, failing queued items; waits for it at most `wait_s` seconds. Later calls
  /// to get_or_encode raise the closed error. Idempotent.
  void close(double wait_s);
  /// Waits at most `wait_s` seconds for a close() to have stopped the batch worker (GIL released).
  void wait_closed(double wait_s);
  bool batching() const noexcept { return service_->batching(); }
  /// True while the batch worker runs (false without batching).
  bool batch_worker_alive() const;
  /// Drops every memory entry.
  void clear() {
    pybind11::gil_scoped_release nogil;
    service_->clear();
  }

 private:
  std::shared_ptr<HookErrors> errors_;
  pybind11::object hook_;
  pybind11::object load_artifact_;
  pybind11::object error_factory_;
  std::shared_ptr<PyTier> tier_;
  std::unique_ptr<Service> service_;
  std::thread closer_;
  mutable std::mutex close_mutex_;
  std::condition_variable close_cv_;
  bool close_started_ = false;
  bool close_done_ = false;
};

/// The service's key type from a Python ReferenceEncodeKey (any object with the seven str
/// attributes); raises TypeError naming the field that is missing or not a str.
ReferenceEncodeKey key_from_python(pybind11::handle key);

}  // namespace refenc::python
