// bind_audio: refenc's reference ingestion from Python (refenc.load_reference), the same decode,
// downmix, resample, loudness and content key as the C++ encoders' normalize_input.
//
// A Python hook that decodes with it gets, for the same clip and options, the same samples and the
// same content key (refenc's `input_key`) as refenc's own hooks. The work runs with the GIL released.
//
//   PYBIND11_MODULE(_core, m) { bind_audio(m); }
//   # Python: _core.load_reference("clip.flac", False, 44100, None, 3.0)["content_key"]
#pragma once

#include <pybind11/pybind11.h>

namespace refenc::python {

/// Adds load_reference(source, is_bytes, sample_rate, loudness_dbfs, max_gain_db) -> dict to `m`.
void bind_audio(pybind11::module_& m);

}  // namespace refenc::python
