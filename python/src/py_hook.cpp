#include "py_hook.hpp"

#include <string>
#include <utility>

namespace py = pybind11;

namespace refenc::python {
namespace {

SharedRef share(py::object object) { return std::make_shared<const PyRef>(PyRef::steal(object.release().ptr())); }

py::handle handle_of(const PyRef& ref) { return py::handle(ref.get()); }

}  // namespace

PyHook::PyHook(py::object hook, py::object sizer, std::shared_ptr<HookErrors> errors, bool can_batch)
    : hook_(std::move(hook)), sizer_(std::move(sizer)), errors_(std::move(errors)), can_batch_(can_batch) {}

PyHook::~PyHook() {
  py::gil_scoped_acquire gil;
  hook_ = py::object();
  sizer_ = py::object();
}

Outcome PyHook::encode_one(const PreparedPtr& item) {
  py::gil_scoped_acquire gil;
  drain_released();
  try {
    return {share(hook_.attr("encode_one")(handle_of(item->item))), false};
  } catch (py::error_already_set& e) {
    throw errors_->record(e);
  }
}

SharedRef PyHook::store_artifact(const Outcome& artifact) {
  py::gil_scoped_acquire gil;
  try {
    return share(hook_.attr("store_artifact")(handle_of(*artifact.object)));
  } catch (py::error_already_set& e) {
    throw errors_->record(e);
  }
}

bool PyHook::revalidate(const PreparedPtr& item, const ReferenceEncodeKey& key) {
  (void)key;  // the Python key object is the same key
  py::gil_scoped_acquire gil;
  try {
    return py::bool_(hook_.attr("revalidate")(handle_of(item->item), handle_of(item->key_object)));
  } catch (py::error_already_set& e) {
    throw errors_->record(e);
  }
}

std::size_t PyHook::stored_bytes(const SharedRef& stored) const {
  py::gil_scoped_acquire gil;
  try {
    const long long n = sizer_(handle_of(*stored)).cast<long long>();
    if (n < 0) throw Error(ErrorKind::encode, "stored_bytes returned a negative size: " + std::to_string(n));
    return static_cast<std::size_t>(n);
  } catch (py::error_already_set& e) {
    throw errors_->record(e);
  } catch (py::cast_error& e) {
    throw Error(ErrorKind::encode, std::string("stored_bytes did not return an int: ") + e.what());
  }
}

std::vector<Outcome> PyHook::encode_batch(std::span<const PreparedPtr* const> items) {
  py::gil_scoped_acquire gil;
  drain_released();
  try {
    py::list batch(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) batch[i] = handle_of((*items[i])->item);
    py::object results = hook_.attr("encode_batch")(batch);
    const std::size_t n = py::len(results);
    if (n != items.size())
      throw Error(ErrorKind::encode, "encode_batch returned " + std::to_string(n) + " artifacts for " +
                                         std::to_string(items.size()) + " items");
    std::vector<Outcome> out;
    out.reserve(n);
    for (py::handle r : results) out.push_back({share(py::reinterpret_borrow<py::object>(r)), false});
    return out;
  } catch (py::error_already_set& e) {
    throw errors_->record(e);
  }
}

}  // namespace refenc::python
