#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "store/direct_writer.hpp"
#include "store/entry_archive.hpp"
#include "store/entry_format.hpp"
#include "store/libtorch_reader.hpp"
#include "test_support.hpp"

using namespace refenc;
using namespace refenc::store;
using namespace refenc::store::test;

namespace {

Artifact every_dtype() {
  Artifact a;
  a.tensors["u8"] = HostTensor::from_vector<std::uint8_t>({3}, std::vector<std::uint8_t>{0, 7, 255});
  a.tensors["i16"] =
      HostTensor::from_vector<std::int16_t>({2, 3}, std::vector<std::int16_t>{-5, 0, 5, 1000, -1000, 32767});
  a.tensors["i32"] = HostTensor::from_vector<std::int32_t>({2}, std::vector<std::int32_t>{-70000, 70000});
  a.tensors["i64"] = HostTensor::from_vector<std::int64_t>({1, 2}, std::vector<std::int64_t>{1ll << 40, -3});
  a.tensors["f32"] = HostTensor::from_vector<float>({2, 2}, std::vector<float>{0.5f, -1.25f, 3e7f, 0.0f});
  a.tensors["empty"] = HostTensor(DType::int16, {0, 4});
  a.tensors["scalar"] = HostTensor::from_vector<float>({}, std::vector<float>{2.5f});
  a.meta["ref_text"] = "Hello, wörld";
  a.meta["empty"] = "";
  return a;
}

}  // namespace

TEST_CASE("entry round-trips every dtype, shape and metadata") {
  Artifact a = every_dtype();
  const std::string key = fake_key("x").canonical();
  std::vector<char> bytes = encode_entry(key, a);
  std::string stored_key;
  Artifact back = decode_entry(bytes, key, &stored_key);
  CHECK(back == a);
  CHECK(stored_key == key);
  CHECK(decode_entry(bytes, "") == a);  // no key check
}

TEST_CASE("entry decode refuses another key, older format, garbage, truncation and flipped bits") {
  Artifact a = fake_artifact("hello").compacted();
  const std::string key = fake_key("hello").canonical();
  std::vector<char> bytes = encode_entry(key, a);

  CHECK_THROWS_AS(decode_entry(bytes, fake_key("other").canonical()), EntryError);
  CHECK_THROWS_AS(decode_entry(encode_entry(key, a, kEntryFormat - 1), key), EntryError);
  CHECK_THROWS_AS(decode_entry({}, key), EntryError);
  std::vector<char> half(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() / 2));
  CHECK_THROWS_AS(decode_entry(half, key), EntryError);
  std::vector<char> junk(bytes.size());
  for (std::size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 131 + 17) & 0xff);
  CHECK_THROWS_AS(decode_entry(junk, key), EntryError);
  junk[0] = 'P', junk[1] = 'K', junk[2] = 3, junk[3] = 4;
  CHECK_THROWS_AS(decode_entry(junk, key), EntryError);

  // One flipped bit inside the tensor data.
  const HostTensor& codes = a.tensor("codes");
  auto raw = reinterpret_cast<const char*>(codes.raw());
  auto at = std::search(bytes.begin(), bytes.end(), raw, raw + codes.nbytes());
  REQUIRE(at != bytes.end());
  std::vector<char> flipped = bytes;
  flipped[static_cast<std::size_t>(at - bytes.begin()) + codes.nbytes() / 2] ^= 0x10;
  CHECK_THROWS_AS(decode_entry(flipped, key), EntryError);
}

