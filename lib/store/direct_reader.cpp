#include "store/direct_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace refenc::store {
namespace {

/// Thrown inside this file only: the archive uses something this reader does not know.
struct Unknown {};

[[noreturn]] void unknown() { throw Unknown{}; }

/// The data of each record, found by name as LibTorch's zip reader finds it (ignoring case); a name
/// that two records share, ignoring case, is unknown ground (which one LibTorch picks is its own).
class Records {
 public:
  Records(std::span<const char> bytes, std::span<const ZipRecord> records) : bytes_(bytes) {
    for (const ZipRecord& r : records) entries_.push_back({lower(r.name), &r});
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    for (std::size_t i = 1; i < entries_.size(); ++i)
      if (entries_[i].name == entries_[i - 1].name) unknown();
    if (records.empty()) unknown();
    const std::string_view first = records.front().name;
    folder_ = lower(first.substr(0, first.find('/') + 1));
  }

  /// The data of `<archive folder>/<name>`.
  std::span<const char> data(std::string_view name) const {
    const std::string want = folder_ + lower(name);
    auto it = std::lower_bound(entries_.begin(), entries_.end(), want,
                               [](const Entry& e, const std::string& w) { return e.name < w; });
    if (it == entries_.end() || it->name != want) unknown();
    // No CRC-32 check: LibTorch's zip reader is built without it, and the entry's checksum covers
    // every byte that decoding uses.
    const std::optional<std::span<const char>> data = record_data(bytes_, *it->record);
    if (!data) unknown();
    return *data;
  }

 private:
  struct Entry {
    std::string name;
    const ZipRecord* record;
  };
  static std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  }
  std::span<const char> bytes_;
  std::vector<Entry> entries_;
  std::string folder_;
};

/// A value on the pickle's stack: a finished PickledValue, or one of the helpers an entry's pickle
/// builds its tensors from.
struct Item {
  enum class Kind { value, tuple, global, storage, boolean, none, ordered_dict, used_up };
  Kind kind = Kind::value;
  PickledValue value;            // value
  std::vector<Item> items;       // tuple
  bool flag = false;             // boolean
  std::string_view name;         // global: "module\nname"
  DType dtype = DType::float32;  // storage
  std::span<const char> data;    // storage: its record
};

/// The dtype of the storage class `global` ("torch\nFloatStorage"), if it is one refenc writes.
std::optional<DType> storage_dtype(std::string_view global) {
  constexpr std::string_view module = "torch\n";
  if (!global.starts_with(module)) return std::nullopt;
  return dtype_of_storage_class(global.substr(module.size()));
}

const std::string& text_of(const Item& i) {
  if (i.kind != Item::Kind::value || i.value.kind != PickledValue::Kind::string) unknown();
  return i.value.text;
}

std::int64_t integer_of(const Item& i) {
  if (i.kind != Item::Kind::value || i.value.kind != PickledValue::Kind::integer) unknown();
  return i.value.integer;
}

std::vector<std::int64_t> integers_of(const Item& i) {
  if (i.kind != Item::Kind::tuple) unknown();
  std::vector<std::int64_t> out;
  out.reserve(i.items.size());
  for (const Item& x : i.items) out.push_back(integer_of(x));
  return out;
}

/// persistent_load of ('storage', torch.<T>Storage, key, 'cpu', numel): the record data/<key>,
/// which must hold exactly numel elements.
Item storage(const Item& id, const Records& records) {
  if (id.kind != Item::Kind::tuple || id.items.size() != 5 || text_of(id.items[0]) != "storage" ||
      id.items[1].kind != Item::Kind::global || text_of(id.items[3]) != "cpu")
    unknown();
  const std::optional<DType> dtype = storage_dtype(id.items[1].name);
  if (!dtype) unknown();
  Item out;
  out.kind = Item::Kind::storage;
  out.dtype = *dtype;
  out.data = records.data("data/" + text_of(id.items[2]));
  const std::int64_t numel = integer_of(id.items[4]);
  if (numel < 0 || static_cast<std::uint64_t>(numel) != out.data.size() / element_size(*dtype) ||
      out.data.size() % element_size(*dtype) != 0)
    unknown();
  return out;
}

/// torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict()): a
/// dense tensor laid out contiguously inside its storage. `budget`: the tensor bytes this archive may
/// still copy (tensors sharing a storage could otherwise copy it many times over).
PickledValue tensor(const Item& args, std::size_t& budget) {
  if (args.kind != Item::Kind::tuple || args.items.size() != 6) unknown();
  const Item& storage = args.items[0];
  // requires_grad false: LibTorch's reader refuses it true on an integer tensor.
  if (storage.kind != Item::Kind::storage || args.items[4].kind != Item::Kind::boolean || args.items[4].flag ||
      args.items[5].kind != Item::Kind::ordered_dict)
    unknown();
  const std::int64_t offset = integer_of(args.items[1]);
  std::vector<std::int64_t> size = integers_of(args.items[2]);
  const std::vector<std::int64_t> stride = integers_of(args.items[3]);
  if (stride.size() != size.size()) unknown();
  const std::uint64_t elements = storage.data.size() / element_size(storage.dtype);
  // The strides at::empty gives this size (a dimension of 0 counts as 1), and the element count.
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 40;
  const bool empty = std::find(size.begin(), size.end(), 0) != size.end();
  std::uint64_t step = 1, numel = empty ? 0 : 1;
  for (std::size_t d = size.size(); d-- > 0;) {
    if (size[d] < 0 || static_cast<std::uint64_t>(size[d]) > kLimit) unknown();
    if (stride[d] < 0 || static_cast<std::uint64_t>(stride[d]) != step) unknown();
    const auto s = static_cast<std::uint64_t>(size[d]);
    if (!empty && numel > elements / s) unknown();  // more elements than the storage holds
    numel *= s;
    if (std::max<std::uint64_t>(s, 1) > kLimit / step) unknown();
    step *= std::max<std::uint64_t>(s, 1);
  }
  if (offset < 0 || static_cast<std::uint64_t>(offset) > elements - numel) unknown();
  if (numel * element_size(storage.dtype) > budget) unknown();
  budget -= static_cast<std::size_t>(numel * element_size(storage.dtype));
  PickledValue out;
  out.kind = PickledValue::Kind::tensor;
  try {
    out.tensor.emplace(storage.dtype, std::move(size));
  } catch (const Error&) {
    unknown();
  }
  if (out.tensor->nbytes())
    std::memcpy(out.tensor->raw(), storage.data.data() + static_cast<std::size_t>(offset) * element_size(storage.dtype),
                out.tensor->nbytes());
  return out;
}

/// The value of a dict item: only what an entry holds (LibTorch's reader turns some of the helpers
/// into values of its own, such as an integer for a bare global).
PickledValue to_value(Item&& i) {
  if (i.kind != Item::Kind::value) unknown();
  return std::move(i.value);
}

/// Dicts nested as read_archive converts them: deeper than an entry's, LibTorch's reader decides.
void check_depth(const PickledValue& v, int depth) {
  if (v.kind != PickledValue::Kind::dict) return;
  if (depth >= 4) unknown();
  for (const PickledValue& x : v.values) check_depth(x, depth + 1);
}

