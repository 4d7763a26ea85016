#include "audio_bindings.hpp"

#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "audio/reference_loader.hpp"
#include "core/error.hpp"

namespace py = pybind11;

namespace refenc::python {

void bind_audio(py::module_& m) {
  m.def(
      "load_reference",
      [](const py::object& source, bool is_bytes, int sample_rate, std::optional<double> loudness_dbfs,
         double max_gain_db) {
        if (sample_rate < 1 || sample_rate > 384000)
          throw Error(ErrorKind::config, "sample_rate must be within 1..384000 Hz, got " + std::to_string(sample_rate));
        if (max_gain_db < 0) throw Error(ErrorKind::config, "max_gain_db must be >= 0");
        audio::ReferenceSource src = is_bytes ? audio::ReferenceSource::from_bytes(source.cast<std::string>())
                                              : audio::ReferenceSource::parse(source.cast<std::string>());
        audio::LoadOptions o;
        o.target_rate = sample_rate;
        o.loudness_target_dbfs = loudness_dbfs;
        o.max_gain_db = max_gain_db;
        audio::LoadedReference r;
        {
          py::gil_scoped_release nogil;
          r = audio::load_reference(src, o);
        }
        py::dict out;
        out["samples"] = py::bytes(reinterpret_cast<const char*>(r.samples.data()), r.samples.size() * sizeof(float));
        out["sample_rate"] = r.sample_rate;
        out["source_rate"] = r.source_rate;
        out["source_channels"] = r.source_channels;
        out["source_format"] = r.source_format;
        out["content_key"] = r.content_key;
        out["gain_db"] = r.gain_db;
        out["description"] = r.description;
        return out;
      },
      py::arg("source"), py::arg("is_bytes"), py::arg("sample_rate"), py::arg("loudness_dbfs"),
      py::arg("max_gain_db"));
}

}  // namespace refenc::python
