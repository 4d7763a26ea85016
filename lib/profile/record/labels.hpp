// The closed vocabularies of a profile run: arms, cache phases, latency stages and gate verdicts, with
// the names they carry in report.json, requests.jsonl and every printed table.
//
//   Arm a = parse_arm("m4b");             // throws Error(bad_input) for another name
//   std::string_view phase = to_string(Phase::warm_disk);  // "warm-disk"
//   std::string_view kind = stage_kind(Stage::encode);     // "measured"
//   int code = verdict_exit_code(Verdict::no_go);          // 10
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace refenc::profile {

/// The M4a path, or the opt-in M4b batching arm.
enum class Arm { m4a, m4b };

/// Cache phase of a cell: empty tiers, memory tier primed, disk tier only, or the tier shared by
/// replicas only (filled by another service, replica A; the measured one, replica B, starts empty).
enum class Phase { cold, warm, warm_disk, warm_shared };

/// Latency stages of a request (queue: scheduled send to the service call, not reported per cell).
enum class Stage { preprocessing, encode, synthesis_first_audio, synthesis_end, ttfa, e2e, queue };

/// The gate's answer for a model or one of its concurrency levels.
enum class Verdict { go, no_go, inconclusive, not_applicable, missing_arm };

std::string_view to_string(Arm arm) noexcept;      ///< "m4a", "m4b".
std::string_view to_string(Phase phase) noexcept;  ///< "cold", "warm", "warm-disk", "warm-shared".
std::string_view to_string(Stage stage) noexcept;  ///< "preprocessing", ..., "e2e", "queue".
std::string_view to_string(Verdict v) noexcept;    ///< "GO", "NO-GO", "INCONCLUSIVE", "NOT_APPLICABLE", "MISSING_ARM".

/// Parse the names above; each throws Error(bad_input) naming the value otherwise.
Arm parse_arm(std::string_view name);
Phase parse_phase(std::string_view name);
Stage parse_stage(std::string_view name);
Verdict parse_verdict(std::string_view name);

/// The stages reported per cell, in report order (queue excluded).
const std::vector<Stage>& reported_stages();

/// "measured", "modelled" or "measured+modelled".
std::string_view stage_kind(Stage stage) noexcept;

/// Severity order of verdicts: NOT_APPLICABLE = GO < NO-GO < INCONCLUSIVE < MISSING_ARM.
int verdict_rank(Verdict v) noexcept;

/// Exit codes of `refenc gate` and `refenc profile` for the worst verdict.
inline constexpr int gate_exit_no_go = 10;
inline constexpr int gate_exit_inconclusive = 11;
inline constexpr int gate_exit_missing_arm = 12;
/// Exit code of `refenc compare` when a regression is found.
inline constexpr int compare_exit_regression = 10;

/// 0 for GO and NOT_APPLICABLE, else the gate exit code of `v`.
int verdict_exit_code(Verdict v) noexcept;

}  // namespace refenc::profile
