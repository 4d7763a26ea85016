// The direct writer against LibTorch's: the same entry must be the same bytes. The reference below is
// what write_entry_archive did through LibTorch before the direct writer (its Pickler without type
// tags, its PyTorchStreamWriter), kept here only to compare with.
#include <ATen/ops/empty.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "store/direct_writer.hpp"
#include "store/entry_archive.hpp"
#include "store/entry_format.hpp"

using namespace refenc;
using namespace refenc::store;

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

std::vector<char> libtorch_pack(const std::vector<ArchiveRecord>& records) {
  std::vector<char> out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* buf, size_t n) -> size_t {
    const char* p = static_cast<const char*>(buf);
    out.insert(out.end(), p, p + n);
    return n;
  });
  for (const ArchiveRecord& r : records) writer.writeRecord(r.name, r.bytes.data(), r.bytes.size());
  writer.writeEndOfFile();
  return out;
}

std::vector<char> libtorch_entry(std::int64_t format, const std::string& key_text, const Artifact& artifact,
                                 const std::string& checksum) {
  c10::Dict<std::string, at::Tensor> tensors;
  for (const auto& [name, t] : artifact.tensors) {
    at::Tensor x = at::empty(t.shape(), at::TensorOptions().dtype(scalar_type(t.dtype())));
    if (t.nbytes()) std::memcpy(x.data_ptr(), t.raw(), t.nbytes());
    tensors.insert(name, x);
  }
  c10::Dict<std::string, std::string> meta;
  for (const auto& [k, v] : artifact.meta) meta.insert(k, v);
  c10::impl::GenericDict entry(c10::StringType::get(), c10::AnyType::get());
  entry.insert(std::string("format"), format);
  entry.insert(std::string("key"), key_text);
  entry.insert(std::string("tensors"), tensors);
  entry.insert(std::string("meta"), meta);
  entry.insert(std::string("checksum"), checksum);
  std::string pickle;
  torch::jit::Pickler pickler([&](const char* buf, size_t n) { pickle.append(buf, n); }, nullptr, nullptr, nullptr,
                              nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(entry);
  pickler.stop();
  std::vector<torch::jit::WriteableTensorData> data;
  for (const at::Tensor& t : pickler.tensorData()) data.push_back(torch::jit::getWriteableTensorData(t));
  std::vector<ArchiveRecord> records;
  for (std::size_t i = 0; i < data.size(); ++i)
    records.push_back({"data/" + std::to_string(i), std::string_view(data[i].data(), data[i].sizeInBytes())});
  records.push_back({"data.pkl", pickle});
  return libtorch_pack(records);
}

/// A tensor of `dtype` and `shape` whose bytes are a pattern of `seed`.
HostTensor patterned(DType dtype, std::vector<std::int64_t> shape, unsigned seed) {
  HostTensor t(dtype, std::move(shape));
  for (std::size_t i = 0; i < t.nbytes(); ++i) t.raw()[i] = static_cast<std::byte>((i * 131 + seed * 7) & 0xff);
  if (dtype == DType::float32)  // keep the floats finite: the pattern's bytes are the point, not NaNs
    for (float& f : t.values<float>()) f = static_cast<float>(seed) * 0.25f - 3.0f;
  return t;
}

/// "" when `a` and `b` are the same bytes, else where they first differ and the bytes around it.
std::string difference(const std::vector<char>& a, const std::vector<char>& b) {
  std::size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  if (at == a.size() && at == b.size()) return "";
  auto hex = [&](const std::vector<char>& v) {
    std::string out;
    for (std::size_t i = at - std::min<std::size_t>(at, 8); i < std::min(v.size(), at + 24); ++i) {
      static constexpr char digits[] = "0123456789abcdef";
      out += digits[(static_cast<unsigned char>(v[i]) >> 4)];
      out += digits[static_cast<unsigned char>(v[i]) & 15];
      out += i + 1 == at ? '|' : ' ';
    }
    return out;
  };
  return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + ", first difference at " +
         std::to_string(at) + ":\n  " + hex(a) + "\n  " + hex(b);
}

void same_bytes(std::int64_t format, const std::string& key, const Artifact& a) {
  const std::string checksum = artifact_checksum(a);
  const std::vector<char> direct = write_entry_archive(format, key, a, checksum);
  const std::vector<char> reference = libtorch_entry(format, key, a, checksum);
  CHECK(difference(direct, reference) == "");
}

}  // namespace

