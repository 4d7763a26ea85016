// splitmix64 pinned to known outputs: the modelled device's spread draws and the modelled artifacts'
// values are derived from it, so a change of a single bit would change calibrated runs and artifacts.
#include <catch2/catch.hpp>

#include "core/splitmix64.hpp"

using refenc::SplitMix64;
using refenc::splitmix64;

TEST_CASE("splitmix64: the published finaliser's outputs") {
  static_assert(splitmix64(0) == 0xe220a8397b1dcdafull);  // the reference implementation's first output from 0
  CHECK(splitmix64(1) == 0x910a2dec89025cc1ull);
  CHECK(splitmix64(42) == 0xbdd732262feb6e95ull);
  CHECK(splitmix64(0xffffffffffffffffull) == 0xe4d971771b652c20ull);
}

TEST_CASE("SplitMix64: a stream of splitmix64 over a state advancing by the gamma") {
  SplitMix64 v{1469598103934665603ull};  // the FNV-1a offset basis: a modelled artifact's seed of an empty clip
  CHECK(v.next() == 0x4ea0537ff367da6bull);
  CHECK(v.next() == 0xc5c5c0f336982d7aull);
  CHECK(v.next() == 0x979d20d6389ab2efull);
  CHECK(v.next() == 0x982d3222cf553efdull);
  CHECK(v.state == 0x8d42f69670c6f3d7ull);
  SplitMix64 w{42};
  CHECK(w.next() == splitmix64(42));
  CHECK(w.next() == splitmix64(42 + refenc::kSplitMix64Gamma));
}
