#include "store/direct_writer.hpp"

#include <array>
#include <cstring>
#include <map>
#include <set>

#include "core/error.hpp"
#include "store/entry_archive.hpp"

namespace refenc::store {
namespace {

/// Appends `n` (at most 8) little-endian bytes of `v`.
void put_le(std::string& out, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// Appends `n` zero bytes (fields of a zip header that are always 0 here).
void put_zeros(std::string& out, std::size_t n) { out.append(n, '\0'); }

constexpr std::array<std::uint32_t, 256> kCrcTable = [] {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}();

/// The CRC-32 a zip record carries (zlib's).
std::uint32_t crc32(std::string_view data) {
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : data) c = kCrcTable[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

/// What torch::jit::Pickler writes for the values an entry holds (protocol 2, no type tags): every
/// string, global and storage memoized on first use and fetched from the memo after; every dict
/// memoized after its items (the writer's dicts are each referenced twice when pickled).
class Pickler {
 public:
  Pickler() { out_ += "\x80\x02"; }  // PROTO 2

  void integer(std::int64_t n) {
    if (n >= 0 && n <= 0xff) {
      out_ += 'K';  // BININT1
      put_le(out_, static_cast<std::uint64_t>(n), 1);
    } else if (n >= 0 && n <= 0xffff) {
      out_ += 'M';  // BININT2
      put_le(out_, static_cast<std::uint64_t>(n), 2);
    } else if (n >= INT32_MIN && n <= INT32_MAX) {
      out_ += 'J';  // BININT
      put_le(out_, static_cast<std::uint32_t>(static_cast<std::int32_t>(n)), 4);
    } else {
      out_ += "\x8a\x08";  // LONG1 of 8 bytes
      put_le(out_, static_cast<std::uint64_t>(n), 8);
    }
  }

  void string(const std::string& s) {
    if (fetch(strings_, s)) return;
    out_ += 'X';  // BINUNICODE
    put_le(out_, s.size(), 4);
    out_ += s;
    strings_[s] = put();
  }

  void global(const std::string& module, const std::string& name) {
    const std::string both = module + "\n" + name;
    if (fetch(globals_, both)) return;
    out_ += 'c';  // GLOBAL
    out_ += both;
    out_ += '\n';
    globals_[both] = put();
  }

  /// torch._utils._rebuild_tensor_v2(storage, 0, size, stride, False, OrderedDict()) of a tensor in
  /// a storage of its own, record data/<storages so far>, with at::empty's strides.
  void tensor(const HostTensor& t) {
    global("torch._utils", "_rebuild_tensor_v2");
    out_ += "((";  // MARK args, MARK the persistent id
    string("storage");
    global("torch", std::string(storage_class(t.dtype())));
    string(std::to_string(storages_++));
    string("cpu");
    integer(t.numel());
    out_ += "tQ";  // TUPLE, BINPERSID
    put();
    integer(0);
    out_ += '(';
    for (std::int64_t s : t.shape()) integer(s);
    out_ += "t(";
    std::vector<std::int64_t> stride(t.shape().size());
    std::int64_t step = 1;
    for (std::size_t d = stride.size(); d-- > 0;) {
      stride[d] = step;
      step *= std::max<std::int64_t>(t.shape()[d], 1);
    }
    for (std::int64_t s : stride) integer(s);
    out_ += "t\x89";  // TUPLE, NEWFALSE (requires_grad)
    global("collections", "OrderedDict");
    out_ += ")RtR";   // EMPTY_TUPLE, REDUCE (the backward hooks), TUPLE, REDUCE
  }

  void none() { out_ += 'N'; }
  void boolean(bool b) { out_ += b ? '\x88' : '\x89'; }  // NEWTRUE, NEWFALSE
  void begin_list() { out_ += "]("; }  // EMPTY_LIST, MARK
  void end_list() {
    out_ += 'e';  // APPENDS
    put();
  }
  void begin_dict() { out_ += "}("; }  // EMPTY_DICT, MARK
  void end_dict() {
    out_ += 'u';  // SETITEMS
    put();
  }

  std::string finish() && {
    out_ += '.';  // STOP
    return std::move(out_);
  }

 private:
  std::uint32_t put() {
    const std::uint32_t id = memo_++;
    if (id <= 0xff) {
      out_ += 'q';  // BINPUT
      put_le(out_, id, 1);
    } else {
      out_ += 'r';  // LONG_BINPUT
      put_le(out_, id, 4);
    }
    return id;
  }

  bool fetch(const std::map<std::string, std::uint32_t, std::less<>>& memo, const std::string& key) {
    const auto it = memo.find(key);
    if (it == memo.end()) return false;
    if (it->second <= 0xff) {
      out_ += 'h';  // BINGET
      put_le(out_, it->second, 1);
    } else {
      out_ += 'j';  // LONG_BINGET
      put_le(out_, it->second, 4);
    }
    return true;
  }

  std::string out_;
  std::uint32_t memo_ = 0;
  std::size_t storages_ = 0;
  std::map<std::string, std::uint32_t, std::less<>> strings_, globals_;
};

/// PyTorchStreamWriter's alignment of record data (caffe2::serialize::kFieldAlignment).
constexpr std::uint64_t kAlignment = 64;
/// LibTorch's writer switches to zip64 fields for a size or an offset from here on; this one stops.
constexpr std::uint64_t kZip32Limit = 0xffffffffu;

}  // namespace

std::vector<char> pack_archive(std::span<const ArchiveRecord> records) {
  std::vector<ArchiveRecord> all(records.begin(), records.end());
  std::set<std::string_view> names;
  for (const ArchiveRecord& r : all)
    if (!names.insert(r.name).second) throw Error(ErrorKind::config, "archive record '" + r.name + "' given twice");
  // PyTorchStreamWriter::writeEndOfFile: the file format version LibTorch writes by default.
  static const std::string kVersion = "3\n";
  if (!names.count("version") && !names.count(".data/version")) all.push_back({"version", kVersion});

  struct Written {
    std::string name;
    std::uint32_t crc;
    std::uint64_t size, local;
    std::uint16_t flags;
  };
  std::vector<Written> written;
  std::string out;
  std::size_t total = 1024;
  for (const ArchiveRecord& r : all) total += r.bytes.size() + r.name.size() + 2 * kAlignment + 100;
  out.reserve(total);
  for (const ArchiveRecord& r : all) {
    const std::string name = "archive/" + r.name;
    const std::uint64_t local = out.size();
    if (local >= kZip32Limit || r.bytes.size() >= kZip32Limit)
      throw Error(ErrorKind::io, "archive past 4 GiB (record '" + r.name + "'), which entries do not use");
    // The local header, its name and an "FB" extra field of 'Z's that puts the data on a 64-byte line.
    const std::uint64_t start = local + 30 + name.size() + 4;
    const std::uint64_t padding = (kAlignment - start % kAlignment) % kAlignment;
    // Flags: UTF-8 name, and (miniz writes one only after data) sizes in a data descriptor.
    const std::uint16_t flags = r.bytes.empty() ? 0x0800 : 0x0808;
    out += "PK\x03\x04";
    put_le(out, 0, 2);  // version needed
    put_le(out, flags, 2);
    put_zeros(out, 2 + 2 + 2 + 4 + 4 + 4);  // stored, no time, no date, crc and sizes: in the descriptor
    put_le(out, name.size(), 2);
    put_le(out, padding + 4, 2);
    out += name;
    out += "FB";
    put_le(out, padding, 2);
    out.append(padding, 'Z');
    out += r.bytes;
    const std::uint32_t crc = crc32(r.bytes);
    if (!r.bytes.empty()) {
      out += "PK\x07\x08";  // the data descriptor
      put_le(out, crc, 4);
      put_le(out, r.bytes.size(), 4);
      put_le(out, r.bytes.size(), 4);
    }
    written.push_back({name, crc, r.bytes.size(), local, flags});
  }
  const std::uint64_t directory = out.size();
  for (const Written& w : written) {
    out += "PK\x01\x02";
    put_le(out, 0, 2);       // version made by
    put_le(out, 0, 2);       // version needed
    put_le(out, w.flags, 2);
    put_zeros(out, 2 + 2 + 2);  // stored, no time, no date
    put_le(out, w.crc, 4);
    put_le(out, w.size, 4);
    put_le(out, w.size, 4);
    put_le(out, w.name.size(), 2);
    put_zeros(out, 2 + 2 + 2 + 2 + 4);  // extra, comment, disk, internal and external attributes
    put_le(out, w.local, 4);
    out += w.name;
  }
  const std::uint64_t directory_size = out.size() - directory;
  const std::uint64_t end64 = out.size();
  if (end64 >= kZip32Limit) throw Error(ErrorKind::io, "archive past 4 GiB, which entries do not use");
  out += "PK\x06\x06";  // the zip64 end of central directory record
  put_le(out, 44, 8);
  put_le(out, 0x031e, 2);  // made by
  put_le(out, 0x002d, 2);  // version needed: 4.5
  put_zeros(out, 4 + 4);
  put_le(out, written.size(), 8);
  put_le(out, written.size(), 8);
  put_le(out, directory_size, 8);
  put_le(out, directory, 8);
  out += "PK\x06\x07";  // its locator
  put_le(out, 0, 4);
  put_le(out, end64, 8);
  put_le(out, 1, 4);
  out += "PK\x05\x06";  // the end of central directory record
  put_zeros(out, 2 + 2);
  const std::uint64_t count = std::min<std::uint64_t>(written.size(), 0xffff);
  put_le(out, count, 2);
  put_le(out, count, 2);
  put_le(out, directory_size, 4);
  put_le(out, directory, 4);
  put_le(out, 0, 2);
  return std::vector<char>(out.begin(), out.end());
}

std::vector<char> write_entry_archive(std::int64_t format, const std::string& key_text, const Artifact& artifact,
                                      const std::string& checksum) {
  Pickler p;
  p.begin_dict();
  p.string("format");
  p.integer(format);
  p.string("key");
  p.string(key_text);
  p.string("tensors");
  p.begin_dict();
  for (const auto& [name, t] : artifact.tensors) {
    p.string(name);
    p.tensor(t);
  }
  p.end_dict();
  p.string("meta");
  p.begin_dict();
  for (const auto& [k, v] : artifact.meta) {
    p.string(k);
    p.string(v);
  }
  p.end_dict();
  p.string("checksum");
  p.string(checksum);
  p.end_dict();
  const std::string pickle = std::move(p).finish();

  std::vector<ArchiveRecord> records;
  records.reserve(artifact.tensors.size() + 1);
  for (const auto& [name, t] : artifact.tensors)
    records.push_back({"data/" + std::to_string(records.size()),
                       std::string_view(reinterpret_cast<const char*>(t.raw()), t.nbytes())});
  records.push_back({"data.pkl", pickle});
  return pack_archive(records);
}

namespace {

void pickle_value(Pickler& p, const TorchValue& v, std::vector<const HostTensor*>& tensors) {
  struct Visit {
    Pickler& p;
    std::vector<const HostTensor*>& tensors;
    void operator()(std::monostate) const { p.none(); }
    void operator()(bool b) const { p.boolean(b); }
    void operator()(std::int64_t n) const { p.integer(n); }
    void operator()(const std::string& s) const { p.string(s); }
    void operator()(const HostTensor& t) const {
      p.tensor(t);
      tensors.push_back(&t);
    }
    void operator()(const TorchValue::List& items) const {
      p.begin_list();
      for (const TorchValue& item : items) pickle_value(p, item, tensors);
      p.end_list();
    }
    void operator()(const TorchValue::Dict& items) const {
      p.begin_dict();
      for (const auto& [k, item] : items) {
        p.string(k);
        pickle_value(p, item, tensors);
      }
      p.end_dict();
    }
  };
  std::visit(Visit{p, tensors}, v.value);
}

}  // namespace

std::vector<char> write_torch_archive(const TorchValue& value) {
  Pickler p;
  std::vector<const HostTensor*> tensors;
  pickle_value(p, value, tensors);
  const std::string pickle = std::move(p).finish();
  std::vector<ArchiveRecord> records;
  records.reserve(tensors.size() + 1);
  for (const HostTensor* t : tensors)
    records.push_back({"data/" + std::to_string(records.size()),
                       std::string_view(reinterpret_cast<const char*>(t->raw()), t->nbytes())});
  records.push_back({"data.pkl", pickle});
  return pack_archive(records);
}

}  // namespace refenc::store
