// `refenc cache stats | clear [--model M] | gc [--max-bytes N] | verify [--delete]`: inspect and
// maintain the disk tier (and count the registered voices) under a cache root.
#include <cctype>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/prometheus_text.hpp"
#include "shared_cache.hpp"
#include "store/disk_tier.hpp"
#include "store/voice_cache.hpp"

namespace refenc::cli {

namespace {

struct CacheOptions {
  std::string root;
  std::string model;
  std::string max_bytes;
  bool remove = false;
  bool json = false;
  bool prometheus = false;
  SharedCacheOptions shared;
  CLI::App* stats = nullptr;
  CLI::App* clear = nullptr;
  CLI::App* gc = nullptr;
  CLI::App* verify = nullptr;
};

std::string human_bytes(std::uint64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < (1u << 20)) return fmt::format("{:.1f} KiB", n / 1024.0);
  if (n < (1u << 30)) return fmt::format("{:.1f} MiB", n / 1048576.0);
  return fmt::format("{:.2f} GiB", n / 1073741824.0);
}

/// "1048576", "512K", "64M", "2G" (powers of 1024).
std::uint64_t parse_bytes(const std::string& text) {
  std::size_t used = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(text, &used);
  } catch (const std::exception&) {
    throw Error(ErrorKind::bad_input, "--max-bytes '" + text + "': not a byte count (e.g. 1048576, 512M, 2G)");
  }
  std::string suffix = text.substr(used);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix == "KIB") suffix = "K";
  if (suffix == "MIB") suffix = "M";
  if (suffix == "GIB") suffix = "G";
  int shift = suffix.empty() || suffix == "B" ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : -1;
  if (shift < 0 || text.front() == '-')
    throw Error(ErrorKind::bad_input, "--max-bytes '" + text + "': not a byte count (e.g. 1048576, 512M, 2G)");
  return static_cast<std::uint64_t>(n) << shift;
}

/// The disk tier at the root; an unusable root is an error here (the library would degrade).
std::shared_ptr<store::DiskTier> open_disk_or_fail(const std::string& root) {
  const log::Level before = log::level();
  log::set_level(log::Level::error);  // the reason goes into the one error line instead
  auto tier = store::open_disk_tier({.root = root});
  log::set_level(before);
  if (!tier->enabled())
    throw Error(ErrorKind::io, "cache root " + tier->root().string() + " is unusable: " + tier->disabled_reason());
  return tier;
}

/// The shared tier's section of `cache stats`: where it is, its bound and policy, this prefix's entries.
nlohmann::json shared_stats(store::RedisTier& shared) {
  const log::Level before = log::level();
  log::set_level(log::Level::error);  // unreachable is reported below, not warned about
  store::RedisServerInfo info = shared.server_info();
  log::set_level(before);
  nlohmann::json j = {{"url", shared.display()}, {"prefix", shared.options().prefix}, {"reachable", info.reachable}};
  if (!info.reachable) {
    j["failure"] = info.failure;
    return j;
  }
  j["version"] = info.version;
  j["maxmemory"] = info.maxmemory ? nlohmann::json(*info.maxmemory) : nlohmann::json(nullptr);
  j["maxmemory_policy"] = info.policy;
  j["used_memory"] = info.used_memory ? nlohmann::json(*info.used_memory) : nlohmann::json(nullptr);
  j["entries"] = info.entries;
  j["entries_capped"] = info.entries_capped;
  return j;
}

/// `cache stats --prometheus`: the tiers' state as Prometheus gauges, labelled by root (and model), so
/// a node exporter's textfile collector or a scrape of a cron job's output can chart the disk cache.
std::string stats_exposition(const store::DiskTier& tier, const store::ScanReport& s, std::size_t voice_entries,
                             std::uint64_t voice_bytes, const std::optional<nlohmann::json>& shared) {
  const PrometheusLabels root = {{"root", tier.root().string()}};
  auto with_model = [&](const std::string& model) {
    PrometheusLabels l = root;
    l.emplace_back("model", model);
    return l;
  };
  std::vector<PrometheusGauge> g = {
      {"disk_entries", "Entries in the disk tier.", {{root, static_cast<double>(s.entries)}}},
      {"disk_bytes", "Bytes of the disk tier's entries.", {{root, static_cast<double>(s.bytes)}}},
      {"disk_max_bytes", "Byte bound of the disk tier.", {{root, static_cast<double>(tier.options().max_disk_bytes)}}},
      {"disk_model_entries", "Entries in the disk tier, per model.", {}},
      {"disk_model_bytes", "Bytes of the disk tier's entries, per model.", {}},
      {"voice_entries", "Registered voice entries on disk.", {{root, static_cast<double>(voice_entries)}}},
      {"voice_bytes", "Bytes of the registered voice entries on disk.", {{root, static_cast<double>(voice_bytes)}}},
  };
  for (const auto& [m, u] : s.models) {
    g[3].samples.emplace_back(with_model(m), static_cast<double>(u.entries));
    g[4].samples.emplace_back(with_model(m), static_cast<double>(u.bytes));
  }
  if (g[3].samples.empty()) g.erase(g.begin() + 3, g.begin() + 5);  // a family needs a sample
  if (shared) {
    const PrometheusLabels at = {{"url", (*shared)["url"].get<std::string>()},
                                 {"prefix", (*shared)["prefix"].get<std::string>()}};
    const bool up = (*shared)["reachable"].get<bool>();
    g.push_back({"shared_up", "1 when the shared tier's server answered.", {{at, up ? 1.0 : 0.0}}});
    if (up) {
      g.push_back({"shared_entries",
                   "Values under this prefix in the shared tier (a lower bound when capped).",
                   {{at, static_cast<double>((*shared)["entries"].get<std::uint64_t>())}}});
      if (!(*shared)["used_memory"].is_null())
        g.push_back({"shared_used_memory_bytes",
                     "Memory the shared tier's server uses.",
                     {{at, static_cast<double>((*shared)["used_memory"].get<std::uint64_t>())}}});
      if (!(*shared)["maxmemory"].is_null())
        g.push_back({"shared_max_memory_bytes",
                     "The shared tier's server bound (0: none).",
                     {{at, static_cast<double>((*shared)["maxmemory"].get<std::uint64_t>())}}});
    }
  }
  return prometheus_gauges(g);
}

