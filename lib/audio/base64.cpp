#include "audio/base64.hpp"

#include "audio/payload_text.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace refenc::audio {
namespace {

constexpr std::uint8_t invalid = 0xff;
constexpr std::uint8_t space = 0xfe;

constexpr std::array<std::uint8_t, 256> make_table() {
  std::array<std::uint8_t, 256> t{};
  for (auto& v : t) v = invalid;
  constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = static_cast<std::uint8_t>(i);
  t['-'] = 62;
  t['_'] = 63;
  for (char c : {' ', '\t', '\n', '\r', '\f', '\v'}) t[static_cast<unsigned char>(c)] = space;
  return t;
}
constexpr auto table = make_table();

std::string describe_char(unsigned char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  static constexpr char hex[] = "0123456789abcdef";
  return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
}

[[noreturn]] void malformed(std::string_view what, const std::string& reason) {
  throw Error(ErrorKind::bad_input, std::string(what) + ": malformed base64: " + reason);
}

}  // namespace

std::size_t base64_decoded_size(std::string_view text, bool percent_escaped) {
  std::size_t symbols = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (percent_escaped && c == '%' && i + 2 < text.size() && hex_digit_value(text[i + 1]) >= 0 &&
        hex_digit_value(text[i + 2]) >= 0) {
      c = static_cast<unsigned char>(hex_digit_value(text[i + 1]) * 16 + hex_digit_value(text[i + 2]));
      i += 2;
    }
    symbols += table[c] != space && c != '=';
  }
  return symbols / 4 * 3 + (symbols % 4) * 3 / 4;
}

std::string decode_base64(std::string_view text, std::string_view what, std::size_t max_bytes) {
  std::size_t size = base64_decoded_bound(text.size());
  if (size > max_bytes) {
    size = base64_decoded_size(text);
    if (size > max_bytes) refuse_too_large(what, max_bytes);
  }
  std::string out;
  out.reserve(size);
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t symbols = 0, padding = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::uint8_t v = table[c];
    if (v == space) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (v == invalid) malformed(what, "invalid character " + describe_char(c) + " at offset " + std::to_string(i));
    if (padding > 0) malformed(what, "data after '=' padding at offset " + std::to_string(i));
    ++symbols;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
      if (out.size() > max_bytes) refuse_too_large(what, max_bytes);
    }
  }
  if (symbols % 4 == 1) malformed(what, "truncated (a dangling final character)");
  if (padding > 0 && (symbols + padding) % 4 != 0) malformed(what, "wrong amount of '=' padding");
  if (padding > 2) malformed(what, "too much '=' padding");
  return out;
}

}  // namespace refenc::audio
