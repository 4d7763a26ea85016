#include "store/entry_format.hpp"

#include <ATen/ops/empty.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cstring>

#include "core/sha256.hpp"

namespace refenc::store {
namespace {

c10::ScalarType scalar_type(DType d) {
  switch (d) {
    case DType::uint8: return c10::ScalarType::Byte;
    case DType::int16: return c10::ScalarType::Short;
    case DType::int32: return c10::ScalarType::Int;
    case DType::int64: return c10::ScalarType::Long;
    case DType::float32: return c10::ScalarType::Float;
  }
  return c10::ScalarType::Float;
}

DType dtype_of_scalar(c10::ScalarType s, const std::string& name) {
  switch (s) {
    case c10::ScalarType::Byte: return DType::uint8;
    case c10::ScalarType::Short: return DType::int16;
    case c10::ScalarType::Int: return DType::int32;
    case c10::ScalarType::Long: return DType::int64;
    case c10::ScalarType::Float: return DType::float32;
    default: throw EntryError("tensor '" + name + "' has unsupported dtype " + std::string(c10::toString(s)));
  }
}

c10::IValue field(const c10::Dict<c10::IValue, c10::IValue>& d, const char* name) {
  auto it = d.find(c10::IValue(std::string(name)));
  if (it == d.end()) throw EntryError(std::string("entry has no '") + name + "' field");
  return it->value();
}

void update_sized(Sha256& h, std::string_view tag, std::string_view text) {
  h.update(tag);
  h.update(std::to_string(text.size()));
  h.update(std::string_view("\0", 1));
  h.update(text);
}

}  // namespace

std::string artifact_checksum(const Artifact& a) {
  Sha256 h;
  for (const auto& [name, t] : a.tensors) {
    update_sized(h, "t", name);
    update_sized(h, "d", to_string(t.dtype()));
    std::string shape;
    for (std::int64_t s : t.shape()) shape += std::to_string(s) + ",";
    update_sized(h, "s", shape);
    h.update(std::to_string(t.nbytes()));
    h.update(std::string_view("\0", 1));
    h.update(std::span<const std::byte>(t.raw(), t.nbytes()));
  }
  for (const auto& [k, v] : a.meta) {
    update_sized(h, "k", k);
    update_sized(h, "v", v);
  }
  return h.hex_digest();
}

std::vector<char> encode_entry(const std::string& key_text, const Artifact& artifact, int format) {
  c10::Dict<std::string, at::Tensor> tensors;
  for (const auto& [name, t] : artifact.tensors) {
    at::Tensor x = at::empty(t.shape(), at::TensorOptions().dtype(scalar_type(t.dtype())));
    if (t.nbytes()) std::memcpy(x.data_ptr(), t.raw(), t.nbytes());
    tensors.insert(name, x);
  }
  c10::Dict<std::string, std::string> meta;
  for (const auto& [k, v] : artifact.meta) meta.insert(k, v);

  c10::impl::GenericDict entry(c10::StringType::get(), c10::AnyType::get());
  entry.insert(std::string("format"), static_cast<std::int64_t>(format));
  entry.insert(std::string("key"), key_text);
  entry.insert(std::string("tensors"), tensors);
  entry.insert(std::string("meta"), meta);
  entry.insert(std::string("checksum"), artifact_checksum(artifact));

  // What torch::pickle_save does, without the type tags (torch.jit._pickle.restore_type_tag) that
  // Python's weights_only loader refuses.
  std::vector<char> pickle_bytes;
  torch::jit::Pickler pickler([&](const char* buf, size_t n) { pickle_bytes.insert(pickle_bytes.end(), buf, buf + n); },
                              nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(entry);
  pickler.stop();

  std::vector<char> out;
  out.reserve(pickle_bytes.size() + artifact.byte_size() + 1024);
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* buf, size_t n) -> size_t {
    const char* p = static_cast<const char*>(buf);
    out.insert(out.end(), p, p + n);
    return n;
  });
  std::size_t i = 0;
  for (const at::Tensor& t : pickler.tensorData()) {
    torch::jit::WriteableTensorData w = torch::jit::getWriteableTensorData(t);
    writer.writeRecord("data/" + std::to_string(i++), w.data(), w.sizeInBytes());
  }
  writer.writeRecord("data.pkl", pickle_bytes.data(), pickle_bytes.size());
  writer.writeEndOfFile();
  return out;
}

Artifact decode_entry(const std::vector<char>& bytes, const std::string& expected_key, std::string* stored_key) {
  if (bytes.size() < 22 || std::memcmp(bytes.data(), "PK\x03\x04", 4) != 0)
    throw EntryError(bytes.empty() ? "empty file" : "not a torch archive");
  c10::IValue v;
  try {
    v = torch::jit::pickle_load(bytes);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw EntryError("unreadable archive: " + what.substr(0, what.find('\n')));
  }
  if (!v.isGenericDict()) throw EntryError("entry is not a dict");
  auto d = v.toGenericDict();

  c10::IValue format = field(d, "format");
  if (!format.isInt()) throw EntryError("format is not an integer");
  if (format.toInt() != kEntryFormat)
    throw EntryError("format version " + std::to_string(format.toInt()) + ", expected " + std::to_string(kEntryFormat));
  c10::IValue key = field(d, "key");
  if (!key.isString()) throw EntryError("key is not a string");
  if (stored_key) *stored_key = key.toStringRef();
  if (!expected_key.empty() && key.toStringRef() != expected_key) throw EntryError("entry holds another key");

  Artifact a;
  c10::IValue tensors = field(d, "tensors");
  if (!tensors.isGenericDict()) throw EntryError("tensors is not a dict");
  for (const auto& item : tensors.toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor()) throw EntryError("tensors holds a non-tensor");
    const std::string& name = item.key().toStringRef();
    at::Tensor t = item.value().toTensor();
    if (!t.device().is_cpu()) throw EntryError("tensor '" + name + "' is not on the CPU");
    t = t.contiguous();
    std::vector<std::int64_t> shape(t.sizes().begin(), t.sizes().end());
    HostTensor h(dtype_of_scalar(t.scalar_type(), name), std::move(shape));
    if (h.nbytes() != t.nbytes()) throw EntryError("tensor '" + name + "' has an inconsistent size");
    if (h.nbytes()) std::memcpy(h.raw(), t.data_ptr(), h.nbytes());
    a.tensors.emplace(name, std::move(h));
  }
  c10::IValue meta = field(d, "meta");
  if (!meta.isGenericDict()) throw EntryError("meta is not a dict");
  for (const auto& item : meta.toGenericDict()) {
    if (!item.key().isString() || !item.value().isString()) throw EntryError("meta holds a non-string");
    a.meta.emplace(item.key().toStringRef(), item.value().toStringRef());
  }
  c10::IValue checksum = field(d, "checksum");
  if (!checksum.isString()) throw EntryError("checksum is not a string");
  if (checksum.toStringRef() != artifact_checksum(a)) throw EntryError("checksum mismatch");
  return a;
}

}  // namespace refenc::store
