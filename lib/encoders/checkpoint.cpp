#include "encoders/checkpoint.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string_view>
#include <variant>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "store/entry_archive.hpp"

namespace refenc::encoders {

namespace {
namespace ckpt {  // named: unity builds compile this file with others

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw Error(ErrorKind::bad_input, path + ": " + reason);
}

/// A read-only private mapping of a whole file.
struct Mapping {
  const char* data = nullptr;
  std::size_t size = 0;
  ~Mapping() {
    if (data && size) munmap(const_cast<char*>(data), size);
  }
};

std::shared_ptr<const Mapping> map_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open checkpoint (") + std::strerror(errno) + ")");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, "not a regular file");
  }
  auto m = std::make_shared<Mapping>();
  m->size = static_cast<std::size_t>(st.st_size);
  if (m->size) {
    void* p = mmap(nullptr, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      fail(path, std::string("cannot map checkpoint (") + std::strerror(errno) + ")");
    }
    m->data = static_cast<const char*>(p);
  }
  ::close(fd);
  return m;
}

std::uint64_t le(const char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::int64_t element_size(at::ScalarType t) { return static_cast<std::int64_t>(c10::elementSize(t)); }

/// A tensor viewing `bytes` (copied when misaligned for its dtype).
at::Tensor view_bytes(const char* bytes, at::IntArrayRef shape, at::IntArrayRef strides, at::ScalarType dtype) {
  void* p = const_cast<char*>(bytes);
  at::Tensor t = at::from_blob(p, shape, strides, at::TensorOptions().dtype(dtype));
  if (reinterpret_cast<std::uintptr_t>(bytes) % static_cast<std::uintptr_t>(element_size(dtype)) != 0) return t.clone();
  return t;
}

// ---- safetensors: 8-byte header length, JSON header, raw little-endian data -------------------------

std::optional<at::ScalarType> safetensors_dtype(const std::string& name) {
  static const std::map<std::string, at::ScalarType> types = {
      {"F32", at::kFloat}, {"F16", at::kHalf},  {"BF16", at::kBFloat16}, {"F64", at::kDouble}, {"I64", at::kLong},
      {"I32", at::kInt},   {"I16", at::kShort}, {"I8", at::kChar},       {"U8", at::kByte},    {"BOOL", at::kBool}};
  auto it = types.find(name);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

WeightMap read_safetensors(const std::string& path, const Mapping& m) {
  if (m.size < 8) fail(path, "truncated safetensors file (" + std::to_string(m.size) + " bytes, no header)");
  const std::uint64_t header_len = le(m.data, 8);
  if (header_len > m.size - 8)
    fail(path, "truncated safetensors file (header of " + std::to_string(header_len) + " bytes, file of " +
                   std::to_string(m.size) + ")");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(std::string_view(m.data + 8, header_len));
  } catch (const std::exception& e) {
    fail(path, std::string("safetensors header is not JSON (") + e.what() + ")");
  }
  if (!header.is_object()) fail(path, "safetensors header is not a JSON object");
  const char* data = m.data + 8 + header_len;
  const std::uint64_t data_size = m.size - 8 - header_len;
  WeightMap out;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    auto bad = [&](const std::string& why) { fail(path, "tensor '" + name + "': " + why); };
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
      bad("header entry lacks dtype, shape or data_offsets");
    const auto dtype = entry["dtype"].is_string() ? safetensors_dtype(entry["dtype"].get<std::string>()) : std::nullopt;
    if (!dtype) bad("unsupported dtype " + entry["dtype"].dump());
    std::vector<std::int64_t> shape;
    std::uint64_t numel = 1;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_unsigned()) bad("shape " + entry["shape"].dump() + " is not a list of sizes");
      shape.push_back(d.get<std::int64_t>());
      numel *= d.get<std::uint64_t>();
      if (numel > data_size) bad("shape " + entry["shape"].dump() + " is larger than the file");
    }
    const auto& off = entry["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      bad("data_offsets is not [begin, end]");
    const std::uint64_t begin = off[0], end = off[1];
    if (begin > end || end > data_size)
      bad("data [" + std::to_string(begin) + ", " + std::to_string(end) + ") lies outside the file's " +
          std::to_string(data_size) + " data bytes (truncated?)");
    if (end - begin != numel * static_cast<std::uint64_t>(element_size(*dtype)))
      bad("holds " + std::to_string(end - begin) + " bytes, its dtype and shape need " +
          std::to_string(numel * element_size(*dtype)));
    out[name] = view_bytes(data + begin, shape, at::detail::defaultStrides(shape), *dtype);
  }
  return out;
}

