// What the checkpoint tests share: a fixture's expected outputs, a temporary folder and a safetensors writer,
// so that a test can make every kind of bad file from a fixture's tensors, and the one-line error a bad
// checkpoint gives. It uses ATen and then includes Catch (LibTorch's logging defines a CHECK macro, undefined
// here first): include it last, from tests outside the unity batches only.
//
//   const ExpectedFile expected(fixtures / "expected.safetensors");
//   TempDir dir;
//   WeightMap w = ...;  w.erase("encoder.block.0.conv.bias");
//   write_safetensors(dir.path / "missing.safetensors", w);
//   CHECK_THAT(load_error("fish-s2-pro", {.checkpoint = (dir.path / "missing.safetensors").string()}), ...);
#pragma once

#include <ATen/ATen.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "encoders/checkpoint.hpp"
#include "encoders/encoder_hook.hpp"
#include "encoders/network.hpp"

// LibTorch's logging defines a CHECK macro; Catch's is the one meant in the tests.
#undef CHECK
#include <catch2/catch.hpp>

namespace refenc::encoders::test {

/// A scratch folder removed at scope exit.
struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("refenc_ckpt_" + std::to_string(::getpid()) + "_" +
                                std::to_string(reinterpret_cast<std::uintptr_t>(this)));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

/// Writes `tensors` as a safetensors file (every tensor float32 unless it is int64).
inline void write_safetensors(const std::filesystem::path& path, const WeightMap& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [name, t] : tensors) {
    at::Tensor c = t.scalar_type() == at::kLong ? t.contiguous() : t.to(at::kFloat).contiguous();
    const std::size_t begin = data.size();
    data.append(static_cast<const char*>(c.data_ptr()), c.nbytes());
    header[name] = {{"dtype", c.scalar_type() == at::kLong ? "I64" : "F32"},
                    {"shape", c.sizes().vec()},
                    {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary);
  std::uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << h << data;
}

/// A fixture's `expected.safetensors`: what upstream's own code fed and gave, as tensors and plain vectors.
struct ExpectedFile {
  explicit ExpectedFile(const std::filesystem::path& path) : file(read_checkpoint(path.string(), {})) {}
  at::Tensor tensor(const std::string& name) const { return file.tensors.at(name).contiguous(); }
  std::vector<float> floats(const std::string& name) const {
    const at::Tensor t = tensor(name);
    return {t.data_ptr<float>(), t.data_ptr<float>() + t.numel()};
  }
  /// An int64 tensor's values, and its shape into `shape` when given.
  std::vector<std::int64_t> ints(const std::string& name, std::vector<std::int64_t>* shape = nullptr) const {
    const at::Tensor t = tensor(name);
    if (shape) *shape = t.sizes().vec();
    return {t.data_ptr<std::int64_t>(), t.data_ptr<std::int64_t>() + t.numel()};
  }
  CheckpointFile file;
};

/// The error that building `model`'s network from `options` gives, checked to be one bad-input line; the
/// test fails when the network builds.
inline std::string load_error(std::string_view model, const EncoderOptions& options) {
  try {
    make_network(model, options);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::bad_input);
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);
    return what;
  }
  FAIL("the checkpoint " << options.checkpoint << " loaded");
  return {};
}

/// The tensors of a checkpoint file, as a plain map of owned copies.
inline WeightMap owned_tensors(const std::filesystem::path& path) {
  WeightMap out;
  for (const auto& [name, t] : read_checkpoint(path.string(), {}).tensors) out[name] = t.clone();
  return out;
}

}  // namespace refenc::encoders::test
