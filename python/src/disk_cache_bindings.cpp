#include "disk_cache_bindings.hpp"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "store/disk_tier.hpp"

namespace py = pybind11;

namespace refenc::python {

void bind_disk_cache(py::module_& m) {
  py::class_<store::DiskTier, std::shared_ptr<store::DiskTier>>(m, "DiskCache",
                                                                "The disk tier's folder: scan, clear, gc, verify.")
      .def(py::init([](const std::optional<std::string>& root, std::uint64_t max_disk_bytes) {
             if (max_disk_bytes < 1) throw Error(ErrorKind::config, "max_disk_bytes must be >= 1, got 0");
             py::gil_scoped_release nogil;
             return store::open_disk_tier({.root = root.value_or(""), .max_disk_bytes = max_disk_bytes});
           }),
           py::arg("root"), py::arg("max_disk_bytes"))
      .def_property_readonly("root", [](const store::DiskTier& t) { return t.root().string(); })
      .def_property_readonly("enabled", &store::DiskTier::enabled)
      .def_property_readonly("disabled_reason", &store::DiskTier::disabled_reason)
      .def("scan",
           [](const store::DiskTier& t) {
             store::ScanReport r;
             {
               py::gil_scoped_release nogil;
               r = t.scan();
             }
             py::dict models;
             for (const auto& [name, usage] : r.models) {
               py::dict u;
               u["entries"] = usage.entries;
               u["bytes"] = usage.bytes;
               models[py::str(name)] = u;
             }
             py::dict d;
             d["models"] = models;
             d["entries"] = r.entries;
             d["bytes"] = r.bytes;
             d["stale_temp_files"] = r.stale_temp_files;
             return d;
           })
      .def(
          "gc",
          [](store::DiskTier& t, std::optional<std::uint64_t> max_bytes) {
            store::GcReport r;
            {
              py::gil_scoped_release nogil;
              r = t.gc(max_bytes);
            }
            py::dict d;
            d["entries_before"] = r.entries_before;
            d["bytes_before"] = r.bytes_before;
            d["evicted"] = r.evicted;
            d["entries_after"] = r.entries_after;
            d["bytes_after"] = r.bytes_after;
            d["stale_temp_files"] = r.stale_temp_files;
            d["stale_lock_files"] = r.stale_lock_files;
            return d;
          },
          py::arg("max_bytes"))
      .def(
          "clear",
          [](store::DiskTier& t, const std::optional<std::string>& model) {
            py::gil_scoped_release nogil;
            return t.clear(model);
          },
          py::arg("model"))
      .def(
          "verify",
          [](store::DiskTier& t, bool remove) {
            store::VerifyReport r;
            {
              py::gil_scoped_release nogil;
              r = t.verify(remove);
            }
            py::list corrupt;
            for (const auto& c : r.corrupt) {
              py::dict e;
              e["path"] = c.path;
              e["reason"] = c.reason;
              corrupt.append(e);
            }
            py::dict d;
            d["checked"] = r.checked;
            d["ok"] = r.ok;
            d["corrupt"] = corrupt;
            d["removed"] = r.removed;
            return d;
          },
          py::arg("delete"));
}

}  // namespace refenc::python
