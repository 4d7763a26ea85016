#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "store/direct_reader.hpp"
#include "store/direct_writer.hpp"
#include "store/entry_archive.hpp"
#include "store/entry_format.hpp"
#include "store/libtorch_reader.hpp"
#include "test_support.hpp"

using namespace refenc;
using namespace refenc::store;
using namespace refenc::store::test;

namespace {

std::vector<ZipRecord> records_of(const std::vector<char>& bytes) {
  return check_zip_records(bytes, 0, std::numeric_limits<std::uint64_t>::max());
}

std::optional<PickledValue> direct(const std::vector<char>& bytes) { return read_archive_directly(bytes, records_of(bytes)); }

/// The data of record `name` (without the archive's folder) in the torch archive `bytes`.
std::string record(const std::vector<char>& bytes, std::string_view name) {
  for (const ZipRecord& r : records_of(bytes)) {
    if (r.name.substr(r.name.find('/') + 1) != name) continue;
    const std::optional<std::span<const char>> data = record_data(bytes, r);
    REQUIRE(data);
    return std::string(data->data(), data->size());
  }
  FAIL("no record " << name);
  return {};
}

/// The entry `bytes` packed again with the first `from` in its pickle replaced by `to` (CRCs stay right).
std::vector<char> with_pickle_patched(const std::vector<char>& bytes, std::string_view from, std::string_view to,
                                      int tensors) {
  std::string pickle = record(bytes, "data.pkl");
  const std::size_t at = pickle.find(from);
  REQUIRE(at != std::string::npos);
  pickle.replace(at, from.size(), to);
  std::vector<std::string> data;
  for (int i = 0; i < tensors; ++i) data.push_back(record(bytes, "data/" + std::to_string(i)));
  std::vector<ArchiveRecord> records;
  for (int i = 0; i < tensors; ++i) records.push_back({"data/" + std::to_string(i), data[static_cast<std::size_t>(i)]});
  records.push_back({"data.pkl", pickle});
  return pack_archive(records);
}

Artifact varied(int tensors, std::size_t elements, std::size_t text) {
  Artifact a;
  for (int i = 0; i < tensors; ++i) {
    std::vector<std::int16_t> v(elements);
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<std::int16_t>(k * 31 + static_cast<std::size_t>(i));
    a.tensors["t" + std::to_string(i)] =
        HostTensor::from_vector<std::int16_t>({2, static_cast<std::int64_t>(elements / 2)}, v);
  }
  a.meta["ref_text"] = std::string(text, 'x') + "é";
  a.meta["model"] = "fish-s2-pro";
  return a;
}

}  // namespace

TEST_CASE("the direct reader reads every entry the writer makes, as LibTorch's reader does") {
  Artifact dtypes;
  dtypes.tensors["u8"] = HostTensor::from_vector<std::uint8_t>({3}, std::vector<std::uint8_t>{0, 7, 255});
  dtypes.tensors["i16"] = HostTensor::from_vector<std::int16_t>({2, 3}, std::vector<std::int16_t>{-5, 0, 5, 9, -9, 32767});
  dtypes.tensors["i32"] = HostTensor::from_vector<std::int32_t>({2}, std::vector<std::int32_t>{-70000, 70000});
  dtypes.tensors["i64"] = HostTensor::from_vector<std::int64_t>({1, 2}, std::vector<std::int64_t>{1ll << 40, -3});
  dtypes.tensors["f32"] = HostTensor::from_vector<float>({2, 2}, std::vector<float>{0.5f, -1.25f, 3e7f, 0.0f});
  dtypes.tensors["empty"] = HostTensor(DType::int16, {0, 4});
  dtypes.tensors["empty_last"] = HostTensor(DType::float32, {3, 0});
  dtypes.tensors["scalar"] = HostTensor::from_vector<float>({}, std::vector<float>{2.5f});
  dtypes.meta["ref_text"] = "Hello, wörld";
  dtypes.meta["empty"] = "";

  const std::vector<std::pair<const char*, Artifact>> artifacts = {
      {"every dtype and shape", dtypes},
      {"a fake artifact", fake_artifact("direct")},
      {"an artifact without tensors or metadata", Artifact{}},
      {"300 tensors (memo indices past 255)", varied(300, 4, 3)},
      {"a tensor of 200000 elements and a text of 70000 bytes", varied(1, 200000, 70000)},
  };
  const std::string key = fake_key("direct").canonical();
  for (const auto& [what, artifact] : artifacts) {
    // Format numbers of every integer width the pickler writes.
    for (std::int64_t format : {std::int64_t{1}, std::int64_t{300}, std::int64_t{70000}, std::int64_t{-5},
                                std::int64_t{1} << 40}) {
      INFO(what << ", format " << format);
      const std::vector<char> bytes = write_entry_archive(format, key, artifact, artifact_checksum(artifact));
      const std::optional<PickledValue> got = direct(bytes);
      REQUIRE(got);
      CHECK(*got == read_archive_with_libtorch(bytes));
      CHECK(*got == read_archive(bytes));
    }
    const std::vector<char> bytes = encode_entry(key, artifact);
    CHECK(decode_entry(bytes, key) == artifact);
  }
}

