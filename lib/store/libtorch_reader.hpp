// LibTorch's reader of torch archives: the fallback for entries that hold more than refenc writes.
//
// The direct reader reads every entry refenc's writer makes; an archive written by anything else
// (Python's torch.save of an entry dict, an older writer) may use pickle opcodes, memo patterns or
// tensor layouts it does not know, and this reader, LibTorch's unpickler, reads it instead. It is
// its own library, refenc_store_libtorch (an object library: linking it installs it, while the
// program starts, as read_archive's foreign reader), so that lib/store and the programs that do not
// ask for it compile no LibTorch unit. The CLI, the Python package and the store's tests link it.
//
//   PickledValue v = store::read_archive_with_libtorch(bytes);   // LibTorch's reader, nothing else
#pragma once

#include <vector>

#include "store/entry_archive.hpp"

namespace refenc::store {

/// read_archive through LibTorch's reader only: the checks of torch_archive_records, then LibTorch's
/// zip reader and unpickler. Throws EntryError ("unreadable archive: <LibTorch's reason>").
PickledValue read_archive_with_libtorch(const std::vector<char>& bytes);

}  // namespace refenc::store
