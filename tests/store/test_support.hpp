// Helpers for the store tests: a temporary root, a tiny fake hook, a log capture.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "core/reference_encode_hook.hpp"
#include "core/reference_encode_service.hpp"
#include "core/sha256.hpp"
#include "store/artifact.hpp"

namespace refenc::store::test {

/// A fresh folder under the system temp folder, removed (permissions restored) on destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "refenc-store-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all, std::filesystem::perm_options::add,
                                   ec);
    std::filesystem::permissions(path, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

/// The artifact the fake hook makes for `text`: int64 codes [2, 16 + size] and a float embedding.
inline Artifact fake_artifact(const std::string& text) {
  const std::int64_t n = 16 + static_cast<std::int64_t>(text.size());
  std::vector<std::int64_t> codes(static_cast<std::size_t>(2 * n));
  std::uint32_t h = 2166136261u;
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::int64_t>((h + i * 7919u) % 1024u);
  std::vector<float> emb(8);
  for (std::size_t i = 0; i < emb.size(); ++i) emb[i] = static_cast<float>(h % 97u) / 7.0f + static_cast<float>(i);
  Artifact a;
  a.tensors["codes"] = HostTensor::from_vector<std::int64_t>({2, n}, codes);
  a.tensors["speaker"] = HostTensor::from_vector<float>({8}, emb);
  a.meta["ref_text"] = text;
  return a;
}

inline ReferenceEncodeKey fake_key(const std::string& text, const std::string& model = "fake-model") {
  return {model, "r1", "fake-encoder", "cfg0", "codes", sha256_hex(text), ""};
}

/// Keys and encodes strings; counts encodes.
struct FakeHook : ReferenceEncodeHook<std::string, Artifact, Artifact> {
  std::atomic<int> encodes{0};
  std::optional<ReferenceEncodeKey> cache_key(const std::string& s) override { return fake_key(s); }
  Artifact encode_one(const std::string& s) override {
    ++encodes;
    return fake_artifact(s);
  }
  Artifact store_artifact(const Artifact& a) override { return a.compacted(); }
  Artifact load_artifact(const Artifact& s) override { return s.widened(); }
  std::size_t stored_bytes(const Artifact& s) const override { return s.byte_size(); }
};

using FakeService = ReferenceEncodeService<std::string, Artifact, Artifact>;

/// Captures warnings while alive (restores the default sink afterwards).
struct LogCapture {
  std::mutex mutex;
  std::vector<std::string> warnings;
  LogCapture() {
    log::set_sink([this](log::Level level, std::string_view m) {
      if (level < log::Level::warn) return;
      std::lock_guard lock(mutex);
      warnings.emplace_back(m);
    });
  }
  ~LogCapture() { log::set_sink({}); }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return warnings.size();
  }
};

inline std::vector<char> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& p, const std::vector<char>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline bool running_as_root() { return ::geteuid() == 0; }

}  // namespace refenc::store::test
