// ReferenceEncodeService: cached, single-flight reference encoding (M4a), with opt-in batching (M4b).
//
// One call, `get_or_encode`, turns a raw reference request into a caller-owned artifact:
//
//   1. normalize the input and compute its key (the hook; no key = uncacheable: encode and return);
//   2. memory hit  -> load_artifact from the cached shared_ptr<const StoredT>, without the mutex: hits
//      run in ReadMostlyLock read sections, so concurrent hits write no shared cache line; only
//      inserting into (or clearing) the memory tier waits for the read sections in progress;
//   3. same key in flight -> wait for that leader (up to `timeout`), then load its result or rethrow a
//      copy of its error with this caller's context;
//   4. otherwise lead: second tier (if any), else encode (alone, or through the batch queue when M4b is
//      on), store_artifact, revalidate, insert (unless too large or revalidate said no), resolve the
//      waiters, leave the in-flight map; then write through to the second tier.
//
// Failures are never cached; the next request for the key leads a new attempt. Every path, failing
// ones included, removes the in-flight entry before its waiters wake.
//
//   auto hook = std::make_shared<FishHook>(options);
//   ReferenceEncodeService<Ref, Artifact, Artifact, Request> service(hook, {.max_bytes = 256 << 20});
//   Artifact codes = service.get_or_encode(request, "user 42 clip");
//   service.stats().hits;
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/batch_coalescer.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/read_mostly_lock.hpp"
#include "core/reference_encode_hook.hpp"
#include "core/reference_encode_key.hpp"
#include "core/request_trace.hpp"
#include "core/second_tier.hpp"
#include "core/service_stats.hpp"
#include "core/stage_output_cache.hpp"
#include "core/striped_counter.hpp"

namespace refenc {

struct ServiceOptions {
  std::size_t max_items = 256;                   ///< Memory-tier entry bound (>= 1).
  std::size_t max_bytes = 64u << 20;             ///< Memory-tier byte bound (>= 1).
  std::chrono::milliseconds timeout{130'000};    ///< How long a follower waits for its leader (>= 1 ms).
  std::string log_prefix;                        ///< Prepended to this service's log lines.
  std::size_t max_batch_size = 1;                ///< M4b: > 1 enables batching for hooks that can batch.
  std::chrono::microseconds max_batch_wait{0};   ///< M4b: longest a queued item waits for company.
};

template <class InputT, class ArtifactT, class StoredT, class RawT = InputT>
class ReferenceEncodeService {
 public:
  using Hook = ReferenceEncodeHook<InputT, ArtifactT, StoredT, RawT>;
  using Tier = SecondTier<StoredT>;

  /// Throws Error(config) for a null hook or options out of range.
  explicit ReferenceEncodeService(std::shared_ptr<Hook> hook, ServiceOptions options = {},
                                  std::shared_ptr<Tier> tier = nullptr)
      : hook_(std::move(hook)),
        options_(std::move(options)),
        tier_(std::move(tier)),
        cache_(options_.max_items, options_.max_bytes) {
    if (!hook_) throw Error(ErrorKind::config, "ReferenceEncodeService needs a hook");
    if (options_.timeout.count() < 1) throw Error(ErrorKind::config, "timeout must be at least 1 ms");
    if (options_.max_batch_size < 1) throw Error(ErrorKind::config, "max_batch_size must be at least 1");
    if (options_.max_batch_wait.count() < 0) throw Error(ErrorKind::config, "max_batch_wait must not be negative");
    if (options_.max_batch_size > 1 && hook_->can_encode_batch()) {
      batcher_ = std::make_unique<BatchCoalescer<InputT, ArtifactT>>(
          [h = hook_](std::span<const InputT* const> items) { return h->encode_batch(items); },
          options_.max_batch_size, options_.max_batch_wait);
    }
  }

  ~ReferenceEncodeService() { close(); }
  ReferenceEncodeService(const ReferenceEncodeService&) = delete;
  ReferenceEncodeService& operator=(const ReferenceEncodeService&) = delete;

  /// The artifact for `raw`, caller-owned. Throws an Error (its own object, whose message starts with
  /// `desc` when given): the hook's bad_input/encode errors, timeout for a follower that waited too
  /// long, closed after close(). `trace`, when given, receives timestamps and the outcome.
  ArtifactT get_or_encode(const RawT& raw, std::string_view desc = {}, RequestTrace* trace = nullptr) {
    if (trace) {
      *trace = RequestTrace{};
      trace->start = RequestTrace::Clock::now();
    }
    try {
      ArtifactT out = lookup_or_encode(raw, trace);
      if (trace) trace->end = RequestTrace::Clock::now();
      return out;
    } catch (...) {
      if (trace) {
        trace->outcome = RequestOutcome::failed;
        trace->end = RequestTrace::Clock::now();
      }
      throw to_error(std::current_exception()).with_context(desc);
    }
  }