PickledValue run(std::span<const char> pk, const Records& records, std::size_t tensor_budget) {
  std::vector<Item> stack, memo;
  std::vector<std::size_t> marks;
  std::size_t i = 0;
  auto need = [&](std::uint64_t n) {
    if (n > pk.size() - i) unknown();
  };
  auto arg = [&](int n) {
    need(static_cast<std::uint64_t>(n));
    const std::uint64_t v = read_le(pk, i, n);
    i += static_cast<std::size_t>(n);
    return v;
  };
  auto line = [&] {
    const void* nl = std::memchr(pk.data() + i, '\n', pk.size() - i);
    if (!nl) unknown();
    const std::size_t start = i;
    i = static_cast<std::size_t>(static_cast<const char*>(nl) - pk.data()) + 1;
    return std::string_view(pk.data() + start, i - 1 - start);
  };
  auto above_mark = [&] { return stack.size() > (marks.empty() ? 0 : marks.back()); };
  auto pop = [&] {
    if (!above_mark()) unknown();
    Item top = std::move(stack.back());
    stack.pop_back();
    return top;
  };
  auto to_mark = [&] {  // the items above the innermost MARK, which goes
    if (marks.empty()) unknown();
    std::vector<Item> items(std::make_move_iterator(stack.begin() + static_cast<std::ptrdiff_t>(marks.back())),
                            std::make_move_iterator(stack.end()));
    stack.resize(marks.back());
    marks.pop_back();
    return items;
  };
  auto push_value = [&](PickledValue v) {
    Item it;
    it.value = std::move(v);
    stack.push_back(std::move(it));
  };
  auto integer = [&](std::int64_t v) {
    PickledValue p;
    p.kind = PickledValue::Kind::integer;
    p.integer = v;
    push_value(std::move(p));
  };
  auto tuple = [&](std::vector<Item> items) {
    Item t;
    t.kind = Item::Kind::tuple;
    t.items = std::move(items);
    stack.push_back(std::move(t));
  };
  std::size_t copied = 0;  // bytes of strings copied into and out of the memo: bounded by the pickle's size
  auto count_copy = [&](const Item& item) {
    copied += item.value.text.size();
    if (copied > 4 * pk.size()) unknown();
  };
  auto put = [&](std::uint64_t id) {
    if (!above_mark() || id > memo.size()) unknown();
    const Item& top = stack.back();
    Item copy;
    // A dict or tensor fetched again would be the same object in LibTorch's reader, not a copy; and
    // a tuple fetched many times would make this reader copy it each time (the writer fetches
    // strings, globals and storages only).
    if (top.kind == Item::Kind::tuple || (top.kind == Item::Kind::value && (top.value.kind == PickledValue::Kind::dict ||
                                                                          top.value.kind == PickledValue::Kind::tensor)))
      copy.kind = Item::Kind::used_up;
    else
      count_copy(copy = top);
    if (id == memo.size())
      memo.push_back(std::move(copy));
    else
      memo[id] = std::move(copy);
  };
  auto get = [&](std::uint64_t id) {
    if (id >= memo.size() || memo[id].kind == Item::Kind::used_up) unknown();
    count_copy(memo[id]);
    stack.push_back(memo[id]);
  };
  auto set_items = [&](std::vector<Item> items) {  // onto the dict below them
    if (items.size() % 2 || !above_mark()) unknown();
    Item& d = stack.back();
    if (d.kind != Item::Kind::value || d.value.kind != PickledValue::Kind::dict) unknown();
    for (std::size_t k = 0; k < items.size(); k += 2) {
      PickledValue key = to_value(std::move(items[k]));
      // String keys, each once (LibTorch's reader keeps the first place and the last value of a key).
      if (key.kind != PickledValue::Kind::string || d.value.keys.size() >= 1024) unknown();
      for (const PickledValue& have : d.value.keys)
        if (have.text == key.text) unknown();
      d.value.keys.push_back(std::move(key));
      d.value.values.push_back(to_value(std::move(items[k + 1])));
    }
  };

  need(2);
  if (static_cast<unsigned char>(pk[0]) != 0x80 || pk[1] != 2) unknown();  // PROTO 2
  i = 2;
  while (i < pk.size()) {
    const auto op = static_cast<unsigned char>(pk[i++]);
    switch (op) {
      case '.':  // STOP, as the last byte
        if (i != pk.size() || stack.size() != 1 || !marks.empty()) unknown();
        {
          PickledValue out = to_value(std::move(stack.back()));
          check_depth(out, 0);
          return out;
        }
      case '(': marks.push_back(stack.size()); break;  // MARK
      case '}': {                                      // EMPTY_DICT
        PickledValue d;
        d.kind = PickledValue::Kind::dict;
        push_value(std::move(d));
        break;
      }
      case 'X': {  // BINUNICODE
        const std::uint64_t n = arg(4);
        need(n);
        PickledValue s;
        s.kind = PickledValue::Kind::string;
        s.text.assign(pk.data() + i, static_cast<std::size_t>(n));
        i += static_cast<std::size_t>(n);
        push_value(std::move(s));
        break;
      }
      case 'K': integer(static_cast<std::int64_t>(arg(1))); break;                          // BININT1
      case 'M': integer(static_cast<std::int64_t>(arg(2))); break;                          // BININT2
      case 'J': integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(arg(4)))); break;  // BININT
      case 0x8a:  // LONG1, which LibTorch's reader reads with 8 bytes only
        if (arg(1) != 8) unknown();
        integer(static_cast<std::int64_t>(arg(8)));
        break;
      case 0x88: case 0x89: {  // NEWTRUE, NEWFALSE
        Item b;
        b.kind = Item::Kind::boolean;
        b.flag = op == 0x88;
        stack.push_back(std::move(b));
        break;
      }
      case 'N': {  // NONE
        Item n;
        n.kind = Item::Kind::none;
        stack.push_back(std::move(n));
        break;
      }
      case 'q': put(arg(1)); break;  // BINPUT
      case 'r': put(arg(4)); break;  // LONG_BINPUT
      case 'h': get(arg(1)); break;  // BINGET
      case 'j': get(arg(4)); break;  // LONG_BINGET
      case ')': tuple({}); break;    // EMPTY_TUPLE
      case 't': tuple(to_mark()); break;
      case 0x85: case 0x86: case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
        std::vector<Item> items(op - 0x84);
        for (std::size_t k = items.size(); k-- > 0;) items[k] = pop();
        tuple(std::move(items));
        break;
      }
      case 'c': {  // GLOBAL
        const std::string_view module = line();
        const std::string_view name = line();
        Item g;
        g.kind = Item::Kind::global;
        g.name = std::string_view(module.data(), module.size() + 1 + name.size());
        if (g.name != "torch._utils\n_rebuild_tensor_v2" && g.name != "collections\nOrderedDict" &&
            !storage_dtype(g.name))
          unknown();
        stack.push_back(std::move(g));
        break;
      }
      case 'Q': stack.push_back(storage(pop(), records)); break;  // BINPERSID
      case 'R': {                                                  // REDUCE
        Item args = pop();
        const Item callable = pop();
        if (callable.kind != Item::Kind::global) unknown();
        if (callable.name == "collections\nOrderedDict") {
          if (args.kind != Item::Kind::tuple || !args.items.empty()) unknown();
          Item d;
          d.kind = Item::Kind::ordered_dict;
          stack.push_back(std::move(d));
        } else if (callable.name == "torch._utils\n_rebuild_tensor_v2") {
          push_value(tensor(args, tensor_budget));
        } else {
          unknown();
        }
        break;
      }
      // No SETITEM: the writer never makes it and LibTorch's unpickler refuses it ("Unknown opcode").
      case 'u': set_items(to_mark()); break;  // SETITEMS
      default: unknown();
    }
  }
  unknown();  // no STOP
}

}  // namespace

std::optional<PickledValue> read_archive_directly(std::span<const char> bytes, std::span<const ZipRecord> records) {
  try {
    const Records named(bytes, records);
    return run(named.data("data.pkl"), named, bytes.size());
  } catch (const Unknown&) {
    return std::nullopt;
  }
}

}  // namespace refenc::store
