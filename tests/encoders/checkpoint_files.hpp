// Scratch checkpoints for the checkpoint tests: a temporary folder and a safetensors writer, so that a test
// can make every kind of bad file from a fixture's tensors (uses ATen: include from tests outside the
// unity batches only).
//
//   TempDir dir;
//   WeightMap w = ...;  w.erase("encoder.block.0.conv.bias");
//   write_safetensors(dir.path / "missing.safetensors", w);
#pragma once

#include <ATen/ATen.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "encoders/checkpoint.hpp"

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

/// The tensors of a checkpoint file, as a plain map of owned copies.
inline WeightMap owned_tensors(const std::filesystem::path& path) {
  WeightMap out;
  for (const auto& [name, t] : read_checkpoint(path.string(), {}).tensors) out[name] = t.clone();
  return out;
}

}  // namespace refenc::encoders::test
