// CapacitySpec: a manifest's "capacity" block -- the SLO, the arrival rates of the open-loop sweep (a
// list, or "auto" for the search of stats/capacity.hpp) and how the sweep's requests arrive. Schema in
// reports/manifest.md; every bad value is an Error(bad_input) naming the field, e.g.
// "workloads/x.json: capacity.rates[1]: must be > 0".
//
//   CapacitySpec c = parse_capacity(nlohmann::json::parse(R"({"slo": {"ttfa_ms": 800, "e2e_ms": 4000},
//                                   "rates": [2, 4, 8]})"), "x.json", /*cold_concurrency=*/{8, 16});
//   bool searched = c.rates.empty();   // false: the three rates are run as listed, ascending
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/record/capacity_record.hpp"
#include "profile/stats/capacity.hpp"

namespace refenc::profile {

struct CapacitySpec {
  SloSpec slo;                ///< Both objectives are required and > 0.
  std::vector<double> rates;  ///< Ascending, distinct, > 0; empty: "auto" (search).
  RateSearch search;          ///< The search's bounds ("auto" only).
  int concurrency = 0;        ///< Workers serving the arrivals; default: the cold phase's largest level.
  bool uniform = false;       ///< Arrivals evenly spaced at 1/rate; false: Poisson (the default).
};

/// Parses and validates a "capacity" block of the manifest `file`. `cold_concurrency` holds the cold
/// phase's levels (empty: the manifest has no cold phase, an error); their largest is the default
/// "concurrency". `has_trace`: the manifest replays a request trace (an error: it sets its own arrivals).
CapacitySpec parse_capacity(const nlohmann::json& j, const std::string& file, const std::vector<int>& cold_concurrency,
                            bool has_trace = false);

}  // namespace refenc::profile