// ---- torch pickle: the zip archive torch.save writes, its data.pkl read by a small unpickler ---------

/// A value of the pickle: only what a saved state dict holds.
struct PyValue;
using PyRef = std::shared_ptr<PyValue>;
struct PyValue {
  enum class Kind { none, boolean, integer, floating, string, tuple, list, dict, global, storage, tensor };
  Kind kind = Kind::none;
  std::int64_t integer = 0;
  double floating = 0;
  std::string text;                          // string; global "module.name"
  std::vector<PyRef> items;                  // tuple, list
  std::vector<std::pair<PyRef, PyRef>> dict; // dict, in order
  at::Tensor tensor;                         // storage (1-D, its dtype), tensor
};

PyRef make(PyValue::Kind k) {
  auto v = std::make_shared<PyValue>();
  v->kind = k;
  return v;
}

class StateDictUnpickler {
 public:
  StateDictUnpickler(std::string path, std::span<const char> pickle,
                     std::function<std::span<const char>(const std::string&)> record)
      : path_(std::move(path)), p_(pickle), record_(std::move(record)) {}

  PyRef parse() {
    while (true) {
      const unsigned char op = static_cast<unsigned char>(take(1)[0]);
      switch (op) {
        case 0x80: take(1); break;                   // PROTO
        case 0x95: take(8); break;                   // FRAME
        case '(': marks_.push_back(stack_.size()); break;  // MARK
        case '.': return pop();                      // STOP
        case 'N': push(make(PyValue::Kind::none)); break;
        case 0x88: case 0x89: {                      // NEWTRUE, NEWFALSE
          auto v = make(PyValue::Kind::boolean);
          v->integer = op == 0x88;
          push(v);
          break;
        }
        case 'K': push_int(static_cast<unsigned char>(take(1)[0])); break;       // BININT1
        case 'M': push_int(static_cast<std::int64_t>(le(take(2).data(), 2))); break;  // BININT2
        case 'J': push_int(static_cast<std::int32_t>(le(take(4).data(), 4))); break;  // BININT
        case 0x8a: {                                 // LONG1
          const int n = static_cast<unsigned char>(take(1)[0]);
          if (n > 8) fail_pickle("integer of " + std::to_string(n) + " bytes");
          std::span<const char> b = take(n);
          std::int64_t v = n ? static_cast<std::int64_t>(le(b.data(), n)) : 0;
          if (n && n < 8 && (static_cast<unsigned char>(b[n - 1]) & 0x80)) v -= std::int64_t{1} << (8 * n);
          push_int(v);
          break;
        }
        case 'G': {                                  // BINFLOAT (big-endian)
          std::span<const char> b = take(8);
          std::uint64_t bits = 0;
          for (char c : b) bits = (bits << 8) | static_cast<unsigned char>(c);
          auto v = make(PyValue::Kind::floating);
          std::memcpy(&v->floating, &bits, 8);
          push(v);
          break;
        }
        case 'X': push_string(take(le(take(4).data(), 4))); break;   // BINUNICODE
        case 0x8c: push_string(take(static_cast<unsigned char>(take(1)[0]))); break;  // SHORT_BINUNICODE
        case 0x8d: push_string(take(le(take(8).data(), 8))); break;  // BINUNICODE8
        case 'c': {                                  // GLOBAL module\nname\n
          std::string module = line(), name = line();
          push_global(module + "." + name);
          break;
        }
        case 0x93: {                                 // STACK_GLOBAL
          PyRef name = pop(), module = pop();
          push_global(module->text + "." + name->text);
          break;
        }
        case 'q': memo_[static_cast<unsigned char>(take(1)[0])] = top(); break;  // BINPUT
        case 'r': memo_[le(take(4).data(), 4)] = top(); break;                   // LONG_BINPUT
        case 0x94: memo_[memo_.size()] = top(); break;                           // MEMOIZE
        case 'h': push(get(static_cast<unsigned char>(take(1)[0]))); break;      // BINGET
        case 'j': push(get(le(take(4).data(), 4))); break;                       // LONG_BINGET
        case ')': push(make(PyValue::Kind::tuple)); break;                       // EMPTY_TUPLE
        case 0x85: case 0x86: case 0x87: {           // TUPLE1..3
          auto t = make(PyValue::Kind::tuple);
          const std::size_t n = op - 0x84u;
          if (stack_.size() < n) fail_pickle("stack underflow");
          t->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
          stack_.resize(stack_.size() - n);
          push(t);
          break;
        }
        case 't': {                                  // TUPLE
          auto t = make(PyValue::Kind::tuple);
          t->items = pop_mark();
          push(t);
          break;
        }
        case ']': push(make(PyValue::Kind::list)); break;                 // EMPTY_LIST
        case '}': push(make(PyValue::Kind::dict)); break;                 // EMPTY_DICT
        case 'a': { PyRef v = pop(); container(PyValue::Kind::list)->items.push_back(v); break; }  // APPEND
        case 'e': {                                  // APPENDS
          std::vector<PyRef> vs = pop_mark();
          auto& l = container(PyValue::Kind::list)->items;
          l.insert(l.end(), vs.begin(), vs.end());
          break;
        }
        case 's': {                                  // SETITEM
          PyRef v = pop(), k = pop();
          container(PyValue::Kind::dict)->dict.emplace_back(k, v);
          break;
        }
        case 'u': {                                  // SETITEMS
          std::vector<PyRef> kv = pop_mark();
          if (kv.size() % 2) fail_pickle("SETITEMS with an odd count");
          auto& d = container(PyValue::Kind::dict)->dict;
          for (std::size_t i = 0; i < kv.size(); i += 2) d.emplace_back(kv[i], kv[i + 1]);
          break;
        }
        case 'b': pop(); break;  // BUILD: an OrderedDict's state (state_dict()._metadata) is not needed
        case 'Q': push(persistent_load(pop())); break;  // BINPERSID
        case 'R': {                                  // REDUCE
          PyRef args = pop(), fn = pop();
          push(reduce(fn, args));
          break;
        }
        default: {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02x", op);
          fail_pickle(std::string("unsupported pickle opcode ") + hex);
        }
      }
    }
  }

