// Identity of a cell (model x arm x phase x concurrency x repeat) and of a group of cells that differ
// only in their repeat (what the gate, compare and the page pool).
//
//   CellKey k{"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0};
//   k.id();             // "fish-s2-pro/m4a/cold/c8/r0"
//   k.group().label();  // "fish-s2-pro/m4a/cold/c8"
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

  std::string label() const;  ///< "model/arm/phase/c8"
  auto operator<=>(const GroupKey&) const = default;
};

/// One cell.
struct CellKey {
  std::string model;
  Arm arm = Arm::m4a;
  Phase phase = Phase::cold;
  int concurrency = 0;
  int repeat = 0;

  std::string id() const;  ///< "model/arm/phase/c8/r0"
  GroupKey group() const { return {model, arm, phase, concurrency}; }
  auto operator<=>(const CellKey&) const = default;
};

}  // namespace refenc::profile