void print_shared(const nlohmann::json& j) {
  std::cout << fmt::format("shared     {}{}\n", j["url"].get<std::string>(),
                           j["prefix"].get<std::string>().empty() ? "" : " prefix " + j["prefix"].get<std::string>());
  if (!j["reachable"].get<bool>()) {
    std::cout << fmt::format("  unreachable: {}\n", j["failure"].get<std::string>());
    return;
  }
  const std::string bound = j["maxmemory"].is_null() ? "unknown"
                            : j["maxmemory"].get<std::uint64_t>() == 0
                                ? "none (maxmemory 0)"
                                : human_bytes(j["maxmemory"].get<std::uint64_t>());
  std::cout << fmt::format(
      "  server   redis {}, maxmemory {}, policy {}, used {}\n", j["version"].get<std::string>(), bound,
      j["maxmemory_policy"].get<std::string>().empty() ? "unknown" : j["maxmemory_policy"].get<std::string>(),
      j["used_memory"].is_null() ? "unknown" : human_bytes(j["used_memory"].get<std::uint64_t>()));
  std::cout << fmt::format("  entries  {}{}\n", j["entries_capped"].get<bool>() ? "at least " : "",
                           j["entries"].get<std::uint64_t>());
}

int run_stats(const CacheOptions& o) {
  auto shared = open_shared_cache(o.shared);
  auto tier = open_disk_or_fail(o.root);
  store::ScanReport s = tier->scan();
  const log::Level before = log::level();
  log::set_level(log::Level::error);
  store::VoiceCache voices({.root = tier->root().string()});
  log::set_level(before);
  const auto voice_entries = voices.list();
  std::uint64_t voice_bytes = 0;
  for (const auto& v : voice_entries) voice_bytes += v.bytes;

  if (o.prometheus) {
    std::cout << stats_exposition(*tier, s, voice_entries.size(), voice_bytes,
                                  shared ? std::optional<nlohmann::json>(shared_stats(*shared)) : std::nullopt);
    return 0;
  }
  if (o.json) {
    nlohmann::json j = {{"root", tier->root().string()},
                        {"folder", tier->entries_folder().string()},
                        {"entries", s.entries},
                        {"bytes", s.bytes},
                        {"max_disk_bytes", tier->options().max_disk_bytes},
                        {"stale_temp_files_removed", s.stale_temp_files},
                        {"models", nlohmann::json::object()},
                        {"voices", {{"entries", voice_entries.size()}, {"bytes", voice_bytes}}}};
    for (const auto& [m, u] : s.models) j["models"][m] = {{"entries", u.entries}, {"bytes", u.bytes}};
    if (shared) j["shared"] = shared_stats(*shared);
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  std::cout << fmt::format("root       {}\n", tier->root().string());
  std::cout << fmt::format("entries    {} ({} of {} max)\n", s.entries, human_bytes(s.bytes),
                           human_bytes(tier->options().max_disk_bytes));
  for (const auto& [m, u] : s.models)
    std::cout << fmt::format("  {:<24} {:>6} entries  {:>10}\n", m, u.entries, human_bytes(u.bytes));
  std::cout << fmt::format("voices     {} entries ({})\n", voice_entries.size(), human_bytes(voice_bytes));
  if (s.stale_temp_files) std::cout << fmt::format("cleaned    {} stale temporary files\n", s.stale_temp_files);
  if (shared) print_shared(shared_stats(*shared));
  return 0;
}

int run_clear(const CacheOptions& o) {
  auto tier = open_disk_or_fail(o.root);
  std::optional<std::string> model = o.model.empty() ? std::nullopt : std::optional<std::string>(o.model);
  auto shared = open_shared_cache(o.shared);
  std::uint64_t n = tier->clear(model);
  std::optional<std::uint64_t> shared_n;
  if (shared) shared_n = shared->clear(model);
  if (o.json) {
    nlohmann::json j{{"removed", n}, {"model", o.model.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.model)}};
    if (shared_n) j["shared_removed"] = *shared_n;
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << fmt::format("removed    {} entries{}\n", n, o.model.empty() ? "" : " of model " + o.model);
    if (shared_n) std::cout << fmt::format("removed    {} shared entries from {}\n", *shared_n, shared->display());
  }
  return 0;
}