 private:
  [[noreturn]] void fail_pickle(const std::string& why) { fail(path_, "not a state dict pickle: " + why); }

  std::span<const char> take(std::uint64_t n) {
    if (n > p_.size() - pos_) fail_pickle("truncated data.pkl");
    std::span<const char> s = p_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::string line() {
    std::string s;
    for (char c; (c = take(1)[0]) != '\n';) s += c;
    return s;
  }
  void push(PyRef v) { stack_.push_back(std::move(v)); }
  void push_int(std::int64_t i) {
    auto v = make(PyValue::Kind::integer);
    v->integer = i;
    push(v);
  }
  void push_string(std::span<const char> s) {
    auto v = make(PyValue::Kind::string);
    v->text.assign(s.data(), s.size());
    push(v);
  }
  void push_global(std::string name) {
    auto v = make(PyValue::Kind::global);
    v->text = std::move(name);
    push(v);
  }
  PyRef top() {
    if (stack_.empty()) fail_pickle("stack underflow");
    return stack_.back();
  }
  PyRef pop() {
    PyRef v = top();
    stack_.pop_back();
    return v;
  }
  PyRef get(std::uint64_t i) {
    auto it = memo_.find(i);
    if (it == memo_.end()) fail_pickle("memo index " + std::to_string(i) + " not defined");
    return it->second;
  }
  std::vector<PyRef> pop_mark() {
    if (marks_.empty() || marks_.back() > stack_.size()) fail_pickle("no MARK");
    const std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<PyRef> out(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return out;
  }
  PyRef container(PyValue::Kind k) {
    PyRef c = top();
    if (c->kind != k) fail_pickle("item added to something that is not a dict or list");
    return c;
  }

  PyRef persistent_load(const PyRef& pid) {
    // ('storage', torch.<Type>Storage, key, location, numel)
    if (pid->kind != PyValue::Kind::tuple || pid->items.size() < 5 || pid->items[0]->text != "storage" ||
        pid->items[1]->kind != PyValue::Kind::global || pid->items[2]->kind != PyValue::Kind::string ||
        pid->items[4]->kind != PyValue::Kind::integer)
      fail_pickle("persistent id is not a storage");
    static const std::map<std::string, at::ScalarType> types = {
        {"torch.FloatStorage", at::kFloat},   {"torch.HalfStorage", at::kHalf},   {"torch.BFloat16Storage", at::kBFloat16},
        {"torch.DoubleStorage", at::kDouble}, {"torch.LongStorage", at::kLong},   {"torch.IntStorage", at::kInt},
        {"torch.ShortStorage", at::kShort},   {"torch.CharStorage", at::kChar},   {"torch.ByteStorage", at::kByte},
        {"torch.BoolStorage", at::kBool}};
    auto t = types.find(pid->items[1]->text);
    if (t == types.end()) fail_pickle("unsupported storage type " + pid->items[1]->text);
    const std::string& key = pid->items[2]->text;
    const std::int64_t numel = pid->items[4]->integer;
    std::span<const char> bytes = record_("data/" + key);
    if (numel < 0 || static_cast<std::uint64_t>(numel) * element_size(t->second) > bytes.size())
      fail(path_, "storage " + key + " holds " + std::to_string(bytes.size()) + " bytes, fewer than its " +
                      std::to_string(numel) + " elements need (truncated?)");
    auto v = make(PyValue::Kind::storage);
    v->tensor = view_bytes(bytes.data(), {numel}, {1}, t->second);
    return v;
  }

  std::vector<std::int64_t> int_tuple(const PyRef& v) {
    if (v->kind != PyValue::Kind::tuple) fail_pickle("size or stride is not a tuple");
    std::vector<std::int64_t> out;
    for (const PyRef& i : v->items) {
      if (i->kind != PyValue::Kind::integer || i->integer < 0) fail_pickle("size or stride is not a tuple of sizes");
      out.push_back(i->integer);
    }
    return out;
  }

  PyRef reduce(const PyRef& fn, const PyRef& args) {
    if (fn->kind != PyValue::Kind::global || args->kind != PyValue::Kind::tuple) fail_pickle("REDUCE of a non-global");
    const std::string& name = fn->text;
    if (name == "collections.OrderedDict") return make(PyValue::Kind::dict);
    if (name == "torch._utils._rebuild_parameter" && !args->items.empty()) return args->items[0];
    if (name == "torch._utils._rebuild_tensor_v2" && args->items.size() >= 4 &&
        args->items[0]->kind == PyValue::Kind::storage && args->items[1]->kind == PyValue::Kind::integer) {
      const at::Tensor& storage = args->items[0]->tensor;
      const std::int64_t offset = args->items[1]->integer;
      const std::vector<std::int64_t> size = int_tuple(args->items[2]), stride = int_tuple(args->items[3]);
      if (size.size() != stride.size()) fail_pickle("size and stride of different lengths");
      std::int64_t extent = 1;  // one past the last element reached
      bool empty = false;
      for (std::size_t i = 0; i < size.size(); ++i) {
        if (size[i] == 0) empty = true;
        extent += (size[i] - 1) * stride[i];
      }
      if (offset < 0 || (!empty && offset + extent > storage.numel()))
        fail(path_, "a tensor reaches past its storage (offset " + std::to_string(offset) + ", " +
                        std::to_string(storage.numel()) + " elements stored)");
      auto v = make(PyValue::Kind::tensor);
      v->tensor = empty ? at::empty(size, storage.options())
                        : at::from_blob(static_cast<char*>(storage.data_ptr()) + offset * storage.element_size(), size,
                                        stride, storage.options());
      return v;
    }
    fail_pickle("unsupported call " + name);
  }

  std::string path_;
  std::span<const char> p_;
  std::size_t pos_ = 0;
  std::function<std::span<const char>(const std::string&)> record_;
  std::vector<PyRef> stack_;
  std::vector<std::size_t> marks_;
  std::map<std::uint64_t, PyRef> memo_;
};

WeightMap read_torch_pickle(const std::string& path, const Mapping& m) {
  const std::span<const char> bytes(m.data, m.size);
  std::vector<store::ZipRecord> records;
  try {
    records = store::check_zip_records(bytes, 1, 10);
  } catch (const std::exception& e) {
    fail(path, std::string("not a readable torch checkpoint (") + e.what() + ")");
  }
  // Every record sits in one top-level folder ("archive/data.pkl", "archive/data/0").
  const std::string_view first = records.front().name;
  const std::string prefix(first.substr(0, first.find('/') + 1));
  auto record = [&](const std::string& name) -> std::span<const char> {
    for (const store::ZipRecord& r : records)
      if (r.name == prefix + name) {
        if (auto d = store::record_data(bytes, r)) return *d;
        fail(path, "record " + prefix + name + " lies outside the file (truncated?)");
      }
    fail(path, "torch checkpoint has no record " + prefix + name);
  };
  PyRef root = StateDictUnpickler(path, record("data.pkl"), record).parse();
  auto as_dict = [&](const PyRef& v) {
    if (v->kind != PyValue::Kind::dict) fail(path, "the checkpoint's pickle is not a dict of tensors");
    return v;
  };
  PyRef dict = as_dict(root);
  for (const auto& [k, v] : dict->dict)  // {"state_dict": {...}}, as Lightning and fish-speech's trainer save
    if (k->kind == PyValue::Kind::string && k->text == "state_dict") dict = as_dict(v);
  WeightMap out;
  for (const auto& [k, v] : dict->dict) {
    if (k->kind != PyValue::Kind::string) fail(path, "a state dict key is not a string");
    if (v->kind != PyValue::Kind::tensor) fail(path, "entry '" + k->text + "' is not a tensor");
    out[k->text] = v->tensor;
  }
  // fish-speech's loader keeps a trainer checkpoint's "generator." entries, without the prefix.
  bool generator = false;
  for (const auto& [name, t] : out) generator = generator || name.find("generator.") != std::string::npos;
  if (generator) {
    WeightMap kept;
    for (auto& [name, t] : out)
      if (auto at = name.find("generator."); at != std::string::npos) kept[name.substr(0, at) + name.substr(at + 10)] = t;
    out = std::move(kept);
  }
  return out;
}

}  // namespace ckpt
}  // namespace

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {
namespace ckpt {

/// A checkpoint saved in shards (`model.safetensors.index.json`: {"weight_map": {tensor: shard file}}): every
/// shard read, each tensor where the index says it is; the digest is the SHA-256 of the "shard sha256" lines.
CheckpointFile read_sharded(const std::filesystem::path& index, const std::filesystem::path& folder) {
  nlohmann::json j;
  try {
    std::ifstream in(index);
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    fail(index.string(), std::string("shard index is not JSON (") + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object() || j["weight_map"].empty())
    fail(index.string(), "shard index has no \"weight_map\" of tensor names to shard files");
  std::map<std::string, std::vector<std::string>> by_shard;
  for (const auto& [name, shard] : j["weight_map"].items()) {
    if (!shard.is_string()) fail(index.string(), "shard of tensor '" + name + "' is not a file name");
    const std::string file = shard.get<std::string>();
    if (file.empty() || file.find('/') != std::string::npos || file == "..")
      fail(index.string(), "shard '" + file + "' of tensor '" + name + "' is not a file of the folder");
    by_shard[file].push_back(name);
  }
  CheckpointFile out;
  out.path = index.string();
  out.format = "safetensors, " + std::to_string(by_shard.size()) + " shards";
  auto mappings = std::make_shared<std::vector<std::shared_ptr<const void>>>();
  std::string lines;
  for (const auto& [file, names] : by_shard) {
    CheckpointFile shard = read_checkpoint((folder / file).string(), {});
    for (const std::string& name : names)
      if (!shard.tensors.count(name))
        fail(shard.path, "the shard index puts tensor '" + name + "' in this shard, which lacks it");
    for (auto& [name, t] : shard.tensors) {
      if (out.tensors.count(name)) fail(shard.path, "tensor '" + name + "' is also in another shard");
      out.tensors.emplace(name, std::move(t));
    }
    lines += file + " " + shard.sha256 + "\n";
    mappings->push_back(shard.mapping);
  }
  out.sha256 = sha256_hex(std::span<const std::byte>(reinterpret_cast<const std::byte*>(lines.data()), lines.size()));
  out.mapping = mappings;
  return out;
}

}  // namespace ckpt
}  // namespace

CheckpointFile read_checkpoint(const std::string& path, const std::vector<std::string>& folder_files) {
  namespace fs = std::filesystem;
  using namespace ckpt;
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec)) {
    file.clear();
    for (const std::string& name : folder_files)
      if (fs::is_regular_file(fs::path(path) / name, ec)) {
        file = (fs::path(path) / name).string();
        break;
      }
    if (file.empty())
      for (const std::string& name : folder_files)
        if (fs::is_regular_file(fs::path(path) / (name + ".index.json"), ec))
          return read_sharded(fs::path(path) / (name + ".index.json"), path);
    if (file.empty()) {
      std::string names;
      for (const std::string& n : folder_files) names += (names.empty() ? "" : ", ") + n;
      fail(path, "folder holds no checkpoint file (looked for " + names + ")");
    }
  } else if (!fs::exists(path, ec)) {
    fail(path, "no such checkpoint file or folder");
  }
  std::shared_ptr<const Mapping> m = map_file(file);
  CheckpointFile out;
  out.path = file;
  out.sha256 = sha256_hex(std::span<const std::byte>(reinterpret_cast<const std::byte*>(m->data), m->size));
  const bool zip = m->size >= 4 && std::memcmp(m->data, "PK\x03\x04", 4) == 0;
  // safetensors: an 8-byte little-endian header length, then the JSON header (its length may start with 0x80).
  const bool safetensors = m->size > 8 && m->data[8] == '{';
  if (zip) {
    out.format = "torch pickle";
    out.tensors = read_torch_pickle(file, *m);
  } else if (!safetensors && m->size >= 4 && (m->data[0] == '\x80' || std::memcmp(m->data, "\x8a\x0a\x6c\xfc", 4) == 0)) {
    fail(file, "a torch checkpoint in the legacy (pre-1.6, non-zip) format: re-save it with torch.save");
  } else {
    out.format = "safetensors";
    out.tensors = read_safetensors(file, *m);
  }
  out.mapping = m;
  return out;
}