  /// A snapshot of the counters and gauges (second tier included).
  ServiceStats stats() const {
    ServiceStats s;
    {
      std::lock_guard lock(mutex_);
      s = counters_;
      s.hits = hits_.load();
      s.entries = cache_.size();
      s.bytes = cache_.bytes();
      s.evictions = cache_.evictions();
    }
    if (batcher_) {
      auto b = batcher_->stats();
      s.batches = b.batches;
      s.batched_items = b.batched_items;
      s.batch_sizes = b.sizes;
    }
    if (tier_) s.tier = tier_->stats();
    return s;
  }

  /// True when M4b batching is active (max_batch_size > 1 and the hook can batch).
  bool batching() const noexcept { return batcher_ != nullptr; }

  /// Drops every memory-tier entry (in-flight encodes and the second tier are untouched).
  void clear() {
    std::lock_guard lock(mutex_);
    ReadMostlyLock::Writer writer(readers_);
    cache_.clear();
  }

  /// Stops the batch worker and fails queued batch waiters with Error(closed); later calls throw
  /// Error(closed). Encodes already running finish. Idempotent; the destructor calls it.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_.store(true, std::memory_order_release);
    }
    if (batcher_) batcher_->close();
  }

  /// Internal consistency, for tests and stress runs: the byte gauge against a recount of the
  /// entries, and the number of encodes in flight.
  struct Audit {
    std::size_t entries = 0, bytes = 0, recounted_bytes = 0, in_flight = 0;
  };
  Audit audit() const {
    std::lock_guard lock(mutex_);
    return {cache_.size(), cache_.bytes(), cache_.recount_bytes(), inflight_.size()};
  }

  const ServiceOptions& options() const noexcept { return options_; }
  Hook& hook() const noexcept { return *hook_; }

 private:
  using Clock = RequestTrace::Clock;

  /// One in-flight encode. Guarded by the service mutex; waiters block on `cv`.
  struct Flight {
    bool done = false;
    std::shared_ptr<const StoredT> value;  ///< Set on success.
    ErrorKind error_kind = ErrorKind::encode;
    std::string error_message;             ///< Set on failure (value is null).
    std::condition_variable cv;
  };

  static void mark(RequestTrace* t, Clock::time_point RequestTrace::*field) {
    if (t) t->*field = Clock::now();
  }

  ArtifactT lookup_or_encode(const RawT& raw, RequestTrace* trace) {
    std::optional<InputT> input;
    try {
      input.emplace(hook_->normalize_input(raw));
    } catch (...) {
      throw to_error(std::current_exception(), ErrorKind::bad_input);
    }
    mark(trace, &RequestTrace::normalized);
    std::optional<ReferenceEncodeKey> key = hook_->cache_key(*input);
    if (trace) {
      trace->keyed = Clock::now();
      trace->key = key;
    }

    if (!key) {
      {
        std::lock_guard lock(mutex_);
        check_open();
        ++counters_.uncacheable;
      }
      ArtifactT out = encode(*input, trace);
      if (trace) trace->outcome = RequestOutcome::uncacheable;
      return out;
    }

    check_open();
    if (ReadMostlyLock::Reader reader(readers_); reader) {
      if (const std::shared_ptr<const StoredT>* hit = cache_.find(*key)) {
        ArtifactT out = hook_->load_artifact(**hit);  // the entry cannot go while this section lasts
        hits_.add();  // after the copy: the stamp store that find made has had time to land
        if (trace) trace->outcome = RequestOutcome::hit;
        return out;
      }
    }
    std::shared_ptr<Flight> flight;
    {
      std::unique_lock lock(mutex_);  // a miss, or a hit that met an insert in progress
      check_open();
      if (std::shared_ptr<const StoredT> hit = cache_.get(*key)) {
        lock.unlock();
        ArtifactT out = hook_->load_artifact(*hit);
        hits_.add();
        if (trace) trace->outcome = RequestOutcome::hit;
        return out;
      }
      if (auto it = inflight_.find(*key); it != inflight_.end()) {
        ++counters_.merged;
        return follow(it->second, lock, trace);
      }
      ++counters_.misses;
      flight = std::make_shared<Flight>();
      inflight_.emplace(*key, flight);
    }
    return lead(*input, *key, flight, trace);
  }

