#include "store/libtorch_reader.hpp"

#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/versions.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <new>

#include "store/entry_format.hpp"

namespace refenc::store {
namespace {

// entry_archive.cpp's archive checks use LibTorch 1.13's supported versions without its headers.
static_assert(caffe2::serialize::kMinSupportedFileFormatVersion == 1 &&
              caffe2::serialize::kMaxSupportedFileFormatVersion == 10);

std::optional<DType> dtype_of_scalar(c10::ScalarType s) {
  switch (s) {
    case c10::ScalarType::Byte: return DType::uint8;
    case c10::ScalarType::Short: return DType::int16;
    case c10::ScalarType::Int: return DType::int32;
    case c10::ScalarType::Long: return DType::int64;
    case c10::ScalarType::Float: return DType::float32;
    default: return std::nullopt;
  }
}

/// An entry is a dict of dicts of tensors: anything nested deeper is not converted.
constexpr int kMaxDepth = 4;

std::string first_line(const std::exception& e) {
  std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

/// Size of each record read from the archive, by the address of its data: a pickle states a storage's
/// size on its own, and it may claim more than its record holds.
using RecordSizes = std::map<const void*, std::size_t>;

/// True when the contiguous tensor `t` lies inside the memory it was read into.
bool inside_its_record(const at::Tensor& t, const RecordSizes& records) {
  const c10::Storage& storage = t.storage();
  const auto it = records.find(storage.data());
  const std::uint64_t have = it != records.end() ? it->second : storage.nbytes();
  std::uint64_t n = t.element_size();
  for (std::int64_t s : t.sizes()) {
    if (s < 0) return false;
    if (s == 0) return true;
  }
  for (std::int64_t s : t.sizes()) {
    if (n > have / static_cast<std::uint64_t>(s)) return false;
    n *= static_cast<std::uint64_t>(s);
  }
  const std::int64_t offset = t.storage_offset();
  if (offset < 0 || static_cast<std::uint64_t>(offset) > have / t.element_size()) return false;
  return n <= have - static_cast<std::uint64_t>(offset) * t.element_size();
}

void convert_tensor(const at::Tensor& t, const RecordSizes& records, PickledValue& out) {
  if (t.layout() != c10::kStrided) {
    out.tensor_problem = "is not a dense tensor";
    return;
  }
  if (!t.device().is_cpu()) {
    out.tensor_problem = "is not on the CPU";
    return;
  }
  const std::optional<DType> dtype = dtype_of_scalar(t.scalar_type());
  if (!dtype) {
    out.tensor_problem = "has unsupported dtype " + std::string(c10::toString(t.scalar_type()));
    return;
  }
  if (!t.is_contiguous()) {
    out.tensor_problem = "is not contiguous";
    return;
  }
  if (!inside_its_record(t, records)) {
    out.tensor_problem = "claims more data than its record holds";
    return;
  }
  std::vector<std::int64_t> shape(t.sizes().begin(), t.sizes().end());
  HostTensor h;
  try {
    h = HostTensor(*dtype, std::move(shape));
  } catch (const Error&) {
    out.tensor_problem = "has an impossible shape";
    return;
  }
  if (h.nbytes() != t.nbytes()) {
    out.tensor_problem = "has an inconsistent size";
    return;
  }
  if (h.nbytes()) std::memcpy(h.raw(), t.data_ptr(), h.nbytes());
  out.tensor = std::move(h);
}

PickledValue convert(const c10::IValue& v, const RecordSizes& records, int depth) {
  PickledValue out;
  if (v.isInt()) {
    out.kind = PickledValue::Kind::integer;
    out.integer = v.toInt();
  } else if (v.isString()) {
    out.kind = PickledValue::Kind::string;
    out.text = v.toStringRef();
  } else if (v.isTensor()) {
    out.kind = PickledValue::Kind::tensor;
    convert_tensor(v.toTensor(), records, out);
  } else if (v.isGenericDict() && depth < kMaxDepth) {
    out.kind = PickledValue::Kind::dict;
    const auto d = v.toGenericDict();
    out.keys.reserve(d.size());
    out.values.reserve(d.size());
    for (const auto& item : d) {
      out.keys.push_back(convert(item.key(), records, depth + 1));
      out.values.push_back(convert(item.value(), records, depth + 1));
    }
  }
  return out;
}

PickledValue read_with_libtorch(const std::vector<char>& bytes) {
  try {
    // What torch::jit::pickle_load does, with the pickle checked before it is parsed and the size of
    // every tensor record kept.
    caffe2::serialize::PyTorchStreamReader reader(
        std::make_unique<caffe2::serialize::MemoryReadAdapter>(bytes.data(), bytes.size()));
    auto [pickle, pickle_size] = reader.getRecord("data.pkl");
    const char* pickle_data = static_cast<const char*>(pickle.get());
    check_pickle({pickle_data, pickle_size});
    std::size_t pos = 0;
    auto read = [&](char* buf, std::size_t n) -> std::size_t {
      n = std::min(n, pickle_size - pos);
      if (n) std::memcpy(buf, pickle_data + pos, n);
      pos += n;
      return n;
    };
    RecordSizes records;
    auto read_record = [&](const std::string& name) {
      auto [data, size] = reader.getRecord("data/" + name);
      records[data.get()] = size;
      return std::move(data);
    };
    torch::jit::Unpickler unpickler(read, nullptr, nullptr, read_record, c10::nullopt);
    unpickler.set_version(reader.version());
    return convert(unpickler.parse_ivalue(), records, 0);
  } catch (const EntryError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;  // memory pressure, not a bad file: the caller must not delete the entry for it
  } catch (const std::exception& e) {
    throw EntryError("unreadable archive: " + first_line(e));
  }
}

/// Installs this reader as read_archive's foreign reader while the program starts.
[[maybe_unused]] const bool installed = (set_foreign_archive_reader(&read_with_libtorch), true);

}  // namespace

PickledValue read_archive_with_libtorch(const std::vector<char>& bytes) {
  torch_archive_records(bytes);
  return read_with_libtorch(bytes);
}

}  // namespace refenc::store
