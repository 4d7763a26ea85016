// The torch archive inside an entry, behind an interface without LibTorch (internal to lib/store).
//
// Reading gives a plain tree of what the archive's pickle holds (dicts, strings, integers, CPU
// tensors already copied into HostTensors), so every check that makes a file an entry or not
// (entry_format.cpp) is ordinary C++ that any compiler builds. The direct reader (direct_reader.hpp)
// reads what refenc writes (direct_writer.hpp); an archive that holds anything more goes to the
// foreign reader, LibTorch's unpickler (libtorch_reader.hpp), in builds that link it. lib/store
// itself compiles no LibTorch unit.
//
//   store::PickledValue root = store::read_archive(zip);   // throws EntryError when unreadable
//   std::vector<ZipRecord> records = store::torch_archive_records(zip);
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/artifact.hpp"

namespace refenc::store {

/// One value read from an archive's pickle. Only what an entry can hold is converted; anything else
/// (lists, floats, None, dicts nested deeper than an entry's) is `other`.
struct PickledValue {
  enum class Kind { other, integer, string, tensor, dict };
  Kind kind = Kind::other;
  std::int64_t integer = 0;          ///< kind integer.
  std::string text;                  ///< kind string.
  std::optional<HostTensor> tensor;  ///< kind tensor, when usable: dense, on the CPU, in a refenc dtype.
  std::string tensor_problem;        ///< kind tensor, when not usable: why ("has unsupported dtype Double").
  std::vector<PickledValue> keys;    ///< kind dict: keys, in stored order.
  std::vector<PickledValue> values;  ///< kind dict: values, parallel to keys.

  friend bool operator==(const PickledValue&, const PickledValue&) = default;
};

/// What the pickle of the torch archive `bytes` holds. Throws EntryError when the checks below fail
/// or no reader can read it ("unreadable archive: ..."). A tensor is copied only when it is dense,
/// on the CPU, in a refenc dtype and inside the record it was read from. Whatever `bytes` hold,
/// reading allocates in proportion to their size, not to sizes they declare. The direct reader
/// (direct_reader.hpp) reads what refenc writes; the foreign reader, where one is linked, reads
/// anything else; without one, such an archive is unreadable.
PickledValue read_archive(const std::vector<char>& bytes);

/// A reader of any torch archive: called with bytes that torch_archive_records accepted, it returns
/// what read_archive returns or throws EntryError.
using ForeignArchiveReader = PickledValue (*)(const std::vector<char>& bytes);

/// Makes `reader` read_archive's reader of archives beyond what refenc writes. libtorch_reader.cpp
/// calls it while the program starts, in the programs that link it (refenc_store_libtorch).
void set_foreign_archive_reader(ForeignArchiveReader reader) noexcept;

/// The storage class torch pickles a tensor of `dtype` with ("FloatStorage"), and back (nullopt for
/// any other name): the one table the direct writer and the direct reader share.
std::string_view storage_class(DType dtype) noexcept;
std::optional<DType> dtype_of_storage_class(std::string_view name) noexcept;

/// One record of a torch archive's central directory: its name, where its local header begins, and
/// its size (stored uncompressed).
struct ZipRecord {
  std::string_view name;
  std::uint64_t local = 0;
  std::uint64_t size = 0;
};

/// The data of `record` in `bytes`, where its local header says it begins; nullopt when that header
/// is not one or the data does not lie inside `bytes`.
std::optional<std::span<const char>> record_data(std::span<const char> bytes, const ZipRecord& record);

/// The unsigned little-endian integer of `n` bytes at `at` in `bytes` (the caller checks the bounds).
std::uint64_t read_le(std::span<const char> bytes, std::size_t at, int n);

/// check_zip_records with the versions LibTorch's reader supports: the checks read_archive makes first.
std::vector<ZipRecord> torch_archive_records(std::span<const char> bytes);

/// Throws EntryError unless every record that LibTorch's zip reader will find in `bytes` is stored
/// uncompressed, with consistent sizes, inside the file (reading any record then allocates no more
/// than the file's size; LibTorch allocates a record's declared size before reading it), and the
/// archive has what LibTorch's reader checks when it opens one: a folder in the first record's name
/// and a version record holding a version in [min_version, max_version]. Returns the records the
/// central directory lists, in its order (names point into `bytes`).
std::vector<ZipRecord> check_zip_records(std::span<const char> bytes, std::uint64_t min_version,
                                         std::uint64_t max_version);

/// Throws EntryError unless `pickle` is a sequence of pickle opcodes ending with STOP, whose length
/// operands stay inside it and whose memo indices are defined in sequence. (LibTorch's unpickler
/// allocates a declared string length, and reserves memo slots up to a declared index, first.)
void check_pickle(std::span<const char> pickle);

}  // namespace refenc::store
