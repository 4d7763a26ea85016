#include "artifact_codec.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace py = pybind11;

namespace refenc::python {

ArtifactCodec::ArtifactCodec(py::object module)
    : to_entry_(module.attr("to_entry")), from_entry_(module.attr("from_entry")) {}

ArtifactCodec::~ArtifactCodec() {
  py::gil_scoped_acquire gil;
  to_entry_ = py::object();
  from_entry_ = py::object();
}

Artifact ArtifactCodec::to_artifact(py::handle object) const {
  py::tuple parts = to_entry_(object);
  Artifact out;
  for (py::handle t : py::list(parts[0])) {
    py::tuple f = py::reinterpret_borrow<py::tuple>(t);
    const auto name = f[0].cast<std::string>();
    std::vector<std::int64_t> shape;
    for (py::handle d : f[2]) shape.push_back(d.cast<std::int64_t>());
    HostTensor tensor(dtype_from_string(f[1].cast<std::string>()), std::move(shape));
    const std::string_view data = f[3].cast<std::string_view>();
    if (data.size() != tensor.nbytes())
      throw Error(ErrorKind::bad_input, "tensor '" + name + "': " + std::to_string(data.size()) +
                                            " bytes for " + tensor.describe());
    if (!data.empty()) std::memcpy(tensor.raw(), data.data(), data.size());
    out.tensors.emplace(name, std::move(tensor));
  }
  for (auto [k, v] : py::dict(parts[1])) out.meta.emplace(k.cast<std::string>(), v.cast<std::string>());
  return out;
}

py::object ArtifactCodec::from_artifact(const Artifact& artifact) const {
  py::list tensors;
  for (const auto& [name, t] : artifact.tensors) {
    py::list shape;
    for (std::int64_t d : t.shape()) shape.append(d);
    tensors.append(py::make_tuple(name, std::string(to_string(t.dtype())), shape,
                                  py::bytes(reinterpret_cast<const char*>(t.raw()), t.nbytes())));
  }
  py::dict meta;
  for (const auto& [k, v] : artifact.meta) meta[py::str(k)] = py::str(v);
  return from_entry_(tensors, meta);
}

}  // namespace refenc::python
