#include "core/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace refenc {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  if (!impl_->ctx || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: libcrypto initialisation failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(impl_->ctx); }

void Sha256::update(std::span<const std::byte> data) {
  if (!data.empty()) EVP_DigestUpdate(impl_->ctx, data.data(), data.size());
}

void Sha256::update(std::string_view data) { update(std::as_bytes(std::span(data.data(), data.size()))); }

std::string Sha256::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, md, &len);
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = digits[md[i] >> 4];
    out[2 * i + 1] = digits[md[i] & 15];
  }
  return out;
}

std::string sha256_hex(std::span<const std::byte> data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

}  // namespace refenc
