// Direct writer: an entry's torch archive written without LibTorch, byte for byte as LibTorch writes it.
//
// An entry is the zip that LibTorch's PyTorchStreamWriter makes (records under "archive/", each
// aligned to 64 bytes by an "FB" extra field and followed by a data descriptor, a zip64 end record,
// then a "version" record of "3") around the protocol-2 pickle that its Pickler makes of the entry
// dict without type tags: what Python's `torch.load(path, weights_only=True)` opens. This writer knows
// that one layout and nothing else, so lib/store compiles no LibTorch unit; tests/store's
// direct_writer_test compares its bytes with LibTorch's for every dtype, shape and size class.
//
//   std::vector<char> zip = store::write_entry_archive(1, key_text, artifact, checksum);
//   std::vector<char> raw = store::pack_archive(records);   // any records, as PyTorchStreamWriter packs them
//   std::vector<char> pt = store::write_torch_archive(TorchValue::dict({{"items", TorchValue::list({...})}}));
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "store/artifact.hpp"

namespace refenc::store {

/// One named record of an archive ("data.pkl", "data/0"); `bytes` must outlive the call it is passed to.
struct ArchiveRecord {
  std::string name;
  std::string_view bytes;
};

/// A torch zip archive (the container torch.save writes) holding `records`, in order, then the
/// "version" record unless one of them is "version" or ".data/version". Throws Error(config) for a
/// name given twice and Error(io) past 4 GiB (where LibTorch would switch to zip64 fields).
std::vector<char> pack_archive(std::span<const ArchiveRecord> records);

/// The entry dict {format, key, tensors, meta, checksum} as a torch archive, pickled without
/// TorchScript type tags so that Python's weights_only loader opens it.
std::vector<char> write_entry_archive(std::int64_t format, const std::string& key_text, const Artifact& artifact,
                                      const std::string& checksum);

/// A value that `torch.save` writes and `torch.load(weights_only=True)` opens: None, a bool, an int, a
/// string, a tensor, a list or a dict with string keys (kept in the order given).
struct TorchValue {
  using List = std::vector<TorchValue>;
  using Dict = std::vector<std::pair<std::string, TorchValue>>;
  std::variant<std::monostate, bool, std::int64_t, std::string, HostTensor, List, Dict> value;

  static TorchValue none() { return {}; }
  static TorchValue list(List items) { return {std::move(items)}; }
  static TorchValue dict(Dict items) { return {std::move(items)}; }
};

/// `value` as a torch archive (the form torch.save writes), each tensor in a storage of its own.
std::vector<char> write_torch_archive(const TorchValue& value);

}  // namespace refenc::store
