// Direct reader: an entry's torch archive read without LibTorch, when it holds only what refenc writes.
//
// A hit from the disk or the shared tier decodes an entry on the request path. LibTorch's zip reader
// and unpickler touch a lot of code for a few kilobytes, and the request that follows an idle gap pays
// for every cold cache line of it (measured: 0.2 ms, against 13 us back to back). This reader knows
// the few pickle opcodes and globals that write_entry_archive produces (dicts, strings, integers,
// CPU tensors of refenc's dtypes in storages of their own) and nothing else: an archive that uses
// anything more, or anything unusual (a duplicate name or key, a view, a storage of another size than
// its record), gets nullopt and LibTorch's reader decides, as before. So whatever this reader
// returns, LibTorch's reader would have returned too (fuzz/fuzz_disk_entry.cpp checks it).
//
//   std::vector<ZipRecord> records = store::check_zip_records(bytes, 1, 10);
//   if (std::optional<PickledValue> v = store::read_archive_directly(bytes, records)) use(*v);
#pragma once

#include <optional>
#include <span>

#include "store/entry_archive.hpp"

namespace refenc::store {

/// What the pickle of the torch archive `bytes` holds, as read_archive gives it; nullopt when the
/// archive uses anything beyond what refenc's writer does. `records` are check_zip_records' records
/// of `bytes`. Allocates in proportion to the size of `bytes` (tensor data at most once over).
std::optional<PickledValue> read_archive_directly(std::span<const char> bytes, std::span<const ZipRecord> records);

}  // namespace refenc::store
