#include "py_ref.hpp"

#include <atomic>
#include <mutex>
#include <vector>

namespace refenc::python {
namespace {

struct ReleaseQueue {
  std::mutex mutex;
  std::vector<PyObject*> objects;
  std::atomic<bool> pending{false};
};

ReleaseQueue& release_queue() {
  static auto* queue = new ReleaseQueue;  // never destroyed: threads may queue during interpreter exit
  return *queue;
}

}  // namespace

void release_reference(PyObject* object) noexcept {
  if (!object) return;
  if (Py_IsInitialized() && PyGILState_Check()) {
    Py_DECREF(object);
    return;
  }
  ReleaseQueue& q = release_queue();
  std::lock_guard lock(q.mutex);
  q.objects.push_back(object);
  q.pending.store(true, std::memory_order_release);
}

void drain_released() noexcept {
  ReleaseQueue& q = release_queue();
  if (!q.pending.load(std::memory_order_acquire)) return;
  std::vector<PyObject*> objects;
  {
    std::lock_guard lock(q.mutex);
    objects.swap(q.objects);
    q.pending.store(false, std::memory_order_release);
  }
  for (PyObject* o : objects) Py_DECREF(o);  // may run __del__ code, hence outside the queue's lock
}

}  // namespace refenc::python
