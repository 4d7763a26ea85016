// PyRef: an owning reference to a Python object that C++ code may move, copy and drop without
// holding the GIL.
//
// The service keeps Python objects (inputs, stored artifacts) in its maps and queues and drops them
// on threads that do not hold the GIL (an eviction inside the service, a batch worker). A PyRef
// never touches the reference count without the GIL: moving it is a pointer move, it cannot be
// copied (SharedRef shares one without the GIL), and dropping it on a thread without the GIL queues
// the object, whose reference is released by the next call to drain_released() made with the GIL
// held (every call into the bindings makes one).
//
//   PyRef item = PyRef::steal(hook.attr("normalize_input")(raw).release().ptr());   // GIL held
//   auto shared = std::make_shared<const PyRef>(std::move(item));   // shared freely, no GIL needed
//   shared.reset();                          // last reference, no GIL: queued
//   refenc::python::drain_released();        // GIL held: the queued references are released
#pragma once

#include <Python.h>

#include <memory>
#include <utility>

namespace refenc::python {

/// Releases `object`'s reference now when this thread holds the GIL, else queues it for
/// drain_released(). Null is ignored.
void release_reference(PyObject* object) noexcept;

/// Releases the queued references. Requires the GIL. Cheap when nothing is queued.
void drain_released() noexcept;

class PyRef {
 public:
  PyRef() = default;
  /// Takes over a new reference (GIL not needed).
  static PyRef steal(PyObject* object) noexcept {
    PyRef r;
    r.object_ = object;
    return r;
  }
  /// Adds a reference to `object`. Requires the GIL.
  static PyRef borrow(PyObject* object) noexcept {
    Py_XINCREF(object);
    return steal(object);
  }

  PyRef(PyRef&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  PyRef& operator=(PyRef&& other) noexcept {
    if (this != &other) {
      release_reference(object_);
      object_ = std::exchange(other.object_, nullptr);
    }
    return *this;
  }
  /// Not copyable: a copy would need the GIL, and C++ code copies while holding its locks. Share a
  /// PyRef through SharedRef instead.
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  ~PyRef() { release_reference(object_); }

  /// The object (borrowed; valid while this PyRef lives). Use only with the GIL held.
  PyObject* get() const noexcept { return object_; }
  explicit operator bool() const noexcept { return object_ != nullptr; }

 private:
  PyObject* object_ = nullptr;
};

/// A Python object shared by C++ owners: copying and dropping it needs no GIL.
using SharedRef = std::shared_ptr<const PyRef>;

}  // namespace refenc::python
