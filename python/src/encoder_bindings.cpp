#include "encoder_bindings.hpp"

#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "encoders/encoder_hook.hpp"

namespace py = pybind11;

namespace refenc::python {

namespace {

/// A decoded reference, opaque to Python: the hook's own input.
struct PyEncoderInput {
  encoders::EncodeInput input;
};

py::dict artifact_dict(const Artifact& a) {
  py::dict out;
  for (const auto& [name, t] : a.tensors) {
    out[py::str(name)] = py::make_tuple(std::string(to_string(t.dtype())), t.shape(),
                                         py::bytes(reinterpret_cast<const char*>(t.raw()), t.nbytes()));
  }
  for (const auto& [name, value] : a.meta) out[py::str(name)] = value;
  return out;
}

class PyEncoder {
 public:
  PyEncoder(const std::string& model, encoders::EncoderOptions options) {
    py::gil_scoped_release nogil;
    hook_ = encoders::make_hook(model, options);
  }

  PyEncoderInput normalize(const py::object& source, bool is_bytes, const std::string& text, bool x_vector_only) {
    encoders::EncodeRequest request{is_bytes ? audio::ReferenceSource::from_bytes(source.cast<std::string>())
                                             : audio::ReferenceSource::parse(source.cast<std::string>()),
                                    text, x_vector_only};
    py::gil_scoped_release nogil;
    return {hook_->normalize_input(request)};
  }

  py::object cache_key(const PyEncoderInput& item) {
    std::optional<ReferenceEncodeKey> key;
    {
      py::gil_scoped_release nogil;
      key = hook_->cache_key(item.input);
    }
    if (!key) return py::none();
    py::dict d;
    d["model_id"] = key->model_id;
    d["model_revision"] = key->model_revision;
    d["encoder_id"] = key->encoder_id;
    d["encoder_config_hash"] = key->encoder_config_hash;
    d["artifact_kind"] = key->artifact_kind;
    d["input_key"] = key->input_key;
    d["options_key"] = key->options_key;
    return d;
  }

  py::dict encode(const PyEncoderInput& item) {
    Artifact a;
    {
      py::gil_scoped_release nogil;
      a = hook_->encode_one(item.input);
    }
    return artifact_dict(a);
  }

  py::list encode_batch(const std::vector<const PyEncoderInput*>& items) {
    std::vector<const encoders::EncodeInput*> inputs;
    for (const PyEncoderInput* i : items) inputs.push_back(&i->input);
    std::vector<Artifact> out;
    {
      py::gil_scoped_release nogil;
      out = hook_->encode_batch(std::span<const encoders::EncodeInput* const>(inputs));
    }
    py::list list;
    for (const Artifact& a : out) list.append(artifact_dict(a));
    return list;
  }

  bool can_encode_batch() const { return hook_->can_encode_batch(); }

  py::dict config() const {
    const encoders::EncoderConfig& c = hook_->config();
    const encoders::ModelInfo& info = hook_->info();
    py::dict d;
    d["model_id"] = info.name;
    d["model_revision"] = c.model_revision;
    d["encoder_id"] = info.encoder_id;
    d["encoder_config_hash"] = c.config_hash;
    d["artifact_kind"] = info.artifact_kind;
    d["config_json"] = c.config_json;
    d["parameters"] = c.parameters;
    d["checkpoint"] = c.checkpoint;
    d["sample_rate"] = info.sample_rate;
    d["reads_text"] = info.reads_text;
    return d;
  }

 private:
  std::shared_ptr<encoders::ModelHook> hook_;
};

}  // namespace

void bind_encoders(py::module_& m) {
  py::class_<PyEncoderInput>(m, "EncoderInput", "A reference decoded at an encoder's rate (opaque).")
      .def_property_readonly("samples", [](const PyEncoderInput& i) { return i.input.audio.samples.size(); })
      .def_property_readonly("sample_rate", [](const PyEncoderInput& i) { return i.input.audio.sample_rate; })
      .def_property_readonly("content_key", [](const PyEncoderInput& i) { return i.input.audio.content_key; })
      .def_property_readonly("description", [](const PyEncoderInput& i) { return i.input.audio.description; });

  py::class_<PyEncoder>(m, "Encoder", "One of refenc's encoders (lib/encoders), as its C++ hook.")
      .def(py::init([](const std::string& model, const std::string& scale, const std::string& dtype,
                       const std::string& device, const std::string& checkpoint, const std::string& module,
                       int threads) {
             if (threads < 0) throw Error(ErrorKind::config, "threads must be >= 0, got " + std::to_string(threads));
             encoders::EncoderOptions o;
             o.scale = scale;
             o.dtype = dtype;
             o.device = device;
             o.checkpoint = checkpoint;
             o.module_path = module;
             o.threads = threads;
             return std::make_unique<PyEncoder>(model, o);
           }),
           py::arg("model"), py::arg("scale"), py::arg("dtype"), py::arg("device"), py::arg("checkpoint"),
           py::arg("module"), py::arg("threads"))
      .def("normalize", &PyEncoder::normalize, py::arg("source"), py::arg("is_bytes"), py::arg("text"),
           py::arg("x_vector_only"))
      .def("cache_key", &PyEncoder::cache_key, py::arg("item"))
      .def("encode", &PyEncoder::encode, py::arg("item"))
      .def("encode_batch", &PyEncoder::encode_batch, py::arg("items"))
      .def_property_readonly("can_encode_batch", &PyEncoder::can_encode_batch)
      .def_property_readonly("config", &PyEncoder::config);
}

}  // namespace refenc::python
