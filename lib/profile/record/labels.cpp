#include "profile/record/labels.hpp"

#include <array>
#include <utility>

#include "core/error.hpp"

namespace refenc::profile {
namespace {

template <class E, std::size_t N>
E parse(const std::array<std::pair<E, std::string_view>, N>& names, std::string_view name, const char* what) {
  for (const auto& [value, text] : names)
    if (text == name) return value;
  throw Error(ErrorKind::bad_input, std::string("unknown ") + what + " '" + std::string(name) + "'");
}

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& names, E value) {
  for (const auto& [v, text] : names)
    if (v == value) return text;
  return "?";
}

constexpr std::array<std::pair<Arm, std::string_view>, 2> arm_names{{{Arm::m4a, "m4a"}, {Arm::m4b, "m4b"}}};
constexpr std::array<std::pair<Phase, std::string_view>, 4> phase_names{{{Phase::cold, "cold"},
                                                                         {Phase::warm, "warm"},
                                                                         {Phase::warm_disk, "warm-disk"},
                                                                         {Phase::warm_shared, "warm-shared"}}};
constexpr std::array<std::pair<Stage, std::string_view>, 7> stage_names{
    {{Stage::preprocessing, "preprocessing"},
     {Stage::encode, "encode"},
     {Stage::synthesis_first_audio, "synthesis_first_audio"},
     {Stage::synthesis_end, "synthesis_end"},
     {Stage::ttfa, "ttfa"},
     {Stage::e2e, "e2e"},
     {Stage::queue, "queue"}}};
constexpr std::array<std::pair<Verdict, std::string_view>, 5> verdict_names{
    {{Verdict::go, "GO"},
     {Verdict::no_go, "NO-GO"},
     {Verdict::inconclusive, "INCONCLUSIVE"},
     {Verdict::not_applicable, "NOT_APPLICABLE"},
     {Verdict::missing_arm, "MISSING_ARM"}}};

}  // namespace

std::string_view to_string(Arm arm) noexcept { return name_of(arm_names, arm); }
std::string_view to_string(Phase phase) noexcept { return name_of(phase_names, phase); }
std::string_view to_string(Stage stage) noexcept { return name_of(stage_names, stage); }
std::string_view to_string(Verdict v) noexcept { return name_of(verdict_names, v); }

Arm parse_arm(std::string_view name) { return parse(arm_names, name, "arm"); }
Phase parse_phase(std::string_view name) { return parse(phase_names, name, "phase"); }
Stage parse_stage(std::string_view name) { return parse(stage_names, name, "stage"); }
Verdict parse_verdict(std::string_view name) { return parse(verdict_names, name, "verdict"); }

const std::vector<Stage>& reported_stages() {
  static const std::vector<Stage> stages{Stage::preprocessing, Stage::encode, Stage::synthesis_first_audio,
                                         Stage::synthesis_end, Stage::ttfa,   Stage::e2e};
  return stages;
}

std::string_view stage_kind(Stage stage) noexcept {
  switch (stage) {
    case Stage::preprocessing:
    case Stage::encode:
    case Stage::queue: return "measured";
    case Stage::synthesis_first_audio:
    case Stage::synthesis_end: return "modelled";
    case Stage::ttfa:
    case Stage::e2e: return "measured+modelled";
  }
  return "?";
}

int verdict_rank(Verdict v) noexcept {
  switch (v) {
    case Verdict::missing_arm: return 4;
    case Verdict::inconclusive: return 3;
    case Verdict::no_go: return 2;
    case Verdict::go:
    case Verdict::not_applicable: return 0;
  }
  return 0;
}

int verdict_exit_code(Verdict v) noexcept {
  switch (v) {
    case Verdict::missing_arm: return gate_exit_missing_arm;
    case Verdict::inconclusive: return gate_exit_inconclusive;
    case Verdict::no_go: return gate_exit_no_go;
    case Verdict::go:
    case Verdict::not_applicable: return 0;
  }
  return 0;
}

}  // namespace refenc::profile
