#include "py_service.hpp"

#include <chrono>
#include <optional>

#include "core/prometheus_text.hpp"

namespace py = pybind11;

namespace refenc::python {
namespace {

std::string_view kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::bad_input: return "bad_input";
    case ErrorKind::encode: return "encode";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::config: return "config";
    case ErrorKind::io: return "io";
    case ErrorKind::closed: return "closed";
    case ErrorKind::cancelled: return "cancelled";
  }
  return "encode";
}

}  // namespace

ReferenceEncodeKey key_from_python(py::handle key) {
  static const char* const names[] = {"model_id",      "model_revision", "encoder_id", "encoder_config_hash",
                                      "artifact_kind", "input_key",      "options_key"};
  static PyObject* interned[7] = {};  // GIL held: created once, never released
  if (!interned[0])
    for (int i = 0; i < 7; ++i) interned[i] = PyUnicode_InternFromString(names[i]);
  ReferenceEncodeKey k;
  std::string* fields[7] = {&k.model_id,      &k.model_revision, &k.encoder_id, &k.encoder_config_hash,
                            &k.artifact_kind, &k.input_key,      &k.options_key};
  for (int i = 0; i < 7; ++i) {
    PyObject* value = PyObject_GetAttr(key.ptr(), interned[i]);
    if (!value) {
      PyErr_Clear();
      throw py::type_error(std::string("cache_key must return a ReferenceEncodeKey or None, got ") +
                           Py_TYPE(key.ptr())->tp_name + " without '" + names[i] + "'");
    }
    if (!PyUnicode_Check(value)) {
      const std::string type = Py_TYPE(value)->tp_name;
      Py_DECREF(value);
      throw py::type_error(std::string("ReferenceEncodeKey.") + names[i] + " must be a str, got " + type);
    }
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(value, &size);
    if (!text) {
      Py_DECREF(value);
      PyErr_Clear();
      throw py::value_error(std::string("ReferenceEncodeKey.") + names[i] + " is not encodable as UTF-8");
    }
    fields[i]->assign(text, static_cast<std::size_t>(size));
    Py_DECREF(value);
  }
  return k;
}

PyService::PyService(py::object hook, py::object sizer, bool can_batch, ServiceOptions options,
                     std::shared_ptr<PyTier> tier, py::object error_factory)
    : errors_(std::make_shared<HookErrors>()),
      hook_(hook),
      load_artifact_(hook.attr("load_artifact")),
      error_factory_(std::move(error_factory)),
      tier_(std::move(tier)) {
  auto adapter = std::make_shared<PyHook>(std::move(hook), std::move(sizer), errors_, can_batch);
  service_ = std::make_unique<Service>(std::move(adapter), std::move(options), tier_);  // starts the batch worker
}

PyService::~PyService() {
  {
    py::gil_scoped_release nogil;  // a batch in the hook needs the GIL to finish
    if (closer_.joinable())
      closer_.join();
    else
      service_->close();
  }
  service_.reset();  // GIL held: the cached objects are released now
  tier_.reset();
  errors_->clear();
  drain_released();
}

py::object PyService::get_or_encode(py::handle item, py::handle key, py::handle desc_object) {
  std::string_view desc;
  if (!desc_object.is_none()) {
    if (!PyUnicode_Check(desc_object.ptr())) throw py::type_error("desc must be a str or None");
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(desc_object.ptr(), &size);
    if (!text) throw py::error_already_set();
    desc = std::string_view(text, static_cast<std::size_t>(size));
  }
  auto prepared = std::make_shared<PreparedInput>();
  prepared->item = PyRef::borrow(item.ptr());
  if (!key.is_none()) {
    prepared->key = key_from_python(key);
    prepared->key_object = PyRef::borrow(key.ptr());
  }
  PreparedPtr input = std::move(prepared);
  std::optional<Outcome> out;
  std::optional<Error> error;
  {
    py::gil_scoped_release nogil;
    try {
      out.emplace(service_->get_or_encode(input, desc));
    } catch (const Error& e) {
      error.emplace(e);
    } catch (const std::exception& e) {
      error.emplace(ErrorKind::encode, e.what());
    }
  }
  drain_released();
  if (error) {
    py::object original = errors_->find(error->what());
    py::object exc = error_factory_(kind_name(error->kind()), error->what(), original, desc_object);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw py::error_already_set();
  }
  py::handle object(out->object->get());
  if (out->stored) return load_artifact_(object);
  return py::reinterpret_borrow<py::object>(object);
}

py::dict PyService::stats() const {
  ServiceStats s;
  {
    py::gil_scoped_release nogil;
    s = service_->stats();
  }
  py::dict d;
  for (const auto& [name, value] : s.fields()) d[py::str(name)] = value;
  if (tier_) d["unconvertible"] = tier_->unconvertible();
  return d;
}

std::string PyService::prometheus(const std::vector<std::pair<std::string, std::string>>& labels,
                                  const std::string& prefix) const {
  ServiceStats s;
  {
    py::gil_scoped_release nogil;
    s = service_->stats();
  }
  return prometheus_text(s, labels, prefix);
}

std::size_t PyService::inflight() const {
  py::gil_scoped_release nogil;
  return service_->audit().in_flight;
}

void PyService::close(double wait_s) {
  py::gil_scoped_release nogil;
  std::unique_lock lock(close_mutex_);
  if (!close_started_) {
    close_started_ = true;
    closer_ = std::thread([this] {
      service_->close();
      std::lock_guard done(close_mutex_);
      close_done_ = true;
      close_cv_.notify_all();
    });
  }
  close_cv_.wait_for(lock, std::chrono::duration<double>(wait_s < 0 ? 0 : wait_s), [&] { return close_done_; });
}

void PyService::wait_closed(double wait_s) {
  py::gil_scoped_release nogil;
  std::unique_lock lock(close_mutex_);
  close_cv_.wait_for(lock, std::chrono::duration<double>(wait_s < 0 ? 0 : wait_s), [&] { return close_done_; });
}

bool PyService::batch_worker_alive() const {
  if (!service_->batching()) return false;
  std::lock_guard lock(close_mutex_);
  return !close_done_;
}

}  // namespace refenc::python
