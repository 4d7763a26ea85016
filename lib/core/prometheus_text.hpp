// prometheus_text: a ServiceStats snapshot in the Prometheus text exposition format (version 0.0.4).
//
// Every counter becomes a `counter` family named `<prefix><name>_total`, the gauges (`entries`,
// `bytes`, `disk_bytes`, the mean miss penalty) `gauge` families, times are in seconds, and the batch
// sizes a `histogram`. Each family has one HELP and one TYPE line. The labels given are put on every
// sample, so one scrape can hold several services (one per model).
//
//   std::string text = refenc::prometheus_text(service.stats(), {{"model", "fish-s2-pro"}});
//   // # HELP refenc_hits_total Memory-tier hits.
//   // # TYPE refenc_hits_total counter
//   // refenc_hits_total{model="fish-s2-pro"} 42
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/service_stats.hpp"

namespace refenc {

/// Labels put on every sample: (name, value) pairs. Names must match [a-zA-Z_][a-zA-Z0-9_]* and not
/// start with "__" or be "le"; values may hold any bytes (escaped as the format requires).
using PrometheusLabels = std::vector<std::pair<std::string, std::string>>;

/// The exposition of `stats`: HELP and TYPE lines, then the samples, each line ending in '\n'.
/// `prefix` starts every metric name and must itself be a valid name start ([a-zA-Z_:][a-zA-Z0-9_:]*).
/// Throws Error(config) for an invalid prefix or label name.
std::string prometheus_text(const ServiceStats& stats, const PrometheusLabels& labels = {},
                            std::string_view prefix = "refenc_");

}  // namespace refenc
