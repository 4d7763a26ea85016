// splitmix64: a tiny, fast, seedable 64-bit generator (Steele, Lea and Flood's SplitMix with
// Vigna's finaliser). Not for cryptography: for values that must be the same on every run and
// platform from a seed, such as a modelled call's draw of the measured spread or the made-up
// values of a modelled artifact. `splitmix64(x)` is one output for state x (a hash of x);
// `SplitMix64` is the stream whose n-th output is splitmix64(seed + n * golden gamma).
//
//   std::uint64_t h = refenc::splitmix64(42);            // 0xbdd732262feb6e95, on every platform
//   refenc::SplitMix64 values{42};
//   std::uint64_t a = values.next(), b = values.next();  // a == h, b == splitmix64(42 + the gamma)
#pragma once

#include <cstdint>

namespace refenc {

/// The golden-ratio increment that SplitMix64 adds to its state per output.
inline constexpr std::uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ull;

/// The output of a SplitMix64 whose state is `x`: x plus the gamma, finalised (a bijection of x).
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += kSplitMix64Gamma;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The SplitMix64 stream from `state`: each next() returns splitmix64(state) and advances the state
/// by the gamma.
struct SplitMix64 {
  std::uint64_t state = 0;  ///< The seed, then advanced by kSplitMix64Gamma per output.

  /// The next output.
  constexpr std::uint64_t next() noexcept {
    const std::uint64_t out = splitmix64(state);
    state += kSplitMix64Gamma;
    return out;
  }
};

}  // namespace refenc
