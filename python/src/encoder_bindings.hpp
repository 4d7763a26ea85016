// bind_encoders: refenc's own encoders (lib/encoders) from Python, for refenc.Encoder: the seeded proxies,
// a published checkpoint (`checkpoint`) or a TorchScript module (`module`), with the CLI's options.
//
// Each method is the C++ hook's: normalize decodes a reference (a path, a data URI or bytes) at the
// family's rate into an opaque EncoderInput, cache_key gives the key's fields, encode and encode_batch run
// the network; all of them with the GIL released. An artifact comes back as a dict: each tensor as
// (dtype, shape, bytes), each metadata value as a str.
//
//   PYBIND11_MODULE(_core, m) { bind_encoders(m); }
//   # Python: enc = _core.Encoder("fish-s2-pro", "tiny", "float32", "cpu", "", "", 1)
//   #         item = enc.normalize("clip.wav", False, "", False); enc.encode(item)["codes"]
#pragma once

#include <pybind11/pybind11.h>

namespace refenc::python {

/// Adds the classes Encoder and EncoderInput to `m`.
void bind_encoders(pybind11::module_& m);

}  // namespace refenc::python
