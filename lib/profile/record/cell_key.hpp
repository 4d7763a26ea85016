// Identity of a cell (model x arm x phase x concurrency [x intra-op threads] x repeat) and of a group
// of cells that differ only in their repeat (what the gate, compare and the page pool). Threads are a
// dimension only when a manifest lists them (models[].encoder.threads: [1, 2]); otherwise 0, and ids
// carry no "/t" part.
//
//   CellKey k{"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0};
//   k.id();             // "fish-s2-pro/m4a/cold/c8/r0"
//   k.group().label();  // "fish-s2-pro/m4a/cold/c8"
//   CellKey t{"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0, 2};
//   t.id();             // "fish-s2-pro/m4a/cold/c8/t2/r0"
#pragma once

#include <compare>
#include <string>

#include "profile/record/labels.hpp"

namespace refenc::profile {

/// A cell's repeats pooled: model, arm, phase and concurrency.
struct GroupKey {
  std::string model;
  Arm arm = Arm::m4a;
  Phase phase = Phase::cold;
  int concurrency = 0;
  int threads = 0;  ///< Intra-op threads when profiled as a dimension; 0: not a dimension.

  std::string label() const;  ///< "model/arm/phase/c8", or "model/arm/phase/c8/t2" with threads
  auto operator<=>(const GroupKey&) const = default;
};

/// One cell.
struct CellKey {
  std::string model;
  Arm arm = Arm::m4a;
  Phase phase = Phase::cold;
  int concurrency = 0;
  int repeat = 0;
  int threads = 0;  ///< As GroupKey::threads.

  std::string id() const;  ///< "model/arm/phase/c8/r0", or "model/arm/phase/c8/t2/r0" with threads
  GroupKey group() const { return {model, arm, phase, concurrency, threads}; }
  auto operator<=>(const CellKey&) const = default;
};

}  // namespace refenc::profile
