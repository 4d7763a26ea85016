// SHA-256 (OpenSSL libcrypto) as lower-case hex: content identity and file names.
//
//   std::string id = refenc::sha256_hex(bytes);             // one shot
//   refenc::Sha256 h; h.update(a); h.update(b); id = h.hex_digest();   // streamed
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace refenc {

/// Incremental SHA-256. Not copyable; one object per digest.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::span<const std::byte> data);
  void update(std::string_view data);
  /// Finishes and returns the 64-character hex digest; the object must not be updated afterwards.
  std::string hex_digest();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string sha256_hex(std::span<const std::byte> data);
std::string sha256_hex(std::string_view data);

}  // namespace refenc