WeightMap bind_checkpoint(const CheckpointFile& file, std::span<const TensorSpec> tree,
                          const std::vector<std::string>& ignored_prefixes, const std::string& family) {
  using namespace ckpt;
  std::map<std::string, std::string> problems;  // by tensor name: sorted, the first reported
  WeightMap out;
  std::map<std::string, const TensorSpec*> expected;
  for (const TensorSpec& s : tree) expected[s.name] = &s;
  for (const auto& [name, spec] : expected) {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end()) {
      problems[name] = "missing tensor '" + name + "' (expected " + shape_text(spec->shape) + ")";
      continue;
    }
    const at::Tensor& t = it->second;
    if (!at::isFloatingType(t.scalar_type())) {
      problems[name] = "tensor '" + name + "' has dtype " + std::string(c10::toString(t.scalar_type())) +
                       ", expected a floating-point type";
    } else if (t.sizes() != at::IntArrayRef(spec->shape)) {
      problems[name] = "tensor '" + name + "' has shape " + shape_text(t.sizes().vec()) + ", expected " +
                       shape_text(spec->shape);
    } else {
      out[name] = t.scalar_type() == at::kFloat ? t : t.to(at::kFloat);
    }
  }
  for (const auto& [name, t] : file.tensors) {
    if (expected.count(name)) continue;
    bool ignored = false;
    for (const std::string& p : ignored_prefixes) ignored = ignored || name.rfind(p, 0) == 0;
    if (!ignored) problems[name] = "unexpected tensor '" + name + "' (not part of the " + family + " encoder)";
  }
  if (!problems.empty()) {
    std::string line = problems.begin()->second;
    if (problems.size() > 1) line += " (and " + std::to_string(problems.size() - 1) + " more problems)";
    fail(file.path, line);
  }
  return out;
}

}  // namespace refenc::encoders
