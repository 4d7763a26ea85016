// Checks made on an entry file before LibTorch reads it (see entry_archive.hpp). LibTorch's zip
// reader allocates a record's declared size before reading it, and its unpickler allocates a string's
// declared length and reserves memo slots up to a declared index before checking them against the
// data: without these checks a file of a few hundred bytes makes it allocate gigabytes. And when its
// archive reader throws from its constructor (no folder in the first name, no readable version
// record), it leaks the zip state it opened: a file that would make it throw there is refused here.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/entry_archive.hpp"
#include "store/entry_format.hpp"

namespace refenc::store {

std::uint64_t read_le(std::span<const char> b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

namespace {

[[noreturn]] void bad_zip(const std::string& why) { throw EntryError("not a readable torch archive: " + why); }
[[noreturn]] void bad_pickle(const std::string& why) { throw EntryError("unreadable pickle: " + why); }

constexpr std::uint32_t kEndSig = 0x06054b50, kZip64LocatorSig = 0x07064b50, kZip64EndSig = 0x06064b50,
                        kDirSig = 0x02014b50;
constexpr std::size_t kEndSize = 22, kZip64LocatorSize = 20, kZip64EndSize = 56, kDirSize = 46, kLocalSize = 30;
constexpr std::uint64_t kSaturated = 0xffffffffu;
constexpr std::uint32_t kLocalSig = 0x04034b50;

bool same_name(std::string_view a, std::string_view b) {  // as the zip reader looks names up
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

/// The version number a version record holds, read as std::stoull would; nullopt when it is none.
std::optional<std::uint64_t> version_number(std::span<const char> b, const ZipRecord& r) {
  const std::optional<std::span<const char>> data = record_data(b, r);
  if (!data) return std::nullopt;
  std::string_view text(data->data(), data->size());
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  std::uint64_t v = 0;
  std::size_t digits = 0;
  for (; digits < text.size() && digits < 19 && text[digits] >= '0' && text[digits] <= '9'; ++digits)
    v = v * 10 + static_cast<std::uint64_t>(text[digits] - '0');
  if (digits == 0 || (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::span<const char>> record_data(std::span<const char> b, const ZipRecord& r) {
  if (r.local > b.size() || b.size() - r.local < kLocalSize) return std::nullopt;
  const auto at = static_cast<std::size_t>(r.local);
  if (read_le(b, at, 4) != kLocalSig) return std::nullopt;
  const std::uint64_t start = r.local + kLocalSize + read_le(b, at + 26, 2) + read_le(b, at + 28, 2);
  if (start > b.size() || r.size > b.size() - start) return std::nullopt;
  return b.subspan(static_cast<std::size_t>(start), static_cast<std::size_t>(r.size));
}

std::vector<ZipRecord> check_zip_records(std::span<const char> b, std::uint64_t min_version,
                                         std::uint64_t max_version) {
  const std::size_t size = b.size();
  if (size < kEndSize) bad_zip("too short");
  // The end record the reader uses: the last signature with room for the record after it.
  std::optional<std::size_t> end;
  for (std::size_t i = size - kEndSize + 1; i-- > 0;)
    if (read_le(b, i, 4) == kEndSig) {
      end = i;
      break;
    }
  if (!end) bad_zip("no end of central directory");
  std::uint64_t on_disk = read_le(b, *end + 8, 2), total = read_le(b, *end + 10, 2);
  std::uint64_t dir_size = read_le(b, *end + 12, 4), dir_at = read_le(b, *end + 16, 4);
  std::uint64_t this_disk = read_le(b, *end + 4, 2), dir_disk = read_le(b, *end + 6, 2);
  // A zip64 locator just before it points to the zip64 end record, whose values then replace these.
  if (*end >= kZip64LocatorSize + kZip64EndSize && read_le(b, *end - kZip64LocatorSize, 4) == kZip64LocatorSig) {
    const std::uint64_t at = read_le(b, *end - kZip64LocatorSize + 8, 8);
    if (at > size - kZip64EndSize) bad_zip("zip64 end record outside the file");
    const auto z = static_cast<std::size_t>(at);
    if (read_le(b, z, 4) == kZip64EndSig) {
      // What the zip reader refuses in a zip64 archive: an end record shorter than its fixed part, a
      // locator counting other than 1 disk, more records or a larger directory than 32 bits hold.
      if (read_le(b, z + 4, 8) < kZip64EndSize - 12) bad_zip("damaged zip64 end record");
      if (read_le(b, *end - kZip64LocatorSize + 16, 4) != 1) bad_zip("spans several disks");
      this_disk = read_le(b, z + 16, 4);
      dir_disk = read_le(b, z + 20, 4);
      on_disk = read_le(b, z + 24, 8);
      total = read_le(b, z + 32, 8);
      dir_size = read_le(b, z + 40, 8);
      dir_at = read_le(b, z + 48, 8);
      if (std::max({on_disk, total, dir_size}) > kSaturated) bad_zip("zip64 directory too large for the reader");
    }
  }
  if (total != on_disk || ((this_disk | dir_disk) != 0 && (this_disk != 1 || dir_disk != 1)))
    bad_zip("spans several disks");
  if (dir_at > size || dir_size > size - dir_at) bad_zip("central directory outside the file");
  if (total > dir_size / kDirSize) bad_zip("central directory too small for its " + std::to_string(total) + " records");
  std::size_t p = static_cast<std::size_t>(dir_at);
  const std::size_t dir_end = p + static_cast<std::size_t>(dir_size);
  std::vector<ZipRecord> records;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (dir_end - p < kDirSize || read_le(b, p, 4) != kDirSig) bad_zip("damaged central directory");
    const std::uint64_t method = read_le(b, p + 10, 2), packed = read_le(b, p + 20, 4), unpacked = read_le(b, p + 24, 4);
    const std::uint64_t header = kDirSize + read_le(b, p + 28, 2) + read_le(b, p + 30, 2) + read_le(b, p + 32, 2);
    const std::uint64_t local = read_le(b, p + 42, 4);
    if (method != 0) bad_zip("record " + std::to_string(i) + " is compressed (entries store records as they are)");
    const std::string_view name(b.data() + p + kDirSize, static_cast<std::size_t>(read_le(b, p + 28, 2)));
    if (header > dir_end - p) bad_zip("damaged central directory");
    // Encrypted (bit 0), a patch (5), strongly encrypted (6), or with its local header masked (13).
    if (read_le(b, p + 8, 2) & 0x2061) bad_zip("record " + std::to_string(i) + " is encrypted or a patch");
    if (const std::uint64_t disk = read_le(b, p + 34, 2); disk == 0xffff || (disk != this_disk && disk != 1))
      bad_zip("record " + std::to_string(i) + " is on another disk");
    // The reader reads nothing for a folder, and hands back the uninitialised buffer it allocated.
    if ((read_le(b, p + 38, 4) & 0x10) || name.ends_with('/')) bad_zip("record " + std::to_string(i) + " is a folder");
    if (packed != unpacked || packed == kSaturated || local == kSaturated)
      bad_zip("record " + std::to_string(i) + " has inconsistent sizes");
    if (local > size || kLocalSize + packed > size - local)
      bad_zip("record " + std::to_string(i) + " lies outside the file");
    records.push_back({name, local, packed});
    p += static_cast<std::size_t>(header);
  }
  // What the archive reader checks when it opens the file: the first record's folder names the
  // archive, and <archive>/.data/version, else <archive>/version, holds a version it supports.
  if (records.empty()) bad_zip("holds no records");
  const std::size_t slash = records.front().name.find('/');
  if (slash == std::string_view::npos) bad_zip("first record is not in a folder");
  const std::string folder(records.front().name.substr(0, slash + 1));
  bool found = false;
  for (const char* name : {".data/version", "version"}) {
    for (const ZipRecord& r : records) {
      if (!same_name(r.name, folder + name)) continue;
      found = true;
      const std::optional<std::uint64_t> v = version_number(b, r);
      if (!v || *v < min_version || *v > max_version) bad_zip("unreadable or unsupported version record");
    }
    if (found) break;
  }
  if (!found) bad_zip("no version record");
  return records;
}

void check_pickle(std::span<const char> pk) {
  const std::size_t n = pk.size();
  std::size_t i = 0;
  std::uint64_t memo = 0;            // memo slots defined so far: writers number them 0, 1, 2, ...
  std::uint64_t depth = 0;           // values on the stack
  std::vector<std::uint64_t> marks;  // stack depth at each open MARK
  std::size_t op_at = 0;
  auto fail = [&](const std::string& why) { bad_pickle(why + " at offset " + std::to_string(op_at)); };
  auto need = [&](std::uint64_t count) {
    if (count > n - i) fail("argument runs past the end");
  };
  auto skip_line = [&] {
    const void* nl = std::memchr(pk.data() + i, '\n', n - i);
    if (!nl) fail("argument runs past the end");
    const std::size_t start = i;
    i = static_cast<std::size_t>(static_cast<const char*>(nl) - pk.data()) + 1;
    return std::string_view(pk.data() + start, i - 1 - start);
  };
  auto length = [&](int bytes) {
    need(static_cast<std::uint64_t>(bytes));
    const std::uint64_t len = read_le(pk, i, bytes);
    i += static_cast<std::size_t>(bytes);
    need(len);
    i += static_cast<std::size_t>(len);
  };
  auto text_index = [&] {
    const std::string_view digits = skip_line();
    if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string_view::npos)
      fail("memo opcode without an index");
    return std::stoull(std::string(digits));
  };
  // The stack as the opcodes use it: values above the innermost MARK are the ones an opcode may take.
  auto above_mark = [&] { return depth - (marks.empty() ? 0 : marks.back()); };
  auto take = [&](std::uint64_t count) {
    if (above_mark() < count) fail("stack underflow");
    depth -= count;
  };
  auto to_mark = [&] {  // pops everything above the innermost MARK, and the MARK
    if (marks.empty()) fail("no MARK to pop to");
    const std::uint64_t items = depth - marks.back();
    depth = marks.back();
    marks.pop_back();
    return items;
  };
  auto put = [&](std::uint64_t id) {
    if (above_mark() < 1) fail("memo store from an empty stack");
    if (id > memo) fail("memo index " + std::to_string(id) + " out of sequence");
    if (id == memo) ++memo;
  };
  auto get = [&](std::uint64_t id) {
    if (id >= memo) fail("memo index " + std::to_string(id) + " was never stored");
    ++depth;
  };
  while (i < n) {
    op_at = i;
    const auto op = static_cast<unsigned char>(pk[i++]);
    // One opcode per line, as the pickle format lists them.
    // clang-format off
    switch (op) {
      case '.':  // STOP: the reader stops here too, and returns the one value left
        if (depth != 1 || !marks.empty()) fail("STOP with " + std::to_string(depth) + " values on the stack");
        return;
      case 0x80: need(1); i += 1; break;  // PROTO
      case 0x95: need(8); i += 8; break;  // FRAME
      case '(': marks.push_back(depth); break;
      case '0': take(1); break;                   // POP
      case '1': to_mark(); break;                 // POP_MARK
      case '2': take(1); depth += 2; break;       // DUP
      // Push one value.
      case 'N': case 0x88: case 0x89: case '}': case ']': case ')': case 0x8f: case 0x97: ++depth; break;
      case 'K': case 0x82: need(1); i += 1; ++depth; break;
      case 'M': case 0x83: need(2); i += 2; ++depth; break;
      case 'J': case 0x84: need(4); i += 4; ++depth; break;
      case 'G': need(8); i += 8; ++depth; break;
      case 'U': case 'C': case 0x8a: case 0x8c: length(1); ++depth; break;
      case 'T': case 'X': case 'B': case 0x8b: length(4); ++depth; break;
      case 0x8d: case 0x8e: case 0x96: length(8); ++depth; break;
      case 'F': case 'I': case 'L': case 'P': case 'S': case 'V': skip_line(); ++depth; break;
      case 'c': skip_line(); skip_line(); ++depth; break;  // GLOBAL
      // Memo.
      case 'q': need(1); put(read_le(pk, i, 1)); i += 1; break;
      case 'r': need(4); put(read_le(pk, i, 4)); i += 4; break;
      case 'p': put(text_index()); break;
      case 0x94: put(memo); break;  // MEMOIZE
      case 'h': need(1); get(read_le(pk, i, 1)); i += 1; break;
      case 'j': need(4); get(read_le(pk, i, 4)); i += 4; break;
      case 'g': get(text_index()); break;
      // Take values, push one.
      case 'Q': case 0x85: case 0x98: take(1); ++depth; break;  // BINPERSID, TUPLE1, READONLY_BUFFER
      case 'R': case 'b': case 0x81: case 0x86: case 0x93: take(2); ++depth; break;  // REDUCE BUILD NEWOBJ TUPLE2 STACK_GLOBAL
      case 0x87: case 0x92: take(3); ++depth; break;  // TUPLE3, NEWOBJ_EX
      case 'a': take(2); ++depth; break;  // APPEND: list, value -> list
      case 's': take(3); ++depth; break;  // SETITEM: dict, key, value -> dict
      // Take everything above the MARK.
      case 't': case 'l': case 0x91: to_mark(); ++depth; break;  // TUPLE, LIST, FROZENSET
      case 'd':                                                    // DICT
        if (to_mark() % 2) fail("odd number of dict items");
        ++depth;
        break;
      case 'e': case 0x90: to_mark(); take(1); ++depth; break;  // APPENDS, ADDITEMS: onto the container below
      case 'u':                                                  // SETITEMS
        if (to_mark() % 2) fail("odd number of dict items");
        take(1);
        ++depth;
        break;
      case 'o': if (to_mark() < 1) fail("OBJ without a class"); ++depth; break;
      case 'i': skip_line(); skip_line(); to_mark(); ++depth; break;  // INST
      default: fail("unknown opcode " + std::to_string(op));
    }
    // clang-format on
  }
  bad_pickle("no STOP opcode");
}

}  // namespace refenc::store
