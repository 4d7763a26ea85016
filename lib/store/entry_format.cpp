#include "store/entry_format.hpp"

#include <cstring>

#include "core/sha256.hpp"
#include "store/direct_writer.hpp"
#include "store/entry_archive.hpp"

namespace refenc::store {
namespace {

using Kind = PickledValue::Kind;

/// The value of `d`'s string key `name`.
PickledValue& field(PickledValue& d, const char* name) {
  for (std::size_t i = 0; i < d.keys.size(); ++i)
    if (d.keys[i].kind == Kind::string && d.keys[i].text == name) return d.values[i];
  throw EntryError(std::string("entry has no '") + name + "' field");
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
  return write_entry_archive(format, key_text, artifact, artifact_checksum(artifact));
}

Artifact decode_entry(const std::vector<char>& bytes, const std::string& expected_key, std::string* stored_key) {
  if (bytes.size() < 22 || std::memcmp(bytes.data(), "PK\x03\x04", 4) != 0)
    throw EntryError(bytes.empty() ? "empty file" : "not a torch archive");
  PickledValue d = read_archive(bytes);
  if (d.kind != Kind::dict) throw EntryError("entry is not a dict");

  const PickledValue& format = field(d, "format");
  if (format.kind != Kind::integer) throw EntryError("format is not an integer");
  if (format.integer != kEntryFormat)
    throw EntryError("format version " + std::to_string(format.integer) + ", expected " + std::to_string(kEntryFormat));
  const PickledValue& key = field(d, "key");
  if (key.kind != Kind::string) throw EntryError("key is not a string");
  if (stored_key) *stored_key = key.text;
  if (!expected_key.empty() && key.text != expected_key) throw EntryError("entry holds another key");

  Artifact a;
  PickledValue& tensors = field(d, "tensors");
  if (tensors.kind != Kind::dict) throw EntryError("tensors is not a dict");
  for (std::size_t i = 0; i < tensors.keys.size(); ++i) {
    const PickledValue& name = tensors.keys[i];
    PickledValue& t = tensors.values[i];
    if (name.kind != Kind::string || t.kind != Kind::tensor) throw EntryError("tensors holds a non-tensor");
    if (!t.tensor) throw EntryError("tensor '" + name.text + "' " + t.tensor_problem);
    a.tensors.emplace(name.text, std::move(*t.tensor));  // a pickled dict's keys are distinct
  }
  PickledValue& meta = field(d, "meta");
  if (meta.kind != Kind::dict) throw EntryError("meta is not a dict");
  for (std::size_t i = 0; i < meta.keys.size(); ++i) {
    if (meta.keys[i].kind != Kind::string || meta.values[i].kind != Kind::string)
      throw EntryError("meta holds a non-string");
    a.meta.emplace(std::move(meta.keys[i].text), std::move(meta.values[i].text));
  }
  const PickledValue& checksum = field(d, "checksum");
  if (checksum.kind != Kind::string) throw EntryError("checksum is not a string");
  if (checksum.text != artifact_checksum(a)) throw EntryError("checksum mismatch");
  return a;
}

}  // namespace refenc::store