TEST_CASE("what the writer never makes is left to LibTorch's reader, which answers as before") {
  SECTION("a list, a float and None as values: LibTorch's reader gives them as other") {
    const std::vector<char> bytes =
        pack_archive(std::vector<ArchiveRecord>{{"data.pkl", std::string_view("\x80\x02}(X\x01\x00\x00\x00" "a]"
                                                                              "X\x01\x00\x00\x00" "bN" "u.", 21)}});
    CHECK_FALSE(direct(bytes));
    const PickledValue v = read_archive(bytes);
    REQUIRE(v.kind == PickledValue::Kind::dict);
    REQUIRE(v.keys.size() == 2);
    CHECK(v.values[0].kind == PickledValue::Kind::other);
    CHECK(v.values[1].kind == PickledValue::Kind::other);
  }
  SECTION("in a program that links no LibTorch reader, such an archive is unreadable, and says why") {
    const std::vector<char> bytes =
        pack_archive(std::vector<ArchiveRecord>{{"data.pkl", std::string_view("\x80\x02}(X\x01\x00\x00\x00" "a]"
                                                                              "X\x01\x00\x00\x00" "bN" "u.", 21)}});
    set_foreign_archive_reader(nullptr);
    CHECK_THROWS_WITH(read_archive(bytes), Catch::Contains("links no LibTorch reader"));
    const Artifact a = varied(2, 10, 5);
    CHECK(decode_entry(encode_entry("k", a), "k") == a);  // what refenc writes needs none
    set_foreign_archive_reader(&read_archive_with_libtorch);
    CHECK(read_archive(bytes).kind == PickledValue::Kind::dict);
  }
  SECTION("a dict item set by SETITEM: LibTorch's reader refuses the opcode, so the direct reader does too") {
    const std::vector<char> bytes = pack_archive(
        std::vector<ArchiveRecord>{{"data.pkl", std::string_view("\x80\x02}X\x01\x00\x00\x00" "aK\x01" "s.", 14)}});
    CHECK_FALSE(direct(bytes));
    CHECK_THROWS_AS(read_archive(bytes), EntryError);
  }
  SECTION("a key given twice: LibTorch's reader keeps its last value") {
    const std::vector<char> bytes = pack_archive(std::vector<ArchiveRecord>{
        {"data.pkl", std::string_view("\x80\x02}(X\x01\x00\x00\x00" "aK\x01" "X\x01\x00\x00\x00" "aK\x02" "u.", 24)}});
    CHECK_FALSE(direct(bytes));
    const PickledValue v = read_archive(bytes);
    REQUIRE(v.keys.size() == 1);
    CHECK(v.values[0].integer == 2);
  }
  SECTION("a string fetched from the memo over and over: the direct reader does not copy it 5000 times") {
    std::string pickle = std::string("\x80\x02(X\x10\x27\x00\x00", 8) + std::string(10000, 's') + std::string("q\0", 2);
    for (int i = 0; i < 5000; ++i) pickle += std::string("h\0", 2);
    pickle += "t.";
    const std::vector<char> bytes = pack_archive(std::vector<ArchiveRecord>{{"data.pkl", pickle}});
    CHECK_FALSE(direct(bytes));
    CHECK(read_archive(bytes).kind == PickledValue::Kind::other);  // a tuple, for LibTorch's reader
  }
  Artifact one;
  one.tensors["codes"] = HostTensor::from_vector<std::int16_t>({2, 3}, std::vector<std::int16_t>{1, 2, 3, 4, 5, 6});
  const std::vector<char> entry = encode_entry("k", one);
  SECTION("a strided view: LibTorch's reader names the problem") {
    const std::vector<char> bytes = with_pickle_patched(entry, "(K\x03K\x01t", "(K\x01K\x02t", 1);
    CHECK_FALSE(direct(bytes));
    CHECK_THROWS_WITH(decode_entry(bytes, "k"), Catch::Contains("tensor 'codes' is not contiguous"));
  }
  SECTION("a tensor that requires grad: LibTorch's reader refuses it on integers") {
    const std::vector<char> bytes = with_pickle_patched(entry, "t\x89", "t\x88", 1);
    CHECK_FALSE(direct(bytes));
    CHECK_THROWS_WITH(decode_entry(bytes, "k"), Catch::Contains("unreadable archive"));
  }
  SECTION("a record whose data does not match its CRC-32: read as LibTorch reads it, refused by the checksum") {
    std::vector<char> bytes = entry;
    const std::string data = record(entry, "data/0");
    auto at = std::search(bytes.begin(), bytes.end(), data.begin(), data.end());
    REQUIRE(at != bytes.end());
    *at ^= 1;
    const std::optional<PickledValue> got = direct(bytes);
    REQUIRE(got);
    CHECK(*got == read_archive_with_libtorch(bytes));
    CHECK_THROWS_WITH(decode_entry(bytes, "k"), Catch::Contains("checksum mismatch"));
  }
  SECTION("a storage of another size than its record, and one on another device") {
    CHECK_FALSE(direct(with_pickle_patched(entry, "cpuq\x09K\x06", "cpuq\x09K\x05", 1)));
    using namespace std::string_view_literals;
    CHECK_FALSE(direct(with_pickle_patched(entry, "X\x03\x00\x00\x00" "cpu"sv, "X\x03\x00\x00\x00" "mps"sv, 1)));
  }
}
