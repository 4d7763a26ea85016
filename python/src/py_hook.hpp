// PyHook: the ReferenceEncodeHook that lets the C++ service drive a Python hook object.
//
// The Python layer normalizes the raw input and computes its key itself (with the GIL, before the
// call releases it), and hands both in as a PreparedInput; the C++ service then does the mechanics
// (single-flight, LRU, stats, batching) and calls back here only for the model's work: encode_one,
// encode_batch, store_artifact and revalidate, each with the GIL taken for the call and nothing
// else. load_artifact needs no Python: it returns the stored object, and the binding calls the hook's
// load_artifact with the GIL held once the service has returned, so every caller still gets its own
// caller-owned copy. An exception raised by the hook is recorded in HookErrors and crosses the
// service as an Error carrying its token.
//
//   auto hook = std::make_shared<PyHook>(py_hook, sizer, errors, /*can_batch=*/false);
//   ReferenceEncodeService<PreparedPtr, Outcome, SharedRef, PreparedPtr> service(hook, options);
//   Outcome out = service.get_or_encode(prepared);    // GIL released around this call
//   // out.stored: call py_hook.load_artifact(out.object); else out.object is the caller's already
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/reference_encode_hook.hpp"
#include "core/reference_encode_key.hpp"
#include "hook_errors.hpp"
#include "py_ref.hpp"

namespace refenc::python {

/// A normalized input and what the Python layer computed for it.
struct PreparedInput {
  PyRef item;                              ///< hook.normalize_input(raw)
  PyRef key_object;                        ///< hook.cache_key(item) as Python returned it (None: uncacheable)
  std::optional<ReferenceEncodeKey> key;   ///< The same key, as the service's key type.
};
using PreparedPtr = std::shared_ptr<const PreparedInput>;

/// What the service returns: an artifact straight from encode_one/encode_batch (an uncacheable
/// input's, returned as is) or a stored object that the caller still has to load_artifact.
struct Outcome {
  SharedRef object;
  bool stored = false;
};

class PyHook final : public ReferenceEncodeHook<PreparedPtr, Outcome, SharedRef, PreparedPtr> {
 public:
  /// `hook`: the Python hook. `sizer(stored) -> int`: the bytes a stored object is charged.
  /// `errors`: where the hook's exceptions are recorded. `can_batch`: hook.can_encode_batch().
  PyHook(pybind11::object hook, pybind11::object sizer, std::shared_ptr<HookErrors> errors, bool can_batch);
  /// Drops the Python references (needs the GIL).
  ~PyHook() override;

  PreparedPtr normalize_input(const PreparedPtr& raw) override { return raw; }
  std::optional<ReferenceEncodeKey> cache_key(const PreparedPtr& item) override { return item->key; }
  Outcome encode_one(const PreparedPtr& item) override;
  SharedRef store_artifact(const Outcome& artifact) override;
  Outcome load_artifact(const SharedRef& stored) override { return {stored, true}; }
  bool revalidate(const PreparedPtr& item, const ReferenceEncodeKey& key) override;
  std::size_t stored_bytes(const SharedRef& stored) const override;
  bool can_encode_batch() const override { return can_batch_; }
  std::vector<Outcome> encode_batch(std::span<const PreparedPtr* const> items) override;

 private:
  pybind11::object hook_;
  pybind11::object sizer_;
  std::shared_ptr<HookErrors> errors_;
  bool can_batch_;
};

}  // namespace refenc::python
