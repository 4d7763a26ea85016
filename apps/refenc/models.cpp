// `refenc models`: the encoders refenc knows, with rates, artifact shapes, batching and scales.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "encoders/encoder_hook.hpp"
#include "profile/record/calibration.hpp"
#include "profile/device/calibration_presets.hpp"

namespace refenc::cli {

namespace {

struct ModelsOptions {
  bool json = false;
  bool params = false;
  bool presets = false;
};

/// The calibration and synthesis presets (modelled devices and engines), as text or JSON.
int print_presets(bool as_json) {
  nlohmann::json cal = nlohmann::json::array(), syn = nlohmann::json::array();
  for (const auto& c : profile::calibration_presets()) cal.push_back(profile::calibration_to_json(c));
  for (const auto& p : profile::synthesis_presets())
    syn.push_back({{"name", p.name}, {"description", p.description}, {"source", p.spec.source}});
  if (as_json) {
    std::cout << nlohmann::json{{"calibration_presets", cal}, {"synthesis_presets", syn}}.dump(2) << '\n';
    return 0;
  }
  std::cout << "calibration presets (device \"modelled\", \"calibration\": NAME)\n";
  for (const auto& c : profile::calibration_presets()) {
    const std::size_t mid = c.lengths_s.size() / 2;
    std::cout << fmt::format("  {:<22} {:<15} {:<4} {:>8.1f} ms per call at {:g} s, batch {} costs {:.1f} ms\n", c.name,
                             c.model, c.context.device, c.time_ms[0][mid], c.lengths_s[mid], c.batch_sizes.back(),
                             c.time_ms.back()[mid]);
    std::cout << fmt::format("  {:<22} source: {}\n", "", c.source);
  }
  std::cout << "synthesis presets (\"synthesis\": {\"preset\": NAME})\n";
  for (const auto& p : profile::synthesis_presets()) std::cout << fmt::format("  {:<22} {}\n", p.name, p.description);
  return 0;
}

int run_models(const ModelsOptions& o) {
  if (o.presets) return print_presets(o.json);
  nlohmann::json all = nlohmann::json::array();
  for (const encoders::ModelInfo& m : encoders::models()) {
    nlohmann::json j = {{"name", m.name},
                        {"description", m.description},
                        {"encoder_id", m.encoder_id},
                        {"artifact_kind", m.artifact_kind},
                        {"sample_rate", m.sample_rate},
                        {"samples_per_frame", m.samples_per_frame},
                        {"frame_rate", m.frame_rate},
                        {"loudness_normalised", m.loudness_normalised},
                        {"reads_text", m.reads_text},
                        {"can_encode_batch", m.can_encode_batch},
                        {"has_internal_batching", m.has_internal_batching},
                        {"scales", m.scales},
                        {"meta_keys", m.meta_keys}};
    for (const auto& t : m.artifact)
      j["artifact"].push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"note", t.note}});
    if (o.params)
      for (const char* scale : {"tiny", "small"})
        j["parameters"][scale] = encoders::make_hook(m.name, {.scale = scale})->config().parameters;
    all.push_back(j);
  }
  if (o.json) {
    std::cout << all.dump(2) << '\n';
    return 0;
  }
  for (const auto& j : all) {
    std::cout << fmt::format("{}\n  {}\n", j["name"].get<std::string>(), j["description"].get<std::string>());
    std::cout << fmt::format("  input    {} Hz mono{}; {} samples per frame, {:.2f} frames/s\n",
                             j["sample_rate"].get<int>(),
                             j["loudness_normalised"].get<bool>() ? ", loudness -20 dBFS (+-3 dB)" : "",
                             j["samples_per_frame"].get<int>(), j["frame_rate"].get<double>());
    for (const auto& t : j["artifact"])
      std::cout << fmt::format("  artifact {} {}{}  ({})\n", t["name"].get<std::string>(),
                               t["dtype"].get<std::string>(), t["shape"].get<std::string>(),
                               t["note"].get<std::string>());
    std::string batching = j["can_encode_batch"].get<bool>()        ? "generic encode_batch (M4b)"
                           : j["has_internal_batching"].get<bool>() ? "own internal batching (up to 8, 4 ms)"
                                                                    : "none (M4a only)";
    std::cout << fmt::format("  batching {}\n  text     {}\n", batching,
                             j["reads_text"].get<bool>() ? "keyed (ref_text + mode)" : "ignored");
    std::string scales;
    for (const auto& s : j["scales"]) scales += (scales.empty() ? "" : ", ") + s.get<std::string>();
    std::cout << fmt::format("  scales   {}\n", scales);
    if (j.contains("parameters"))
      std::cout << fmt::format("  params   tiny {}, small {}\n", j["parameters"]["tiny"].get<std::int64_t>(),
                               j["parameters"]["small"].get<std::int64_t>());
  }
  std::cout << '\n';
  return print_presets(false);
}

Registration models_command{"models", "List the reference encoders", [](CLI::App& app) {
                   auto o = std::make_shared<ModelsOptions>();
                   app.add_flag("--json", o->json, "Print JSON");
                   app.add_flag("--params", o->params, "Build the tiny and small proxies to count their parameters");
                   app.add_flag("--presets", o->presets, "Only the calibration and synthesis presets");
                   return [o] { return run_models(*o); };
                 }};

}  // namespace

}  // namespace refenc::cli
