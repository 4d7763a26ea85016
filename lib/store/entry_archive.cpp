#include "store/entry_archive.hpp"

#include <atomic>

#include "store/direct_reader.hpp"
#include "store/entry_format.hpp"

namespace refenc::store {
namespace {

/// caffe2::serialize's kMinSupportedFileFormatVersion and kMaxSupportedFileFormatVersion in
/// LibTorch 1.13 (libtorch_reader.cpp checks that they still are).
constexpr std::uint64_t kMinArchiveVersion = 1;
constexpr std::uint64_t kMaxArchiveVersion = 10;

constinit std::atomic<ForeignArchiveReader> foreign_reader{nullptr};

struct StorageClass {
  DType dtype;
  std::string_view name;
};
constexpr StorageClass kStorageClasses[] = {{DType::uint8, "ByteStorage"},
                                            {DType::int16, "ShortStorage"},
                                            {DType::int32, "IntStorage"},
                                            {DType::int64, "LongStorage"},
                                            {DType::float32, "FloatStorage"}};

}  // namespace

std::string_view storage_class(DType dtype) noexcept {
  for (const StorageClass& c : kStorageClasses)
    if (c.dtype == dtype) return c.name;
  return "FloatStorage";
}

std::optional<DType> dtype_of_storage_class(std::string_view name) noexcept {
  for (const StorageClass& c : kStorageClasses)
    if (c.name == name) return c.dtype;
  return std::nullopt;
}

void set_foreign_archive_reader(ForeignArchiveReader reader) noexcept { foreign_reader.store(reader); }

std::vector<ZipRecord> torch_archive_records(std::span<const char> bytes) {
  return check_zip_records(bytes, kMinArchiveVersion, kMaxArchiveVersion);
}

PickledValue read_archive(const std::vector<char>& bytes) {
  const std::vector<ZipRecord> records = torch_archive_records(bytes);
  if (std::optional<PickledValue> direct = read_archive_directly(bytes, records)) return std::move(*direct);
  if (const ForeignArchiveReader reader = foreign_reader.load()) return reader(bytes);
  throw EntryError("unreadable archive: it holds more than refenc writes, and this program links no LibTorch reader");
}

}  // namespace refenc::store
