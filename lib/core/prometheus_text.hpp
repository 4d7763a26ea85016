// prometheus_text: a ServiceStats snapshot in the Prometheus text exposition format (version 0.0.4).
//
// Every counter becomes a `counter` family named `<prefix><name>_total`, the gauges (`entries`,
// `bytes`, `disk_bytes`, the mean miss penalty) `gauge` families, times are in seconds, and the batch
// sizes a `histogram`. Each family has one HELP and one TYPE line. The labels given are put on every
// sample; several snapshots (one service per model) go into one exposition through the overload that
// takes them all, which keeps each family's samples together.
//
//   std::string text = refenc::prometheus_text(service.stats(), {{"model", "fish-s2-pro"}});
//   // # HELP refenc_hits_total Memory-tier hits.
//   // # TYPE refenc_hits_total counter
//   // refenc_hits_total{model="fish-s2-pro"} 42
//   std::vector<refenc::LabelledStats> all = {{{{"model", "fish-s2-pro"}}, service.stats()},
//                                             {{{"model", "qwen3-tts"}}, service.stats()}};
//   std::string both = refenc::prometheus_text_many(all);
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/service_stats.hpp"

namespace refenc {

/// Labels put on every sample: (name, value) pairs. Names must match [a-zA-Z_][a-zA-Z0-9_]* and not
/// start with "__" or be "le"; values may hold any bytes (escaped as the format requires).
using PrometheusLabels = std::vector<std::pair<std::string, std::string>>;

/// A snapshot and the labels that tell it apart from the others of one exposition.
using LabelledStats = std::pair<PrometheusLabels, ServiceStats>;

/// A gauge family of figures that are not a ServiceStats (a disk folder's entries per model, say):
/// its name (without the prefix), help text, and one value per label set.
struct PrometheusGauge {
  std::string name;
  std::string help;
  std::vector<std::pair<PrometheusLabels, double>> samples;
};

/// The exposition of `stats`: HELP and TYPE lines, then the samples, each line ending in '\n'.
/// `prefix` starts every metric name and must itself be a valid name start ([a-zA-Z_:][a-zA-Z0-9_:]*).
/// Throws Error(config) for an invalid prefix or label name.
std::string prometheus_text(const ServiceStats& stats, const PrometheusLabels& labels = {},
                            std::string_view prefix = "refenc_");

/// Several snapshots in one exposition (one per model or replica): each family's HELP and TYPE lines
/// once, then that family's samples of every snapshot, as the format requires. Label sets must differ.
std::string prometheus_text_many(std::span<const LabelledStats> snapshots, std::string_view prefix = "refenc_");

/// Plain gauges in the same format. Throws Error(config) for an invalid name, prefix or label name.
std::string prometheus_gauges(std::span<const PrometheusGauge> gauges, std::string_view prefix = "refenc_");

}  // namespace refenc
