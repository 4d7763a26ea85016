#include "store/artifact.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace refenc {

std::string_view to_string(DType d) noexcept {
  switch (d) {
    case DType::uint8: return "uint8";
    case DType::int16: return "int16";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::float32: return "float32";
  }
  return "?";
}

DType dtype_from_string(std::string_view n) {
  for (DType d : {DType::uint8, DType::int16, DType::int32, DType::int64, DType::float32})
    if (to_string(d) == n) return d;
  throw Error(ErrorKind::bad_input, "unknown dtype '" + std::string(n) + "'");
}

std::size_t element_size(DType d) noexcept {
  switch (d) {
    case DType::uint8: return 1;
    case DType::int16: return 2;
    case DType::int32: return 4;
    case DType::int64: return 8;
    case DType::float32: return 4;
  }
  return 1;
}

HostTensor::HostTensor(DType dtype, std::vector<std::int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  std::int64_t n = 1;
  for (std::int64_t s : shape_) {
    if (s < 0) throw Error(ErrorKind::config, "HostTensor: negative dimension");
    if (s != 0 && n > std::numeric_limits<std::int64_t>::max() / s / 8)
      throw Error(ErrorKind::config, "HostTensor: shape too large");
    n *= s;
  }
  data_.resize(static_cast<std::size_t>(n) * element_size(dtype_));
}

std::int64_t HostTensor::numel() const noexcept {
  std::int64_t n = 1;
  for (std::int64_t s : shape_) n *= s;
  return n;
}

void HostTensor::check_type(DType want) const {
  if (want != dtype_)
    throw Error(ErrorKind::config,
                "HostTensor: is " + std::string(to_string(dtype_)) + ", not " + std::string(to_string(want)));
}

namespace {
bool is_integer(DType d) { return d != DType::float32; }

template <class F>
void visit(DType d, F&& f) {
  switch (d) {
    case DType::uint8: f(std::uint8_t{}); break;
    case DType::int16: f(std::int16_t{}); break;
    case DType::int32: f(std::int32_t{}); break;
    case DType::int64: f(std::int64_t{}); break;
    case DType::float32: f(float{}); break;
  }
}
}  // namespace

HostTensor HostTensor::to(DType target) const {
  if (target == dtype_) return *this;
  if (!is_integer(target) && is_integer(dtype_)) {
    // integer -> float32: exact for |v| < 2^24, which codes always are; check anyway.
  } else if (is_integer(target) && !is_integer(dtype_)) {
    throw Error(ErrorKind::config, "HostTensor: float32 to integer conversion is not lossless");
  }
  HostTensor out(target, shape_);
  const std::size_t n = static_cast<std::size_t>(numel());
  visit(dtype_, [&](auto src_tag) {
    using S = decltype(src_tag);
    const S* src = reinterpret_cast<const S*>(data_.data());
    visit(target, [&](auto dst_tag) {
      using D = decltype(dst_tag);
      D* dst = reinterpret_cast<D*>(out.data_.data());
      for (std::size_t i = 0; i < n; ++i) {
        D v = static_cast<D>(src[i]);
        if (static_cast<S>(v) != src[i])
          throw Error(ErrorKind::config, "HostTensor: value does not fit in " + std::string(to_string(target)));
        dst[i] = v;
      }
    });
  });
  return out;
}

HostTensor HostTensor::narrowed() const {
  if (!is_integer(dtype_) || dtype_ == DType::uint8) return *this;
  std::int64_t lo = 0, hi = 0;
  visit(dtype_, [&](auto tag) {
    using S = decltype(tag);
    auto v = std::span(reinterpret_cast<const S*>(data_.data()), static_cast<std::size_t>(numel()));
    if (!v.empty()) {
      auto [mn, mx] = std::minmax_element(v.begin(), v.end());
      lo = static_cast<std::int64_t>(*mn);
      hi = static_cast<std::int64_t>(*mx);
    }
  });
  DType target = DType::int64;
  if (lo >= std::numeric_limits<std::int16_t>::min() && hi <= std::numeric_limits<std::int16_t>::max())
    target = DType::int16;
  else if (lo >= std::numeric_limits<std::int32_t>::min() && hi <= std::numeric_limits<std::int32_t>::max())
    target = DType::int32;
  return element_size(target) < element_size(dtype_) ? to(target) : *this;
}

std::string HostTensor::describe() const {
  std::string s(to_string(dtype_));
  s += '[';
  for (std::size_t i = 0; i < shape_.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape_[i]);
  }
  s += ']';
  return s;
}

std::size_t Artifact::byte_size() const noexcept {
  std::size_t n = 0;
  for (const auto& [name, t] : tensors) n += name.size() + t.nbytes();
  for (const auto& [k, v] : meta) n += k.size() + v.size();
  return n;
}

Artifact Artifact::compacted() const {
  Artifact a;
  a.meta = meta;
  for (const auto& [name, t] : tensors) a.tensors.emplace(name, t.narrowed());
  return a;
}

Artifact Artifact::widened() const {
  Artifact a;
  a.meta = meta;
  for (const auto& [name, t] : tensors) a.tensors.emplace(name, t.dtype() == DType::float32 ? t : t.to(DType::int64));
  return a;
}

const HostTensor& Artifact::tensor(const std::string& name) const {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw Error(ErrorKind::config, "artifact has no tensor '" + name + "'");
  return it->second;
}

ArtifactParity artifact_parity(const Artifact& batched, const Artifact& single) {
  ArtifactParity p;
  if (batched == single) return p;
  p.identical = false;
  if (batched.meta != single.meta) ++p.mismatched_codes;
  auto all_of = [](const HostTensor* t) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(t ? t->numel() : 0, 1));
  };
  auto compare = [&](const std::string& name) {
    auto a = batched.tensors.find(name), b = single.tensors.find(name);
    const HostTensor* x = a == batched.tensors.end() ? nullptr : &a->second;
    const HostTensor* y = b == single.tensors.end() ? nullptr : &b->second;
    if (!x || !y || x->dtype() != y->dtype() || x->shape() != y->shape()) {
      p.mismatched_codes += std::max(all_of(x), all_of(y));
      return;
    }
    if (x->dtype() == DType::float32) {
      auto u = x->values<float>(), v = y->values<float>();
      for (std::size_t i = 0; i < u.size(); ++i) {
        const double d = std::abs(static_cast<double>(u[i]) - static_cast<double>(v[i]));
        if (d != d)
          ++p.mismatched_codes;  // NaN on one side only
        else
          p.max_abs_diff = std::max(p.max_abs_diff, d);
      }
      return;
    }
    const HostTensor u = x->to(DType::int64), v = y->to(DType::int64);
    auto s = u.values<std::int64_t>(), t = v.values<std::int64_t>();
    for (std::size_t i = 0; i < s.size(); ++i) p.mismatched_codes += s[i] != t[i] ? 1 : 0;
  };
  for (const auto& [name, t] : batched.tensors) compare(name);
  for (const auto& [name, t] : single.tensors)
    if (!batched.tensors.count(name)) compare(name);
  return p;
}

}  // namespace refenc