TEST_CASE("entry decode survives 1500 seeded mutations: refused or the same artifact, never a crash") {
  // Entries are read from a folder other processes share: whatever a file holds, decode_entry must
  // either throw EntryError or return exactly the artifact that was written (a mutation of bytes the
  // archive does not check, such as padding, can leave it intact).
  const Artifact a = every_dtype();
  const std::string key = fake_key("mutate").canonical();
  const std::vector<char> bytes = encode_entry(key, a);
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<std::size_t> pos(0, bytes.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255), kind(0, 3), count(1, 8);
  int refused = 0, intact = 0;
  for (int i = 0; i < 1500; ++i) {
    std::vector<char> m = bytes;
    for (int n = count(rng); n > 0; --n) {
      switch (kind(rng)) {
        case 0: m[pos(rng) % m.size()] ^= static_cast<char>(1 << (byte(rng) % 8)); break;
        case 1: m[pos(rng) % m.size()] = static_cast<char>(byte(rng)); break;
        case 2: m.resize(pos(rng) % m.size() + 1); break;
        default:
          m.insert(m.begin() + static_cast<std::ptrdiff_t>(pos(rng) % m.size()), static_cast<char>(byte(rng)));
          break;
      }
    }
    try {
      Artifact back = decode_entry(m, key);
      REQUIRE(back == a);
      ++intact;
    } catch (const EntryError&) {
      ++refused;
    }
  }
  CHECK(refused + intact == 1500);
  CHECK(refused > 1200);
}

TEST_CASE("checksum depends on names, dtypes, shapes, data and metadata") {
  Artifact a = fake_artifact("abc");
  const std::string base = artifact_checksum(a);
  Artifact b = a;
  b.meta["ref_text"] = "abd";
  CHECK(artifact_checksum(b) != base);
  Artifact c = a.compacted();
  CHECK(artifact_checksum(c) != base);  // same values, other dtype
  Artifact d = a;
  d.tensors["codes"] = HostTensor::from_vector<std::int64_t>(
      {a.tensor("codes").shape()[1], 2}, std::vector<std::int64_t>(a.tensor("codes").values<std::int64_t>().begin(),
                                                                   a.tensor("codes").values<std::int64_t>().end()));
  CHECK(artifact_checksum(d) != base);  // same bytes, other shape
}

TEST_CASE("an entry opens in Python with torch.load(weights_only=True)") {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    WARN("SKIPPED: /usr/bin/python3 cannot import torch (install python3-torch to run this check)");
    return;
  }
  TempDir dir;
  Artifact a = every_dtype();
  a.tensors.erase("empty");
  const std::string key = fake_key("py").canonical();
  const auto entry = dir.path / "entry.pt";
  write_bytes(entry, encode_entry(key, a));
  const auto script = dir.path / "load.py";
  {
    std::ofstream s(script);
    s << "import json, sys, torch\n"
         "d = torch.load(sys.argv[1], weights_only=True)\n"
         "out = {'format': d['format'], 'key': d['key'], 'checksum': d['checksum'], 'meta': dict(d['meta']),\n"
         "       'tensors': {k: {'dtype': str(t.dtype), 'shape': list(t.shape), 'values': t.flatten().tolist()}\n"
         "                   for k, t in d['tensors'].items()}}\n"
         "print(json.dumps(out))\n";
  }
  const auto out_path = dir.path / "out.json";
  const std::string cmd =
      "/usr/bin/python3 " + script.string() + " " + entry.string() + " > " + out_path.string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(out_path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(text);
  REQUIRE(rc == 0);
  nlohmann::json j = nlohmann::json::parse(text);
  CHECK(j["format"] == kEntryFormat);
  CHECK(j["key"] == key);
  CHECK(j["checksum"] == artifact_checksum(a));
  CHECK(j["meta"]["ref_text"] == "Hello, wörld");
  const std::map<std::string, std::string> torch_dtype = {{"u8", "torch.uint8"},    {"i16", "torch.int16"},
                                                          {"i32", "torch.int32"},   {"i64", "torch.int64"},
                                                          {"f32", "torch.float32"}, {"scalar", "torch.float32"}};
  REQUIRE(j["tensors"].size() == a.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    const auto& pt = j["tensors"][name];
    CHECK(pt["dtype"] == torch_dtype.at(name));
    CHECK(pt["shape"].get<std::vector<std::int64_t>>() == t.shape());
    std::vector<double> want;
    switch (t.dtype()) {
      case DType::uint8:
        for (auto v : t.values<std::uint8_t>()) want.push_back(v);
        break;
      case DType::int16:
        for (auto v : t.values<std::int16_t>()) want.push_back(v);
        break;
      case DType::int32:
        for (auto v : t.values<std::int32_t>()) want.push_back(v);
        break;
      case DType::int64:
        for (auto v : t.values<std::int64_t>()) want.push_back(static_cast<double>(v));
        break;
      case DType::float32:
        for (auto v : t.values<float>()) want.push_back(v);
        break;
    }
    CHECK(pt["values"].get<std::vector<double>>() == want);
  }
}