TEST_CASE("the direct writer writes the bytes LibTorch writes", "[direct_writer]") {
  SECTION("every dtype, 0-d, empty and shaped tensors") {
    Artifact a;
    unsigned seed = 1;
    for (DType d : {DType::uint8, DType::int16, DType::int32, DType::int64, DType::float32}) {
      const std::string n(to_string(d));
      a.tensors[n + "_scalar"] = patterned(d, {}, seed++);
      a.tensors[n + "_empty"] = patterned(d, {0}, seed++);
      a.tensors[n + "_empty_inside"] = patterned(d, {3, 0, 2}, seed++);
      a.tensors[n + "_matrix"] = patterned(d, {10, 37}, seed++);
      a.tensors[n + "_4d"] = patterned(d, {2, 3, 1, 5}, seed++);
    }
    a.meta["ref_text"] = "Hello there, généreux voix";
    a.meta["python_form"] = "dict";
    same_bytes(1, R"({"artifact_kind":"codes","input_key":"x"})", a);
  }
  SECTION("no tensors, no metadata") { same_bytes(1, "k", Artifact{}); }
  SECTION("integers of every width in shapes and the format number") {
    for (std::int64_t format : {0LL, 1LL, 255LL, 256LL, 65535LL, 65536LL, -1LL, 2147483647LL, 2147483648LL,
                                -2147483648LL, -2147483649LL}) {
      Artifact a;
      a.tensors["wide"] = patterned(DType::uint8, {1, 70000}, 3);
      same_bytes(format, "key", a);
    }
  }
  SECTION("strings fetched from the memo: metadata equal to keys, names, devices and record numbers") {
    Artifact a;
    a.tensors["0"] = patterned(DType::int64, {4}, 1);
    a.tensors["storage"] = patterned(DType::int64, {4}, 2);
    a.meta["cpu"] = "storage";
    a.meta["format"] = "key";
    a.meta["same"] = "same";
    a.meta["tensors"] = "0";
    same_bytes(1, "meta", a);
  }
  SECTION("more than 255 memo entries, long strings, sizes at each alignment") {
    Artifact a;
    for (int i = 0; i < 300; ++i)
      a.tensors["t" + std::to_string(i)] = patterned(DType::int16, {static_cast<std::int64_t>(i % 67)}, 5u + i);
    a.meta["long"] = std::string(70000, 'x');
    same_bytes(1, std::string(300, 'k'), a);
  }
  SECTION("a large tensor") {
    Artifact a;
    a.tensors["codes"] = patterned(DType::float32, {1024, 1024}, 9);
    same_bytes(1, "big", a);
  }
}

TEST_CASE("pack_archive packs records as PyTorchStreamWriter does", "[direct_writer]") {
  const std::string pk = "\x80\x02K\x01.", blob(1000, '\7'), empty;
  SECTION("data, then the version record") {
    std::vector<ArchiveRecord> r{{"data/0", blob}, {"data.pkl", pk}, {"data/1", empty}};
    CHECK(difference(pack_archive(r), libtorch_pack(r)) == "");
  }
  SECTION("a version record of its own is kept and not added") {
    std::vector<ArchiveRecord> r{{"data.pkl", pk}, {"version", "7\n"}};
    CHECK(difference(pack_archive(r), libtorch_pack(r)) == "");
    std::vector<ArchiveRecord> d{{"data.pkl", pk}, {".data/version", "9\n"}};
    CHECK(difference(pack_archive(d), libtorch_pack(d)) == "");
  }
  SECTION("names of every length around the alignment") {
    for (int n = 1; n < 140; ++n) {
      const std::string data = blob.substr(0, static_cast<std::size_t>(n) * 3);
      std::vector<ArchiveRecord> r{{std::string(static_cast<std::size_t>(n), 'n'), data}, {"data.pkl", pk}};
      REQUIRE(difference(pack_archive(r), libtorch_pack(r)) == "");
    }
  }
  SECTION("a name given twice is refused") {
    std::vector<ArchiveRecord> r{{"data.pkl", pk}, {"data.pkl", pk}};
    CHECK_THROWS_WITH(pack_archive(r), Catch::Contains("'data.pkl' given twice"));
  }
}

TEST_CASE("an entry the direct writer writes is read back by the direct reader", "[direct_writer]") {
  Artifact a;
  a.tensors["codes"] = patterned(DType::int16, {10, 216}, 4);
  a.tensors["embedding"] = patterned(DType::float32, {192}, 5);
  a.meta["ref_text"] = "hello";
  CHECK(decode_entry(encode_entry("k", a), "k") == a);
}
