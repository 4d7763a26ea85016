#include "store/disk_tier.hpp"

#include <algorithm>
#include <thread>

#include "core/log.hpp"
#include "store/entry_format.hpp"
#include "store/file_lock.hpp"

namespace fs = std::filesystem;

namespace refenc::store {
namespace {

/// Longest pause between two looks at an entry another process is encoding.
constexpr std::chrono::milliseconds kLockPollMax{50};

void subtract(std::atomic<std::uint64_t>& total, std::uint64_t n) noexcept {
  std::uint64_t cur = total.load();
  while (!total.compare_exchange_weak(cur, cur > n ? cur - n : 0)) {}
}

std::string first_component(const fs::path& rel) { return rel.empty() ? std::string() : rel.begin()->string(); }

}  // namespace

DiskTier::DiskTier(DiskTierOptions options)
    : options_(std::move(options)),
      root_(options_.root.empty() ? default_cache_root() : options_.root),
      folder_(root_, "v" + std::to_string(kEntryFormat), "disk cache") {
  if (!folder_.enabled()) return;
  ScanReport s = scan();
  known_bytes_ = s.bytes;
  if (s.bytes > options_.max_disk_bytes) maybe_evict();
}

fs::path DiskTier::relative_path(const ReferenceEncodeKey& key) {
  const std::string digest = key.digest();
  return fs::path(sanitize_component(key.model_id)) / digest.substr(0, 2) / (digest + ".pt");
}

fs::path DiskTier::entry_path(const ReferenceEncodeKey& key) const { return folder_.dir() / relative_path(key); }

fs::path DiskTier::lock_path(const ReferenceEncodeKey& key) const {
  fs::path p = entry_path(key);
  p.replace_extension(".lock");
  return p;
}

std::shared_ptr<const Artifact> DiskTier::load(const ReferenceEncodeKey& key) noexcept {
  std::shared_ptr<const Artifact> found = read_entry(key);
  ++(found ? hits_ : misses_);
  return found;
}

TierLookup<Artifact> DiskTier::load_or_lead(const ReferenceEncodeKey& key, std::chrono::milliseconds wait) noexcept {
  using Clock = std::chrono::steady_clock;
  TierLookup<Artifact> out;
  try {
    out.stored = read_entry(key);
    if (out.stored || !folder_.enabled()) {
      ++(out.stored ? hits_ : misses_);
      return out;
    }
    const fs::path lock_file = lock_path(key);
    if (!folder_.make_parents(relative_path(key))) {
      ++misses_;
      return out;
    }
    const Clock::time_point deadline = Clock::now() + wait;
    std::chrono::milliseconds pause{1};
    bool waited = false;
    for (;;) {
      std::unique_ptr<FileLock> lock;
      const LockResult got = try_lock_file(lock_file, lock);
      if (got == LockResult::acquired) {
        // Another process may have written the entry and released the lock since our last look.
        out.stored = read_entry(key);
        if (out.stored) {
          ++hits_;
          if (waited) ++lock_wait_hits_;
          return out;  // the lock is released (and its file deleted) here
        }
        ++misses_;
        ++leases_;
        if (waited) ++lock_takeovers_;
        out.lease = std::shared_ptr<FileLock>(std::move(lock));
        return out;
      }
      if (got == LockResult::error) {  // no lock to be had (e.g. out of descriptors): encode alone
        ++misses_;
        return out;
      }
      if (!waited) {
        waited = true;
        ++lock_waits_;
      }
      if ((out.stored = read_entry(key))) {
        ++hits_;
        ++lock_wait_hits_;
        return out;
      }
      const Clock::time_point now = Clock::now();
      if (now >= deadline) {
        ++misses_;
        ++lock_timeouts_;
        return out;
      }
      std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
      pause = std::min(pause * 2, kLockPollMax);
    }
  } catch (...) {
    ++errors_;
    ++misses_;
    return {};
  }
}

DiskLockStats DiskTier::lock_stats() const {
  return {leases_, lock_waits_, lock_wait_hits_, lock_takeovers_, lock_timeouts_};
}

std::shared_ptr<const Artifact> DiskTier::read_entry(const ReferenceEncodeKey& key) noexcept {
  try {
    if (!folder_.enabled()) return nullptr;
    const fs::path rel = relative_path(key);
    FileRead r = folder_.read(rel, options_.max_entry_bytes, /*touch=*/true);
    switch (r.status) {
      case ReadStatus::absent: return nullptr;
      case ReadStatus::too_large:
        if (log::level() <= log::Level::debug)
          log::debug("disk cache: " + (folder_.dir() / rel).string() + " is " + std::to_string(r.size) +
                     " bytes, over max_entry_bytes: ignored");
        return nullptr;
      case ReadStatus::io_error:
        ++errors_;
        subtract(known_bytes_, folder_.remove(rel));
        if (log::level() <= log::Level::debug)
          log::debug("disk cache: " + (folder_.dir() / rel).string() + ": read error " + std::to_string(r.error));
        return nullptr;
      case ReadStatus::ok: break;
    }
    try {
      return std::make_shared<const Artifact>(decode_entry(r.bytes, key.canonical()));
    } catch (const EntryError& e) {
      ++corrupt_;
      if (folder_.remove_if_same(rel, r.id)) subtract(known_bytes_, r.size);
      if (log::level() <= log::Level::debug)
        log::debug("disk cache: " + (folder_.dir() / rel).string() + ": " + e.what() + ": deleted");
      return nullptr;
    }
  } catch (...) {
    ++errors_;
    return nullptr;
  }
}

void DiskTier::store(const ReferenceEncodeKey& key, const Artifact& stored) noexcept {
  try {
    if (!folder_.enabled()) return;
    if (stored.byte_size() > options_.max_entry_bytes) {
      if (log::level() <= log::Level::debug)
        log::debug("disk cache: artifact of " + std::to_string(stored.byte_size()) +
                   " bytes is over max_entry_bytes: not written");
      return;
    }
    std::vector<char> bytes = encode_entry(key.canonical(), stored);
    if (bytes.size() > options_.max_entry_bytes) return;
    FileWrite w = folder_.write(relative_path(key), bytes);
    if (!w.ok) {
      ++errors_;
      return;
    }
    ++writes_;
    known_bytes_ += bytes.size();
    subtract(known_bytes_, w.replaced_bytes);
    if (known_bytes_.load() > options_.max_disk_bytes) maybe_evict();
  } catch (...) {
    ++errors_;
  }
}

TierStats DiskTier::stats() const {
  TierStats s;
  s.disk_hits = hits_;
  s.disk_misses = misses_;
  s.disk_writes = writes_;
  s.disk_errors = errors_;
  s.disk_corrupt = corrupt_;
  s.disk_evictions = evictions_;
  s.disk_bytes = known_bytes_;
  return s;
}

void DiskTier::maybe_evict() noexcept {
  try {
    std::unique_lock lock(gc_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;  // another thread is evicting
    // Evict to 90% of the bound so that the next scan is many writes away.
    evict_to(options_.max_disk_bytes / 10 * 9, options_.max_disk_bytes);
  } catch (...) {}
}

GcReport DiskTier::evict_to(std::uint64_t target, std::uint64_t bound) {
  GcReport g;
  std::vector<EntryFile> files;
  g.stale_temp_files = folder_.walk(
      {}, [&](const EntryFile& f) { files.push_back(f); }, options_.stale_temp_age);
  for (const auto& f : files) g.bytes_before += f.size;
  g.entries_before = files.size();
  std::uint64_t total = g.bytes_before;
  std::uint64_t entries = files.size();
  if (total > bound) {
    std::sort(files.begin(), files.end(), [](const EntryFile& a, const EntryFile& b) {
      return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec : a.mtime.tv_nsec < b.mtime.tv_nsec;
    });
    for (const auto& f : files) {
      if (total <= target) break;
      std::error_code ec;
      if (fs::remove(f.path, ec)) {
        total -= f.size;
        --entries;
        ++g.evicted;
        ++evictions_;
      } else if (!ec) {
        total -= f.size;  // already gone: another process evicted it
        --entries;
      }
    }
  }
  g.bytes_after = total;
  g.entries_after = entries;
  known_bytes_ = total;
  return g;
}

ScanReport DiskTier::scan() const {
  ScanReport s;
  if (!folder_.enabled()) return s;
  s.stale_temp_files = folder_.walk(
      {},
      [&](const EntryFile& f) {
        ModelUsage& m = s.models[first_component(f.rel)];
        ++m.entries;
        m.bytes += f.size;
        ++s.entries;
        s.bytes += f.size;
      },
      options_.stale_temp_age);
  return s;
}

GcReport DiskTier::gc(std::optional<std::uint64_t> max_bytes) {
  if (!folder_.enabled()) return {};
  std::lock_guard lock(gc_mutex_);
  const std::uint64_t bound = max_bytes.value_or(options_.max_disk_bytes);
  GcReport g = evict_to(bound, bound);
  folder_.walk(
      {},
      [&](const EntryFile& f) {
        if (clean_stale_lock(f.path)) ++g.stale_lock_files;
      },
      options_.stale_temp_age, ".lock");
  return g;
}

std::uint64_t DiskTier::clear(const std::optional<std::string>& model_id) {
  if (!folder_.enabled()) return 0;
  std::vector<fs::path> rels;
  fs::path sub = model_id ? fs::path(sanitize_component(*model_id)) : fs::path();
  folder_.walk(
      sub, [&](const EntryFile& f) { rels.push_back(f.rel); }, options_.stale_temp_age);
  std::uint64_t removed = 0;
  for (const auto& rel : rels) {
    std::uint64_t n = folder_.remove(rel);
    if (n || !fs::exists(folder_.dir() / rel)) {
      ++removed;
      subtract(known_bytes_, n);
    }
  }
  return removed;
}

VerifyReport DiskTier::verify(bool remove) {
  VerifyReport v;
  if (!folder_.enabled()) return v;
  std::vector<EntryFile> files;
  folder_.walk(
      {}, [&](const EntryFile& f) { files.push_back(f); }, options_.stale_temp_age);
  for (const auto& f : files) {
    ++v.checked;
    std::string reason;
    FileRead r = folder_.read(f.rel, options_.max_entry_bytes, /*touch=*/false);
    if (r.status == ReadStatus::absent) {
      --v.checked;  // deleted meanwhile
      continue;
    }
    if (r.status == ReadStatus::too_large) {
      reason = "larger than max_entry_bytes (" + std::to_string(r.size) + " bytes)";
    } else if (r.status == ReadStatus::io_error) {
      reason = "read error: " + std::error_code(r.error, std::generic_category()).message();
    } else {
      try {
        std::string key_text;
        decode_entry(r.bytes, "", &key_text);
        ReferenceEncodeKey key = ReferenceEncodeKey::from_canonical(key_text);
        if (relative_path(key) != f.rel) reason = "holds the key of another file";
      } catch (const std::exception& e) {
        reason = e.what();
      }
    }
    if (reason.empty()) {
      ++v.ok;
      continue;
    }
    v.corrupt.push_back({f.path.string(), reason});
    if (remove) {
      bool gone = r.status == ReadStatus::ok ? folder_.remove_if_same(f.rel, r.id) : folder_.remove(f.rel) > 0;
      if (gone) {
        ++v.removed;
        subtract(known_bytes_, f.size);
      }
    }
  }
  return v;
}

std::shared_ptr<DiskTier> open_disk_tier(DiskTierOptions options) {
  return std::make_shared<DiskTier>(std::move(options));
}

}  // namespace refenc::store
