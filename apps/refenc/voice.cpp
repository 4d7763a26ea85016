// `refenc voice add NAME CLIP --model M [--text T] | list | show NAME | rm NAME`: registered voices,
// encoded once and kept in the voice cache under the cache root.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "encoders/encoder_hook.hpp"
#include "shared_cache.hpp"
#include "store/shared_voice_cache.hpp"
#include "store/voice_cache.hpp"

namespace refenc::cli {

namespace {

struct VoiceOptions {
  std::string root, name, clip, model, text, version = "1", scale, checkpoint, device = "cpu";
  bool json = false;
  std::size_t max_voices = 1000;
  SharedCacheOptions shared;
  CLI::App* add = nullptr;
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  CLI::App* rm = nullptr;
};

/// The voice cache at the root; an unusable root is an error here (the library would go memory-only).
std::unique_ptr<store::VoiceCache> open_voices_or_fail(const std::string& root, std::size_t max_voices = 1000) {
  const log::Level before = log::level();
  log::set_level(log::Level::error);  // the reason goes into the one error line instead
  auto voices = std::make_unique<store::VoiceCache>(store::VoiceCacheOptions{.root = root, .max_voices = max_voices});
  log::set_level(before);
  if (!voices->persistent())
    throw Error(ErrorKind::io, "voice folder under " + (root.empty() ? store::default_cache_root() : root) +
                                   " is unusable (see refenc cache stats)");
  return voices;
}

/// The local voices, behind the shared tier when --shared-cache names one (null otherwise).
std::unique_ptr<store::SharedVoiceCache> with_shared(const VoiceOptions& o, std::unique_ptr<store::VoiceCache>& local) {
  auto shared = open_shared_cache(o.shared);
  if (!shared) return nullptr;
  return std::make_unique<store::SharedVoiceCache>(std::shared_ptr<store::VoiceCache>(std::move(local)), shared);
}

nlohmann::json describe(const store::VoiceEntry& e, const Artifact* a) {
  nlohmann::json j = {{"voice", e.key.voice_name},   {"model", e.key.model_type}, {"version", e.key.voice_version},
                      {"kind", e.key.artifact_kind}, {"bytes", e.bytes},          {"path", e.path}};
  if (a) {
    for (const auto& [name, t] : a->tensors)
      j["tensors"][name] = {{"dtype", std::string(to_string(t.dtype()))}, {"shape", t.shape()}};
    j["meta"] = a->meta;
  }
  return j;
}

int run_add(const VoiceOptions& o) {
  const std::string name = store::VoiceCache::normalize_voice_name(o.name);  // fail before any encode
  auto local = open_voices_or_fail(o.root, o.max_voices);
  local->check_cap(name);  // fail before the encode; put() checks again
  auto shared = with_shared(o, local);
  store::VoiceCache* voices = shared ? &shared->local() : local.get();
  auto hook = encoders::make_hook(
      o.model, {.scale = network_scale(o.scale, o.checkpoint), .device = o.device, .checkpoint = o.checkpoint});
  encoders::EncodeService service(hook);
  const std::uint64_t generation = voices->generation(name);  // a removal during the encode wins
  Artifact artifact = service.get_or_encode({audio::ReferenceSource::parse(o.clip), o.text});
  Artifact stored = hook->store_artifact(artifact);
  store::VoiceKey key{o.model, name, o.version, hook->info().artifact_kind};
  if (shared) {
    if (!shared->put(key, stored))
      log::warn("voice '" + name + "': not stored in the shared cache " + shared->shared().display() +
                " (unavailable): registered on this host only");
  } else {
    const std::optional<bool> written = voices->put_if_current(key, stored, generation);
    if (!written) throw Error(ErrorKind::bad_input, "voice '" + name + "': removed while it was being encoded");
    if (!*written)
      throw Error(ErrorKind::io, "voice '" + name + "': could not be written under " + voices->folder().string());
  }
  auto entries = voices->list(name);
  store::VoiceEntry entry{key, stored.byte_size(), {}};
  for (const auto& e : entries)
    if (e.key.model_type == o.model && e.key.voice_version == o.version && e.key.artifact_kind == key.artifact_kind)
      entry = e;
  if (o.json) {
    std::cout << describe(entry, &stored).dump(2) << '\n';
    return 0;
  }
  std::cout << fmt::format("added      voice '{}' ({}, version {}, {})\n", name, o.model, o.version, key.artifact_kind);
  for (const auto& [tname, t] : stored.tensors) std::cout << fmt::format("  {:<18} {}\n", tname, t.describe());
  std::cout << fmt::format("stored     {} bytes in {}\n", entry.bytes, entry.path);
  return 0;
}

int run_list(const VoiceOptions& o) {
  auto local = open_voices_or_fail(o.root);
  auto shared = with_shared(o, local);
  store::VoiceCache* voices = shared ? &shared->local() : local.get();
  auto entries = voices->list();
  if (shared) {  // voices registered on other hosts, not (yet) on this one's disk
    for (const store::VoiceKey& k : shared->shared_list()) {
      const bool known = std::any_of(entries.begin(), entries.end(),
                                     [&](const store::VoiceEntry& e) { return e.key.canonical() == k.canonical(); });
      if (!known) entries.push_back({k, 0, "shared"});
    }
  }
  if (o.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& e : entries) j.push_back(describe(e, nullptr));
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  if (entries.empty()) {
    std::cout << "no registered voices under " << voices->folder().string() << '\n';
    return 0;
  }
  std::cout << fmt::format("{:<24} {:<16} {:<8} {:<20} {:>10}\n", "voice", "model", "version", "kind", "bytes");
  for (const auto& e : entries)
    std::cout << fmt::format("{:<24} {:<16} {:<8} {:<20} {:>10}\n", e.key.voice_name, e.key.model_type,
                             e.key.voice_version, e.key.artifact_kind, e.bytes);
  return 0;
}

int run_show(const VoiceOptions& o) {
  auto local = open_voices_or_fail(o.root);
  auto shared = with_shared(o, local);
  store::VoiceCache* voices = shared ? &shared->local() : local.get();
  auto entries = voices->list(o.name);
  if (shared) {
    for (const store::VoiceKey& k : shared->shared_keys(o.name)) {
      const bool known = std::any_of(entries.begin(), entries.end(),
                                     [&](const store::VoiceEntry& e) { return e.key.canonical() == k.canonical(); });
      if (!known) entries.push_back({k, 0, "shared"});
    }
  }
  nlohmann::json all = nlohmann::json::array();
  for (const auto& e : entries) {
    auto a = shared ? shared->get(e.key) : voices->get(e.key);
    if (!a && shared) continue;  // removed on another replica
    all.push_back(describe(e, a.get()));
  }
  if (all.empty()) throw Error(ErrorKind::bad_input, "voice '" + o.name + "': not registered");
  if (o.json) {
    std::cout << all.dump(2) << '\n';
    return 0;
  }
  for (const auto& j : all) {
    std::cout << fmt::format("voice      {} ({}, version {}, {})\n", j["voice"].get<std::string>(),
                             j["model"].get<std::string>(), j["version"].get<std::string>(),
                             j["kind"].get<std::string>());
    std::cout << fmt::format("file       {} ({} bytes)\n", j["path"].get<std::string>(),
                             j["bytes"].get<std::uint64_t>());
    if (j.contains("tensors"))
      for (const auto& [tname, t] : j["tensors"].items())
        std::cout << fmt::format("  {:<18} {}{}\n", tname, t["dtype"].get<std::string>(), t["shape"].dump());
    if (j.contains("meta"))
      for (const auto& [k, v] : j["meta"].items())
        std::cout << fmt::format("  meta {:<13} {}\n", k, v.get<std::string>());
  }
  return 0;
}

int run_rm(const VoiceOptions& o) {
  auto local = open_voices_or_fail(o.root);
  auto shared = with_shared(o, local);
  store::VoiceCache* voices = shared ? &shared->local() : local.get();
  std::optional<std::string> model = o.model.empty() ? std::nullopt : std::optional<std::string>(o.model);
  const std::size_t n = voices->list(o.name).size();
  if (!(shared ? shared->clear_voice(o.name, model) : voices->clear_voice(o.name, model)))
    throw Error(ErrorKind::bad_input, "voice '" + o.name + "': not registered" + (model ? " for model " + *model : ""));
  const std::size_t left = voices->list(o.name).size();
  if (o.json)
    std::cout << nlohmann::json{{"voice", store::VoiceCache::normalize_voice_name(o.name)}, {"removed", n - left}}.dump(
                     2)
              << '\n';
  else
    std::cout << fmt::format("removed    voice '{}' ({} entries)\n", store::VoiceCache::normalize_voice_name(o.name),
                             n - left);
  return 0;
}

Registration voice_command{
    "voice", "Registered voices: add, list, show, rm", [](CLI::App& app) {
      auto o = std::make_shared<VoiceOptions>();
      app.require_subcommand(1);
      app.add_option("--root", o->root,
                     "Cache root (default $REFENC_CACHE_DIR, $XDG_CACHE_HOME/refenc, ~/.cache/refenc)");
      app.add_flag("--json", o->json, "Print JSON");
      add_shared_cache_options(app, o->shared);
      o->add = app.add_subcommand("add", "Encode CLIP once and register it as voice NAME");
      o->add->add_option("name", o->name, "Voice name (case-insensitive, at most 64 bytes, no '/')")->required();
      o->add->add_option("clip", o->clip, "Reference clip: a path, a data: URI or an http(s) URL")->required();
      o->add->add_option("--model", o->model, "fish-s2-pro, qwen3-tts or moss-tts-local")->required();
      o->add->add_option("--text", o->text, "Reference text (read by qwen3-tts only)");
      o->add->add_option("--version", o->version, "Voice version")->capture_default_str();
      o->add->add_option("--scale", o->scale, kScaleHelp);
      o->add->add_option("--checkpoint", o->checkpoint, kCheckpointHelp);
      o->add->add_option("--device", o->device, "cpu or cuda:N")->capture_default_str();
      o->add->add_option("--max-voices", o->max_voices, "Refuse to register more than N voices (names) under the root")
          ->capture_default_str()
          ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
      o->list = app.add_subcommand("list", "Every registered voice entry");
      o->show = app.add_subcommand("show", "One voice's entries with tensor shapes and metadata");
      o->show->add_option("name", o->name, "Voice name")->required();
      o->rm = app.add_subcommand("rm", "Remove a voice from memory and disk");
      o->rm->add_option("name", o->name, "Voice name")->required();
      o->rm->add_option("--model", o->model, "Only this model's entries");
      for (CLI::App* sub : {o->add, o->list, o->show, o->rm}) sub->fallthrough();
      return [o] {
        if (o->add->parsed()) return run_add(*o);
        if (o->list->parsed()) return run_list(*o);
        if (o->show->parsed()) return run_show(*o);
        return run_rm(*o);
      };
    }};

}  // namespace

}  // namespace refenc::cli