int run_gc(const CacheOptions& o) {
  std::optional<std::uint64_t> bound;
  if (!o.max_bytes.empty()) bound = parse_bytes(o.max_bytes);
  auto tier = open_disk_or_fail(o.root);
  store::GcReport g = tier->gc(bound);
  const std::uint64_t limit = bound.value_or(tier->options().max_disk_bytes);
  if (o.json) {
    std::cout << nlohmann::json{{"max_bytes", limit},
                                {"entries_before", g.entries_before},
                                {"bytes_before", g.bytes_before},
                                {"evicted", g.evicted},
                                {"entries_after", g.entries_after},
                                {"bytes_after", g.bytes_after},
                                {"stale_temp_files", g.stale_temp_files},
                                {"stale_lock_files", g.stale_lock_files}}
                     .dump(2)
              << '\n';
    return 0;
  }
  std::cout << fmt::format("bound      {}\n", human_bytes(limit));
  std::cout << fmt::format("before     {} entries, {}\n", g.entries_before, human_bytes(g.bytes_before));
  std::cout << fmt::format("evicted    {} least recently used entries\n", g.evicted);
  std::cout << fmt::format("after      {} entries, {}\n", g.entries_after, human_bytes(g.bytes_after));
  if (g.stale_temp_files) std::cout << fmt::format("cleaned    {} stale temporary files\n", g.stale_temp_files);
  if (g.stale_lock_files) std::cout << fmt::format("cleaned    {} stale lock files\n", g.stale_lock_files);
  return 0;
}

int run_verify(const CacheOptions& o) {
  auto tier = open_disk_or_fail(o.root);
  store::VerifyReport v = tier->verify(o.remove);
  if (o.json) {
    nlohmann::json j = {
        {"checked", v.checked}, {"ok", v.ok}, {"removed", v.removed}, {"corrupt", nlohmann::json::array()}};
    for (const auto& c : v.corrupt) j["corrupt"].push_back({{"path", c.path}, {"reason", c.reason}});
    std::cout << j.dump(2) << '\n';
  } else {
    for (const auto& c : v.corrupt) std::cout << fmt::format("corrupt    {}: {}\n", c.path, c.reason);
    std::cout << fmt::format("checked    {} entries: {} ok, {} corrupt, {} deleted\n", v.checked, v.ok,
                             v.corrupt.size(), v.removed);
  }
  return v.corrupt.size() == v.removed ? 0 : 1;
}

Registration cache_command{
    "cache", "Inspect and maintain the disk cache: stats, clear, gc, verify", [](CLI::App& app) {
      auto o = std::make_shared<CacheOptions>();
      app.require_subcommand(1);
      app.add_option("--root", o->root,
                     "Cache root (default $REFENC_CACHE_DIR, $XDG_CACHE_HOME/refenc, ~/.cache/refenc)");
      app.add_flag("--json", o->json, "Print JSON");
      add_shared_cache_options(app, o->shared);
      o->stats = app.add_subcommand("stats", "Entries and bytes per model, registered voices, and the shared cache");
      o->stats->add_flag("--prometheus", o->prometheus, "Print the figures in the Prometheus text format (gauges)");
      o->clear = app.add_subcommand("clear", "Delete every entry, or those of one model");
      o->clear->add_option("--model", o->model, "Only this model's entries");
      o->gc = app.add_subcommand("gc", "Delete stale temporary and lock files and evict LRU entries down to the bound");
      o->gc->add_option("--max-bytes", o->max_bytes, "Bound to enforce (bytes, or with K/M/G); default 2G");
      o->verify = app.add_subcommand("verify", "Read and check every entry; report corrupt ones");
      o->verify->add_flag("--delete", o->remove, "Delete the corrupt entries");
      for (CLI::App* sub : {o->stats, o->clear, o->gc, o->verify}) sub->fallthrough();
      return [o] {
        if (o->stats->parsed()) return run_stats(*o);
        if (o->clear->parsed()) return run_clear(*o);
        if (o->gc->parsed()) return run_gc(*o);
        return run_verify(*o);
      };
    }};

}  // namespace

}  // namespace refenc::cli
