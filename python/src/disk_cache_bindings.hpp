// bind_disk_cache: the disk tier's maintenance from Python (refenc.DiskCache), as `refenc cache`
// offers it on the command line: stats (scan), clear [model], gc [max_bytes], verify [delete].
//
// Every call does its file work with the GIL released and returns plain dicts.
//
//   PYBIND11_MODULE(_core, m) { bind_disk_cache(m); }
//   # Python: _core.DiskCache("/var/cache/refenc", 2 << 30).gc(1 << 30)["evicted"]
#pragma once

#include <pybind11/pybind11.h>

namespace refenc::python {

/// Adds the class DiskCache(root, max_disk_bytes) to `m`.
void bind_disk_cache(pybind11::module_& m);

}  // namespace refenc::python
