// Artifact: an encoded reference as named host tensors plus string metadata, with no LibTorch.
//
// Encoders produce one (codes, speaker embeddings, the reference text), the memory and disk tiers
// store one, and the CLI and profiler read its shapes. A `HostTensor` is a dense, row-major,
// host-memory array with a dtype and a shape; conversions are exact or they throw.
//
//   Artifact a;
//   a.tensors["codes"] = HostTensor::from_vector<std::int64_t>({10, 216}, codes);
//   a.meta["ref_text"] = "Hello there";
//   Artifact stored = a.compacted();            // int64 codes become int16 when every value fits
//   Artifact mine = stored.widened();           // caller-owned copy, integer tensors back to int64
//   a.byte_size();                              // tensor data + metadata bytes
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/reference_encode_hook.hpp"

namespace refenc {

enum class DType { uint8, int16, int32, int64, float32 };

std::string_view to_string(DType dtype) noexcept;
/// Parses "uint8", "int16", "int32", "int64", "float32"; throws Error(bad_input) otherwise.
DType dtype_from_string(std::string_view name);
std::size_t element_size(DType dtype) noexcept;

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<std::uint8_t>() {
  return DType::uint8;
}
template <>
constexpr DType dtype_of<std::int16_t>() {
  return DType::int16;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::int32;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::int64;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::float32;
}

class HostTensor {
 public:
  HostTensor() = default;
  /// Zero-filled tensor of the given dtype and shape (every dimension >= 0).
  HostTensor(DType dtype, std::vector<std::int64_t> shape);

  template <class T>
  static HostTensor from_vector(std::vector<std::int64_t> shape, std::span<const T> values) {
    HostTensor t(dtype_of<T>(), std::move(shape));
    if (values.size() != static_cast<std::size_t>(t.numel()))
      throw Error(ErrorKind::config, "HostTensor: value count does not match shape");
    if (!values.empty()) std::memcpy(t.data_.data(), values.data(), values.size_bytes());
    return t;
  }
  template <class T>
  static HostTensor from_vector(std::vector<std::int64_t> shape, const std::vector<T>& values) {
    return from_vector<T>(std::move(shape), std::span<const T>(values));
  }

  DType dtype() const noexcept { return dtype_; }
  const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
  std::int64_t numel() const noexcept;
  std::size_t nbytes() const noexcept { return data_.size(); }
  std::byte* raw() noexcept { return data_.data(); }
  const std::byte* raw() const noexcept { return data_.data(); }

  /// Typed view; throws Error(config) when T is not the tensor's dtype.
  template <class T>
  std::span<const T> values() const {
    check_type(dtype_of<T>());
    return {reinterpret_cast<const T*>(data_.data()), static_cast<std::size_t>(numel())};
  }
  template <class T>
  std::span<T> values() {
    check_type(dtype_of<T>());
    return {reinterpret_cast<T*>(data_.data()), static_cast<std::size_t>(numel())};
  }

  /// A copy converted to `dtype`. Integer narrowing that would change a value, and float to integer,
  /// throw Error(config).
  HostTensor to(DType dtype) const;
  /// For integer tensors: a copy in the smallest signed integer dtype that holds every value
  /// (uint8 stays uint8). Float tensors are returned unchanged.
  HostTensor narrowed() const;
  /// "int64[10, 216]"
  std::string describe() const;

  friend bool operator==(const HostTensor&, const HostTensor&) = default;

 private:
  void check_type(DType want) const;
  DType dtype_ = DType::float32;
  std::vector<std::int64_t> shape_;
  std::vector<std::byte> data_;
};

struct Artifact {
  std::map<std::string, HostTensor> tensors;
  std::map<std::string, std::string> meta;

  /// Bytes of tensor data plus metadata keys and values: what the caches charge.
  std::size_t byte_size() const noexcept;
  /// Copy with integer tensors narrowed to their smallest lossless dtype (the stored form).
  Artifact compacted() const;
  /// Copy with integer tensors widened to int64 (the form callers receive).
  Artifact widened() const;
  /// The tensor `name`; throws Error(config) naming it when absent.
  const HostTensor& tensor(const std::string& name) const;

  friend bool operator==(const Artifact&, const Artifact&) = default;
};

/// How an artifact from a batch compares with the single encode of the same input: integer tensors
/// element by element (a missing tensor, a shape or dtype change counts every element of the larger
/// one, at least 1; a metadata difference counts 1), float tensors by their largest absolute difference.
ArtifactParity artifact_parity(const Artifact& batched, const Artifact& single);

}  // namespace refenc