namespace {

/// A torch archive whose pickle is `pickle` (tensor records as given), as the entry writer packs one.
std::vector<char> archive_with_pickle(std::string_view pickle, const std::vector<std::string>& tensors = {}) {
  std::vector<ArchiveRecord> records;
  for (std::size_t i = 0; i < tensors.size(); ++i) records.push_back({"data/" + std::to_string(i), tensors[i]});
  records.push_back({"data.pkl", pickle});
  return pack_archive(records);
}

/// `bytes` with the first occurrence of `from` replaced by `to` (same length: offsets stay right).
std::vector<char> patched(std::vector<char> bytes, std::string_view from, std::string_view to) {
  REQUIRE(from.size() == to.size());
  auto at = std::search(bytes.begin(), bytes.end(), from.begin(), from.end());
  REQUIRE(at != bytes.end());
  std::copy(to.begin(), to.end(), at);
  return bytes;
}

/// The central directory record of `name` in the archive `bytes` (its offset).
std::size_t directory_record(const std::vector<char>& bytes, std::string_view name) {
  for (std::size_t i = 0; i + 46 + name.size() <= bytes.size(); ++i)
    if (std::memcmp(bytes.data() + i, "PK\x01\x02", 4) == 0 &&
        std::string_view(bytes.data() + i + 46, name.size()) == name)
      return i;
  FAIL("no central directory record for " << name);
  return 0;
}

void put_le(std::vector<char>& bytes, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) bytes[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

/// `bytes` (ending with an end record without a comment) with a zip64 end record and its locator
/// before the end record, the locator counting `disks` disks.
std::vector<char> as_zip64(std::vector<char> bytes, std::uint32_t disks) {
  const std::size_t end = bytes.size() - 22;
  REQUIRE(read_le(bytes, end, 4) == 0x06054b50);
  std::vector<char> z(56 + 20, 0);
  put_le(z, 0, 0x06064b50, 4);  // zip64 end record, 44 bytes after its size field
  put_le(z, 4, 44, 8);
  put_le(z, 24, read_le(bytes, end + 8, 2), 8);   // records on this disk
  put_le(z, 32, read_le(bytes, end + 10, 2), 8);  // records
  put_le(z, 40, read_le(bytes, end + 12, 4), 8);  // directory size
  put_le(z, 48, read_le(bytes, end + 16, 4), 8);  // directory offset
  put_le(z, 56, 0x07064b50, 4);                   // locator: where the zip64 end record is, disks
  put_le(z, 64, end, 8);
  put_le(z, 72, disks, 4);
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(end), z.begin(), z.end());
  return bytes;
}

/// Decodes `bytes` in a child process; returns the refusal message (or "accepted") and the growth
/// of the child's peak RSS while decoding, in KB.
std::pair<std::string, long> decode_in_child(const std::vector<char>& bytes) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    const long before = u.ru_maxrss;
    std::string message = "accepted";
    try {
      decode_entry(bytes, "");
    } catch (const EntryError& e) {
      message = e.what();
    } catch (const std::exception& e) {
      message = std::string("not an EntryError: ") + e.what();
    }
    ::getrusage(RUSAGE_SELF, &u);
    const std::string out = std::to_string(u.ru_maxrss - before) + " " + message;
    ::_exit(::write(fds[1], out.data(), out.size()) == static_cast<ssize_t>(out.size()) ? 0 : 1);
  }
  ::close(fds[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const auto space = text.find(' ');
  REQUIRE(space != std::string::npos);
  return {text.substr(space + 1), std::stol(text.substr(0, space))};
}

}  // namespace

