// PythonBackend: a Python hook behind ModelBackend, in an interpreter embedded once per process.
// Without REFENC_EMBED_PYTHON (a build with -DREFENC_PYTHON=OFF) only the refusal is compiled.
#include "python_backend.hpp"

#include "core/error.hpp"

#if REFENC_EMBED_PYTHON

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "encoder_backend.hpp"
#include "encoders/encoder_hook.hpp"
#include "store/artifact.hpp"

namespace py = pybind11;

namespace refenc::profile {
namespace {

/// Starts the interpreter (once) and releases the GIL, so that any thread can take it for a call.
/// The interpreter lives until the process exits: finalizing it under LibTorch's threads is unsafe.
void ensure_interpreter() {
  static std::once_flag once;
  std::call_once(once, [] {
    py::initialize_interpreter(/*init_signal_handlers=*/false);  // Ctrl-C stays refenc's
    // The refenc package built next to this binary (<build>/python), for hooks that import refenc.
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto package = exe.parent_path().parent_path().parent_path() / "python";
    if (!ec && std::filesystem::exists(package / "refenc" / "__init__.py", ec))
      py::module_::import("sys").attr("path").attr("append")(package.string());
    PyEval_SaveThread();
  });
}

/// A Python object whose last C++ owner drops it under the GIL, on whatever thread that is.
using PyHandle = std::shared_ptr<py::object>;
PyHandle hold(py::object o) {
  return PyHandle(new py::object(std::move(o)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

/// The first line of a Python exception as refenc's error (kind `kind`), made while the GIL is held.
Error python_error(ErrorKind kind, const std::string& what, py::error_already_set& e) {
  std::string text = e.what();
  text = text.substr(0, text.find('\n'));
  return Error(kind, what + ": " + text);
}

/// One request as the hook receives it.
struct PyRequest {
  std::string reference_id, path, text;
  std::shared_ptr<const std::string> audio;
};

/// A normalized input, with what the hook said of it once, under the GIL.
struct PyItem {
  PyHandle item;
  PyHandle key_object;  ///< hook.cache_key(item) as returned (None: uncacheable).
  std::optional<ReferenceEncodeKey> key;
  std::size_t length = 0;  ///< hook.batch_length(item) when the hook has it, else 0.
};

/// A stored Python artifact (a tensor, or a dict of tensors and str) as refenc's Artifact.
Artifact to_artifact(const py::handle& stored) {
  static const std::vector<std::pair<std::string, DType>> dtypes{{"torch.uint8", DType::uint8},
                                                                 {"torch.int16", DType::int16},
                                                                 {"torch.int32", DType::int32},
                                                                 {"torch.int64", DType::int64},
                                                                 {"torch.float32", DType::float32}};
  const py::object tensor_type = py::module_::import("torch").attr("Tensor");
  Artifact a;
  auto add_tensor = [&](const std::string& name, py::object t) {
    const std::string dtype = py::str(t.attr("dtype"));
    auto it = std::find_if(dtypes.begin(), dtypes.end(), [&](const auto& d) { return d.first == dtype; });
    if (it == dtypes.end())
      throw Error(ErrorKind::encode, "artifact tensor '" + name + "' has dtype " + dtype +
                                         ", which refenc's tiers cannot keep (uint8, int16, int32, int64, float32)");
    t = t.attr("detach")().attr("to")("cpu").attr("contiguous")();
    std::vector<std::int64_t> shape;
    for (const py::handle d : t.attr("shape")) shape.push_back(d.cast<std::int64_t>());
    HostTensor h(it->second, std::move(shape));
    if (h.nbytes() > 0)
      std::memcpy(h.raw(), reinterpret_cast<const void*>(t.attr("data_ptr")().cast<std::uintptr_t>()), h.nbytes());
    a.tensors[name] = std::move(h);
  };
  if (py::isinstance(stored, tensor_type)) {
    add_tensor("tensor", py::reinterpret_borrow<py::object>(stored));
  } else if (py::isinstance<py::dict>(stored)) {
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(stored)) {
      if (!py::isinstance<py::str>(k)) throw Error(ErrorKind::encode, "artifact dict keys must be str");
      const std::string name = k.cast<std::string>();
      if (py::isinstance(v, tensor_type))
        add_tensor(name, py::reinterpret_borrow<py::object>(v));
      else if (py::isinstance<py::str>(v))
        a.meta[name] = v.cast<std::string>();
      else
        throw Error(ErrorKind::encode, "artifact value '" + name + "' is a " +
                                           std::string(py::str(v.get_type().attr("__name__"))) +
                                           "; refenc's tiers keep tensors and str");
    }
  } else {
    throw Error(ErrorKind::encode, "the stored artifact is a " + std::string(py::str(stored.get_type().attr("__name__"))) +
                                       "; refenc's tiers keep a tensor or a dict of tensors and str");
  }
  return a;
}

/// The hook's key as refenc's key type (duck-typed: the seven attributes, options_key optional).
std::optional<ReferenceEncodeKey> to_key(const py::handle& k) {
  if (k.is_none()) return std::nullopt;
  auto field = [&](const char* name, bool required) -> std::string {
    if (!py::hasattr(k, name)) {
      if (!required) return "";
      throw Error(ErrorKind::encode, std::string("cache_key returned an object without '") + name + "'");
    }
    py::object v = k.attr(name);
    if (!py::isinstance<py::str>(v)) throw Error(ErrorKind::encode, std::string("cache_key's '") + name + "' is not a str");
    return v.cast<std::string>();
  };
  return ReferenceEncodeKey{field("model_id", true),      field("model_revision", true), field("encoder_id", true),
                            field("encoder_config_hash", true), field("artifact_kind", true), field("input_key", true),
                            field("options_key", false)};
}

class PyEncodeHook final : public ReferenceEncodeHook<PyItem, Artifact, Artifact, PyRequest> {
 public:
  PyEncodeHook(py::object hook, std::string name, bool can_batch)
      : hook_(hold(std::move(hook))), name_(std::move(name)), can_batch_(can_batch) {}

  PyItem normalize_input(const PyRequest& r) override {
    py::gil_scoped_acquire gil;
    try {
      py::dict raw;
      raw["reference_id"] = r.reference_id;
      raw["path"] = r.path.empty() ? py::object(py::none()) : py::object(py::str(r.path));
      raw["audio"] = r.audio ? py::object(py::bytes(*r.audio)) : py::object(py::none());
      raw["text"] = r.text;
      py::object item = hook_->attr("normalize_input")(raw);
      py::object key = hook_->attr("cache_key")(item);
      PyItem out{hold(item), hold(key), {}, 0};
      try {
        out.key = to_key(key);
      } catch (const Error& e) {
        throw Error(ErrorKind::bad_input, name_ + ": " + r.reference_id + ": " + e.what());
      }
      if (py::hasattr(*hook_, "batch_length")) out.length = hook_->attr("batch_length")(item).cast<std::size_t>();
      return out;
    } catch (py::error_already_set& e) {
      throw python_error(ErrorKind::bad_input, name_ + ": " + r.reference_id + ": normalize_input", e);
    }
  }
  std::optional<ReferenceEncodeKey> cache_key(const PyItem& item) override { return item.key; }

  Artifact encode_one(const PyItem& item) override {
    py::gil_scoped_acquire gil;
    try {
      return stored_form(hook_->attr("encode_one")(*item.item));
    } catch (py::error_already_set& e) {
      throw python_error(ErrorKind::encode, name_ + ": encode_one", e);
    }
  }
  std::vector<Artifact> encode_batch(std::span<const PyItem* const> items) override {
    py::gil_scoped_acquire gil;
    try {
      py::list batch;
      for (const PyItem* i : items) batch.append(*i->item);
      py::list results(hook_->attr("encode_batch")(batch));  // any sequence
      if (results.size() != items.size())
        throw Error(ErrorKind::encode, name_ + ": encode_batch returned " + std::to_string(results.size()) +
                                           " artifacts for " + std::to_string(items.size()) + " items");
      std::vector<Artifact> out;
      for (const py::handle r : results) out.push_back(stored_form(py::reinterpret_borrow<py::object>(r)));
      return out;
    } catch (py::error_already_set& e) {
      throw python_error(ErrorKind::encode, name_ + ": encode_batch", e);
    }
  }
  bool revalidate(const PyItem& item, const ReferenceEncodeKey&) override {
    py::gil_scoped_acquire gil;
    try {
      return hook_->attr("revalidate")(*item.item, *item.key_object).cast<bool>();
    } catch (py::error_already_set& e) {
      throw python_error(ErrorKind::encode, name_ + ": revalidate", e);
    }
  }
  bool can_encode_batch() const override { return can_batch_; }
  std::size_t batch_length(const PyItem& item) const override { return item.length; }

  // The cached form is refenc's, as for the C++ encoders: integer tensors narrowed when stored,
  // widened to int64 when handed out.
  Artifact store_artifact(const Artifact& a) override { return a.compacted(); }
  Artifact load_artifact(const Artifact& stored) override { return stored.widened(); }
  std::size_t stored_bytes(const Artifact& stored) const override { return stored.byte_size(); }
  ArtifactParity compare_artifacts(const Artifact& batched, const Artifact& single) const override {
    return artifact_parity(batched, single);
  }

 private:
  /// hook.store_artifact(artifact) converted to an Artifact (GIL held).
  Artifact stored_form(py::object artifact) {
    py::object stored = hook_->attr("store_artifact")(artifact);
    try {
      return to_artifact(stored);
    } catch (const Error& e) {
      throw Error(ErrorKind::encode, name_ + ": store_artifact: " + e.what());
    }
  }

  PyHandle hook_;
  std::string name_;
  bool can_batch_;
};

using PyService = ReferenceEncodeService<PyItem, Artifact, Artifact, PyRequest>;

class PythonBackend final : public ModelBackend {
 public:
  explicit PythonBackend(const ModelSpec& spec) {
    ensure_interpreter();
    const std::string where = spec.name + ": encoder.python '" + spec.encoder.python + "'";
    py::gil_scoped_acquire gil;
    try {
      py::list path = py::module_::import("sys").attr("path");
      for (auto it = spec.encoder.python_path.rbegin(); it != spec.encoder.python_path.rend(); ++it)
        path.insert(0, *it);
      const std::string& target = spec.encoder.python;
      const auto colon = target.find(':');
      py::object module = py::module_::import(target.substr(0, colon).c_str());
      const std::string factory_name = target.substr(colon + 1);
      if (!py::hasattr(module, factory_name.c_str()))
        throw Error(ErrorKind::config, where + ": module has no '" + factory_name + "'");
      py::dict kwargs = py::module_::import("json").attr("loads")(spec.encoder.python_args);
      py::object hook = module.attr(factory_name.c_str())(**kwargs);
      for (const char* method : {"normalize_input", "cache_key", "encode_one", "store_artifact", "revalidate"})
        if (!py::hasattr(hook, method))
          throw Error(ErrorKind::config, where + ": the hook has no method '" + method + "'");
      const bool batches = py::hasattr(hook, "can_encode_batch") && hook.attr("can_encode_batch")().cast<bool>() &&
                           py::hasattr(hook, "encode_batch");
      info_.name = spec.name;
      info_.scale = "python";
      info_.sample_rate = py::hasattr(hook, "sample_rate") ? hook.attr("sample_rate").cast<int>() : 0;
      info_.frame_rate = py::hasattr(hook, "frame_rate") ? hook.attr("frame_rate").cast<double>() : 0.0;
      info_.can_encode_batch = batches;
      info_.real_weights = false;
      info_.evidence_grade = "python hook " + spec.encoder.python;
      info_.eligibility.reason = batches ? "the Python hook's encode_batch (can_encode_batch() is true)"
                                         : "the Python hook does not batch (can_encode_batch() is false)";
      hook_ = std::make_shared<PyEncodeHook>(std::move(hook), spec.name, batches);
    } catch (py::error_already_set& e) {
      throw python_error(ErrorKind::config, where, e);
    } catch (const py::cast_error& e) {
      throw Error(ErrorKind::config, where + ": " + e.what());
    }
    if (spec.encoder.threads > 0) encoders::set_torch_threads(spec.encoder.threads);
    encoders::warm_up_torch();
  }

  const ModelEntry& info() const override { return info_; }
  int intra_op_threads() const override { return encoders::torch_threads(); }
  bool set_intra_op_threads(int threads) override {
    encoders::set_torch_threads(threads);  // one LibTorch in the process: Python's torch uses it too
    return true;
  }

  std::unique_ptr<ServiceHandle> make_service(const ArmSpec& arm, const CacheSpec& cache,
                                              const std::string& tier_root) override {
    auto service = std::make_shared<PyService>(hook_, service_options(arm, cache), profile_service_tier(cache, tier_root));
    return make_service_handle(service, [](const WorkItem& w) {
      PyRequest r;
      r.text = w.ref_text;
      if (w.reference) {
        r.reference_id = w.reference->id;
        r.path = w.reference->wav ? "" : w.reference->path;
        r.audio = w.reference->wav;
      }
      return r;
    });
  }

 private:
  ModelEntry info_;
  std::shared_ptr<PyEncodeHook> hook_;
};

}  // namespace

bool python_hooks_available() { return true; }

std::unique_ptr<ModelBackend> make_python_backend(const ModelSpec& spec) { return std::make_unique<PythonBackend>(spec); }

}  // namespace refenc::profile

#else

namespace refenc::profile {

bool python_hooks_available() { return false; }

std::unique_ptr<ModelBackend> make_python_backend(const ModelSpec& spec) {
  throw Error(ErrorKind::config, spec.name + ": encoder.python: this refenc was built without Python (REFENC_PYTHON=OFF)");
}

}  // namespace refenc::profile

#endif