  /// Waits (lock held on entry) for the leader's result; a copy of its error on failure.
  ArtifactT follow(std::shared_ptr<Flight> flight, std::unique_lock<std::mutex>& lock, RequestTrace* trace) {
    mark(trace, &RequestTrace::encode_start);
    if (!flight->cv.wait_for(lock, options_.timeout, [&] { return flight->done; })) {
      ++counters_.timeouts;
      if (trace) trace->timed_out = true;
      throw Error(ErrorKind::timeout, "gave up after " + std::to_string(options_.timeout.count()) +
                                          " ms waiting for the same-key encode in flight");
    }
    lock.unlock();
    mark(trace, &RequestTrace::encode_end);
    if (!flight->value) throw Error(flight->error_kind, flight->error_message);
    if (trace) trace->outcome = RequestOutcome::merged;
    return hook_->load_artifact(*flight->value);
  }

  ArtifactT lead(const InputT& input, const ReferenceEncodeKey& key, const std::shared_ptr<Flight>& flight,
                 RequestTrace* trace) {
    std::shared_ptr<const StoredT> stored;
    std::shared_ptr<void> lease;  // other processes sharing the tier wait for this one's entry
    bool from_disk = false;
    bool from_shared = false;
    bool cacheable = false;
    std::size_t bytes = 0;
    try {
      if (tier_) {
        mark(trace, &RequestTrace::encode_start);
        TierLookup<StoredT> found = tier_->load_or_lead(key, options_.timeout);
        stored = std::move(found.stored);
        lease = std::move(found.lease);
        from_disk = stored != nullptr;
        from_shared = from_disk && found.shared;
        if (from_disk) mark(trace, &RequestTrace::encode_end);
      }
      if (!stored) {
        ArtifactT artifact = encode(input, trace);
        stored = std::make_shared<const StoredT>(hook_->store_artifact(artifact));
        cacheable = hook_->revalidate(input, key);
      } else {
        cacheable = true;
      }
      bytes = hook_->stored_bytes(*stored);
    } catch (...) {
      Error err = to_error(std::current_exception());
      {
        std::lock_guard lock(mutex_);
        ++counters_.failed;
        inflight_.erase(key);
        flight->error_kind = err.kind();
        flight->error_message = err.what();
        flight->done = true;
      }
      flight->cv.notify_all();
      throw err;
    }

    bool inserted = false;
    {
      std::lock_guard lock(mutex_);
      if (cacheable) {
        ReadMostlyLock::Writer writer(readers_);  // waits for the hits in progress to finish
        inserted = cache_.put(key, stored, bytes);
        if (!inserted) ++counters_.oversize;
      }
      inflight_.erase(key);
      flight->value = stored;
      flight->done = true;
    }
    flight->cv.notify_all();
    if (cacheable && !inserted && log::level() <= log::Level::debug)
      log::debug(options_.log_prefix + "artifact of " + std::to_string(bytes) + " bytes exceeds max_bytes " +
                 std::to_string(options_.max_bytes) + ": returned, not cached");
    if (tier_ && cacheable && !from_disk) tier_->store(key, *stored);
    lease.reset();
    if (trace) {
      trace->outcome = from_shared ? RequestOutcome::shared_hit
                       : from_disk ? RequestOutcome::disk_hit
                                   : RequestOutcome::encoded;
      trace->cached = inserted;
    }
    return hook_->load_artifact(*stored);
  }

  /// One encode, through the batch queue when M4b is active; a failed batch is retried alone.
  ArtifactT encode(const InputT& input, RequestTrace* trace) {
    mark(trace, &RequestTrace::encode_start);
    if (batcher_) {
      int batch_size = 0;
      std::optional<ArtifactT> out = batcher_->submit(input, &batch_size);
      if (out) {
        if (trace) trace->batch_size = batch_size;
        mark(trace, &RequestTrace::encode_end);
        return std::move(*out);
      }
    }
    ArtifactT out = hook_->encode_one(input);
    mark(trace, &RequestTrace::encode_end);
    return out;
  }

  void check_open() const {
    if (closed_.load(std::memory_order_acquire)) throw Error(ErrorKind::closed, "service is closed");
  }

  std::shared_ptr<Hook> hook_;
  ServiceOptions options_;
  std::shared_ptr<Tier> tier_;
  std::unique_ptr<BatchCoalescer<InputT, ArtifactT>> batcher_;

  // Hits read cache_ in read sections of readers_; whatever changes cache_ holds mutex_ *and* a
  // ReadMostlyLock::Writer. Everything else below is guarded by mutex_ alone.
  mutable std::mutex mutex_;
  ReadMostlyLock readers_;
  StageOutputCache<ReferenceEncodeKey, StoredT> cache_;
  std::unordered_map<ReferenceEncodeKey, std::shared_ptr<Flight>> inflight_;
  ServiceStats counters_;      ///< All counters but hits.
  StripedCounter hits_;        ///< Hits, counted per thread: a hit writes no shared counter.
  std::atomic<bool> closed_{false};
};

}  // namespace refenc