TEST_CASE("hostile archives are refused before LibTorch allocates what they declare (fuzz_disk_entry findings)") {
  // Each of these made LibTorch 1.13 misbehave when it read the file first: allocate and zero a
  // declared 4 GiB string, reserve memo slots for a declared index, pop values from an empty stack,
  // read tensor data past its record, or leak its zip state when its reader refused the archive.
  SECTION("a string declaring 4 GiB in a pickle of 12 bytes") {
    const auto [message, peak_kb] =
        decode_in_child(archive_with_pickle(std::string("\x80\x02X\xfe\xff\xff\xff"
                                                        "abc.",
                                                        12)));
    CHECK_THAT(message, Catch::Contains("unreadable pickle: argument runs past the end at offset 2"));
    CHECK(peak_kb < 64 * 1024);
  }
  SECTION("a memo index of 2^31") {
    const auto [message, peak_kb] = decode_in_child(archive_with_pickle(std::string("\x80\x02}r\xff\xff\xff\x7f.", 9)));
    CHECK_THAT(message, Catch::Contains("memo index 2147483647 out of sequence"));
    CHECK(peak_kb < 64 * 1024);
  }
  SECTION("tuples built from an empty stack") {
    CHECK_THROWS_WITH(decode_entry(archive_with_pickle(std::string("\x80\x02}(\x87\x87\x87\x32\x30.", 10)), ""),
                      Catch::Contains("stack underflow at offset 4"));
    CHECK_THROWS_WITH(decode_entry(archive_with_pickle("\x80\x02t."), ""), Catch::Contains("no MARK"));
    CHECK_THROWS_WITH(decode_entry(archive_with_pickle("\x80\x02}(K\x01u."), ""),
                      Catch::Contains("odd number of dict items"));
    CHECK_THROWS_WITH(decode_entry(archive_with_pickle("\x80\x02}K\x01."), ""), Catch::Contains("STOP with 2 values"));
    CHECK_THROWS_WITH(decode_entry(archive_with_pickle("\x80\x02}"), ""), Catch::Contains("no STOP"));
    CHECK_THROWS_WITH(decode_entry(archive_with_pickle("\x80\x02}\xff."), ""), Catch::Contains("unknown opcode 255"));
  }
  SECTION("a storage claiming more elements than its record holds") {
    Artifact a;
    a.tensors["codes"] = HostTensor::from_vector<std::int16_t>({2, 20}, std::vector<std::int16_t>(40, 7));
    std::vector<char> bytes = encode_entry("k", a);
    REQUIRE(decode_entry(bytes, "k") == a);
    // numel 40 -> 255 in the storage's persistent id, shape (2, 20) -> (2, 127), stride (20, 1) -> (127, 1):
    // consistent for LibTorch, but the record holds 80 bytes and the tensor would read 508.
    bytes = patched(bytes, "cpuq\x09K\x28", "cpuq\x09K\xff");
    bytes = patched(bytes, "(K\x02K\x14t(K\x14K\x01t", "(K\x02K\x7ft(K\x7fK\x01t");
    CHECK_THROWS_WITH(decode_entry(bytes, "k"),
                      Catch::Contains("tensor 'codes' claims more data than its record holds"));
  }
  SECTION("a compressed record declaring 4 GiB") {
    std::vector<char> bytes = encode_entry("k", fake_artifact("x"));
    const std::size_t dir = directory_record(bytes, "archive/data.pkl");
    put_le(bytes, dir + 10, 8, 2);            // deflate
    put_le(bytes, dir + 24, 0xfffffff0u, 4);  // uncompressed size
    const auto [message, peak_kb] = decode_in_child(bytes);
    CHECK_THAT(message, Catch::Contains("not a readable torch archive: record 2 is compressed"));
    CHECK(peak_kb < 64 * 1024);
  }
  SECTION("archives LibTorch's reader refuses while opening them (it leaked its zip state then)") {
    std::vector<char> bytes = encode_entry("k", fake_artifact("x"));
    // Names are matched as the zip reader matches them, ignoring case.
    CHECK(decode_entry(
              patched(patched(bytes, "archive/version", "archive/VERSION"), "archive/version", "archive/VERSION"),
              "k") == fake_artifact("x"));
    CHECK_THROWS_WITH(
        decode_entry(
            patched(patched(bytes, "archive/version", "archive/vers1on"), "archive/version", "archive/vers1on"), "k"),
        Catch::Contains("no version record"));
    std::vector<char> encrypted = bytes;
    put_le(encrypted, directory_record(encrypted, "archive/version") + 8, 0x40, 2);
    CHECK_THROWS_WITH(decode_entry(encrypted, "k"), Catch::Contains("record 3 is encrypted"));
    std::vector<char> masked = bytes;  // its local header masked
    put_le(masked, directory_record(masked, "archive/data.pkl") + 8, 0x2000, 2);
    CHECK_THROWS_WITH(decode_entry(masked, "k"), Catch::Contains("record 2 is encrypted"));
    std::vector<char> other_disk = bytes;
    put_le(other_disk, directory_record(other_disk, "archive/version") + 34, 3, 2);
    CHECK_THROWS_WITH(decode_entry(other_disk, "k"), Catch::Contains("record 3 is on another disk"));
    CHECK(decode_entry(as_zip64(bytes, 1), "k") == fake_artifact("x"));
    CHECK(read_archive_with_libtorch(as_zip64(bytes, 1)) == read_archive(bytes));
    CHECK_THROWS_WITH(decode_entry(as_zip64(bytes, 2), "k"), Catch::Contains("spans several disks"));
    std::vector<char> folder = bytes;  // the reader reads nothing for a folder: the buffer stays uninitialised
    put_le(folder, directory_record(folder, "archive/version") + 38, 0x10, 4);
    CHECK_THROWS_WITH(decode_entry(folder, "k"), Catch::Contains("record 3 is a folder"));
    std::vector<char> folderless = bytes;
    const std::size_t first = directory_record(folderless, "archive/data/0");
    folderless[first + 46 + 7] = folderless[first + 46 + 12] = '_';  // "archive_data_0"
    CHECK_THROWS_WITH(decode_entry(folderless, "k"), Catch::Contains("first record is not in a folder"));
  }
}

TEST_CASE("artifact parity: integers element by element, floats by their largest difference") {
  Artifact a;
  a.tensors["codes"] = HostTensor::from_vector<std::int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  a.tensors["spk"] = HostTensor::from_vector<float>({2}, {0.5f, -1.0f});
  a.meta["ref_text"] = "hi";
  CHECK(artifact_parity(a, a).identical);

  Artifact b = a;
  b.tensors["codes"].values<std::int64_t>()[4] = 7;  // one code
  b.tensors["spk"].values<float>()[1] = -1.25f;
  ArtifactParity p = artifact_parity(b, a);
  CHECK_FALSE(p.identical);
  CHECK(p.mismatched_codes == 1);
  CHECK(p.max_abs_diff == Approx(0.25));

  Artifact c = a;
  c.tensors["codes"] = HostTensor::from_vector<std::int64_t>({2, 2}, {1, 2, 4, 5});  // padded shape
  c.meta["ref_text"] = "hello";
  p = artifact_parity(c, a);
  CHECK(p.mismatched_codes == 6 + 1);
  CHECK(p.max_abs_diff == 0);
}
