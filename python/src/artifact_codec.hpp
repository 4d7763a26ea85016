// ArtifactCodec: converts between Python artifacts (a torch tensor, or a dict of tensors and
// strings) and refenc::Artifact, the form the disk tier, the Redis tier and the voice store keep.
//
// The tensor work is Python's (refenc/_artifact.py, with torch); this side copies the bytes into and
// out of HostTensors, so no LibTorch header is needed here. Both directions require the GIL and throw
// pybind11::error_already_set (or Error(bad_input)) for an object that has no entry form.
//
//   ArtifactCodec codec(pybind11::module_::import("refenc._artifact"));
//   Artifact entry = codec.to_artifact(stored);          // GIL held
//   pybind11::object back = codec.from_artifact(entry);  // an equal tensor or dict
#pragma once

#include <pybind11/pybind11.h>

#include "store/artifact.hpp"

namespace refenc::python {

class ArtifactCodec {
 public:
  /// `module` provides to_entry(obj) -> ([(name, dtype, shape, bytes)], {meta}) and
  /// from_entry([(name, dtype, shape, bytes)], {meta}) -> obj.
  explicit ArtifactCodec(pybind11::object module);
  ~ArtifactCodec();
  ArtifactCodec(const ArtifactCodec&) = delete;
  ArtifactCodec& operator=(const ArtifactCodec&) = delete;

  Artifact to_artifact(pybind11::handle object) const;
  pybind11::object from_artifact(const Artifact& artifact) const;

 private:
  pybind11::object to_entry_;
  pybind11::object from_entry_;
};

}  // namespace refenc::python
