// ReferenceEncodeService: cached, single-flight reference encoding (M4a), with opt-in batching (M4b).
//
// One call, `get_or_encode`, turns a raw reference request into a caller-owned artifact:
//
//   1. normalize the input and compute its key (the hook; no key = uncacheable: encode and return);
//   2. memory hit  -> load_artifact from the cached shared_ptr<const StoredT>, without the mutex: hits
//      run in ReadMostlyLock read sections, so concurrent hits write no shared cache line; only
//      inserting into (or clearing) the memory tier waits for the read sections in progress;
//   3. same key in flight -> wait for that leader (up to `timeout`, the caller's deadline or its stop
//      request), then load its result or rethrow a copy of its error with this caller's context;
//   4. otherwise lead: second tier (if any), else encode (alone, or through the batch queue when M4b is
//      on), store_artifact, revalidate, insert (unless too large or revalidate said no), resolve the
//      waiters, leave the in-flight map; then write through to the second tier.
//
// Failures are never cached; the next request for the key leads a new attempt. Every path, failing
// ones included, takes its flight out of the in-flight map (unless forget or abandonment already
// did) before its waiters wake.
//
// Giving up (CallOptions: a deadline, a stop token) is per caller, like Go's singleflight with
// Forget: a caller that gives up gets Error(timeout) or Error(cancelled) and leaves the others alone.
// Only when every caller of a flight has given up is the flight abandoned: it leaves the in-flight map
// (the next call starts afresh), the encode is asked to stop (EncodeContext), and whatever it returns
// is discarded, never cached. The leader's caller is the thread running the encode, so when it gives
// up while followers remain, its thread keeps encoding for them and gets its error when that ends.
// `forget(key)` drops a key and detaches its flight: the flight's waiters still get its result, but
// it is not cached (a voice deleted while it was being encoded stays deleted).
//
//   auto hook = std::make_shared<FishHook>(options);
//   ReferenceEncodeService<Ref, Artifact, Artifact, Request> service(hook, {.max_bytes = 256 << 20});
//   Artifact codes = service.get_or_encode(request, "user 42 clip");
//   std::stop_source client_gone;
//   codes = service.get_or_encode(request, "user 42 clip", nullptr,
//                                 {.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5),
//                                  .stop = client_gone.get_token()});
//   service.forget(*hook->cache_key(hook->normalize_input(request)));   // the voice was deleted
//   service.stats().hits;
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
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
  std::size_t max_items = 256;                  ///< Memory-tier entry bound (>= 1).
  std::size_t max_bytes = 64u << 20;            ///< Memory-tier byte bound (>= 1).
  std::chrono::milliseconds timeout{130'000};   ///< How long a follower waits for its leader (>= 1 ms).
  std::string log_prefix;                       ///< Prepended to this service's log lines.
  std::size_t max_batch_size = 1;               ///< M4b: > 1 enables batching for hooks that can batch.
  std::chrono::microseconds max_batch_wait{0};  ///< M4b: longest a queued item waits for company.
  std::size_t batch_workers = 1;                ///< M4b: threads running batches at once (>= 1).
  BatchGrouping batch_grouping;                 ///< M4b: how a batch may mix lengths (hook's batch_length).
  /// M4b: false = an artifact from a batch answers its callers but is neither cached nor written to
  /// the second tier, so the cache fills only from single encodes (for a batch path that is not
  /// bit-exact).
  bool cache_batched = true;
};

/// Per-call limits of get_or_encode. A caller that reaches one gets an error of its own; the encode
/// goes on for the callers that remain and stops only when none does.
struct CallOptions {
  /// Give up at this time with Error(timeout). A follower also gives up after ServiceOptions::timeout.
  /// The caller that leads notices its deadline when the encode ends or the hook polls
  /// EncodeContext::cancel_requested().
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// Give up, with Error(cancelled), when a stop is requested on it (a client gone, a request aborted).
  std::stop_token stop;
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
    if (options_.batch_workers < 1) throw Error(ErrorKind::config, "batch_workers must be at least 1");
    if (options_.max_batch_size > 1 && hook_->can_encode_batch()) {
      batcher_ = std::make_unique<BatchCoalescer<InputT, ArtifactT>>(
          [h = hook_](std::span<const InputT* const> items) { return h->encode_batch(items); }, options_.max_batch_size,
          options_.max_batch_wait, options_.batch_workers, options_.batch_grouping,
          [h = hook_](const InputT& item) { return h->batch_length(item); });
    }
  }

  ~ReferenceEncodeService() { close(); }
  ReferenceEncodeService(const ReferenceEncodeService&) = delete;
  ReferenceEncodeService& operator=(const ReferenceEncodeService&) = delete;

  /// The artifact for `raw`, caller-owned. Throws an Error (its own object, whose message starts with
  /// `desc` when given): the hook's bad_input/encode errors, timeout for a follower that waited too
  /// long or a caller past its deadline, cancelled for a caller whose stop was requested, closed after
  /// close(). `trace`, when given, receives timestamps and the outcome.
  ArtifactT get_or_encode(const RawT& raw, std::string_view desc = {}, RequestTrace* trace = nullptr,
                          const CallOptions& call = {}) {
    if (trace) {
      *trace = RequestTrace{};
      trace->start = RequestTrace::Clock::now();
    }
    try {
      if (std::optional<ErrorKind> gone = given_up(call)) {
        count_given_up(*gone, trace);
        throw given_up_error(*gone);
      }
      ArtifactT out = lookup_or_encode(raw, trace, call);
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
      s.encode_ns = encode_ns_.load(std::memory_order_relaxed);
      s.entries = cache_.size();
      s.bytes = cache_.bytes();
      s.evictions = cache_.evictions();
    }
    if (batcher_) {
      auto b = batcher_->stats();
      s.batches = b.batches;
      s.batched_items = b.batched_items;
      s.failed_batches = b.failed_batches;
      s.batch_sizes = b.sizes;
      s.batch_length_units = b.length_units;
      s.batch_padded_units = b.padded_units;
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

  /// Invalidates `key`: drops its memory-tier entry and detaches an encode of it in flight, whose
  /// callers still get its result but which is neither cached nor written to the second tier; the
  /// next call for the key starts a new encode. The second tier's own entry is the caller's to delete
  /// (before calling this, so that no new encode reads it back). True when there was anything to drop.
  bool forget(const ReferenceEncodeKey& key) {
    std::lock_guard lock(mutex_);
    const bool detached = inflight_.erase(key) > 0;
    ReadMostlyLock::Writer writer(readers_);  // a hit may be copying the entry
    return cache_.erase(key) || detached;
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

  /// One in-flight encode. Guarded by the service mutex; waiters block on `cv`. It is the key's
  /// *current* flight while inflight_ maps the key to it; only a current flight caches its result.
  struct Flight {
    bool done = false;
    std::shared_ptr<const StoredT> value;  ///< Set on success.
    ErrorKind error_kind = ErrorKind::encode;
    std::string error_message;       ///< Set on failure (value is null).
    std::condition_variable_any cv;  ///< _any: a follower's wait also ends on its stop token.
    int waiters = 1;                 ///< Callers still waiting, the leader's caller included.
    bool abandoned = false;          ///< Every caller gave up: the result is discarded.
    /// Requested once abandoned (EncodeContext's token). Only a flight whose leader's caller can give
    /// up can be abandoned (it is the one waiter that no timeout removes), so only such a flight has one.
    std::stop_source stop{std::nostopstate};
  };

  static void mark(RequestTrace* t, Clock::time_point RequestTrace::*field) {
    if (t) t->*field = Clock::now();
  }

  /// Why the caller has given up by now, if it has.
  static std::optional<ErrorKind> given_up(const CallOptions& call) {
    if (call.stop.stop_requested()) return ErrorKind::cancelled;
    if (call.deadline && Clock::now() >= *call.deadline) return ErrorKind::timeout;
    return std::nullopt;
  }
  static Error given_up_error(ErrorKind why) {
    return why == ErrorKind::cancelled ? Error(why, "cancelled by the caller")
                                       : Error(why, "deadline passed before the artifact was ready");
  }
  void count_given_up(ErrorKind why, RequestTrace* trace) {
    {
      std::lock_guard lock(mutex_);
      ++(why == ErrorKind::cancelled ? counters_.cancelled : counters_.timeouts);
    }
    if (trace) (why == ErrorKind::cancelled ? trace->cancelled : trace->timed_out) = true;
  }

  /// A caller leaves `flight` (mutex held). True when it was the last one: the flight is then
  /// abandoned (it leaves inflight_ and its result will be discarded) and the caller must request
  /// `flight.stop` once it has released the mutex (stop callbacks are the hook's code).
  bool leave(const ReferenceEncodeKey& key, const std::shared_ptr<Flight>& flight) {
    if (--flight->waiters > 0 || flight->done) return false;
    flight->abandoned = true;
    ++counters_.abandoned;
    if (auto it = inflight_.find(key); it != inflight_.end() && it->second == flight) inflight_.erase(it);
    return true;
  }

  bool is_current(const ReferenceEncodeKey& key, const std::shared_ptr<Flight>& flight) const {
    auto it = inflight_.find(key);
    return it != inflight_.end() && it->second == flight;
  }

  ArtifactT lookup_or_encode(const RawT& raw, RequestTrace* trace, const CallOptions& call) {
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
      // The caller is the only one waiting: its own stop and deadline are the encode's.
      auto past_deadline = [&call] { return Clock::now() >= *call.deadline; };
      const EncodeContext ctx = call.deadline ? EncodeContext(call.stop, past_deadline) : EncodeContext(call.stop);
      std::optional<ArtifactT> out;
      try {
        out.emplace(encode(*input, trace, ctx));
      } catch (...) {
        if (!given_up(call)) throw;
      }
      if (std::optional<ErrorKind> gone = given_up(call)) {  // it gave up while its encode ran
        count_given_up(*gone, trace);
        throw given_up_error(*gone);
      }
      if (trace) trace->outcome = RequestOutcome::uncacheable;
      return std::move(*out);
    }

    check_open();
    if (ReadMostlyLock::Reader reader(readers_); reader) {
      if (const std::shared_ptr<const StoredT>* hit = cache_.find(*key)) {
        ArtifactT out = hook_->load_artifact(**hit);  // the entry cannot go while this section lasts
        hits_.add();  // after the copy: the stamp store that find made has had time to land
        if (trace) {
          trace->outcome = RequestOutcome::hit;
          trace->stored_bytes = hook_->stored_bytes(**hit);
        }
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
        if (trace) {
          trace->outcome = RequestOutcome::hit;
          trace->stored_bytes = hook_->stored_bytes(*hit);
        }
        return out;
      }
      if (auto it = inflight_.find(*key); it != inflight_.end()) {
        ++counters_.merged;
        return follow(*key, it->second, lock, trace, call);
      }
      ++counters_.misses;
      flight = std::make_shared<Flight>();
      if (call.stop.stop_possible() || call.deadline) flight->stop = std::stop_source();
      inflight_.emplace(*key, flight);
    }
    return lead(*input, *key, flight, trace, call);
  }

  /// Waits (lock held on entry) for the leader's result; a copy of its error on failure. Gives up at
  /// the follower timeout, the caller's deadline or its stop request, whichever comes first.
  ArtifactT follow(const ReferenceEncodeKey& key, std::shared_ptr<Flight> flight, std::unique_lock<std::mutex>& lock,
                   RequestTrace* trace, const CallOptions& call) {
    mark(trace, &RequestTrace::encode_start);
    ++flight->waiters;
    Clock::time_point limit = Clock::now() + options_.timeout;
    const bool by_deadline = call.deadline && *call.deadline < limit;
    if (by_deadline) limit = *call.deadline;
    if (!flight->cv.wait_until(lock, call.stop, limit, [&] { return flight->done; })) {
      const bool cancelled = call.stop.stop_requested();
      ++(cancelled ? counters_.cancelled : counters_.timeouts);
      if (trace) (cancelled ? trace->cancelled : trace->timed_out) = true;
      const bool abandoned = leave(key, flight);
      lock.unlock();
      if (abandoned) flight->stop.request_stop();
      if (cancelled || by_deadline) throw given_up_error(cancelled ? ErrorKind::cancelled : ErrorKind::timeout);
      throw Error(ErrorKind::timeout, "gave up after " + std::to_string(options_.timeout.count()) +
                                          " ms waiting for the same-key encode in flight");
    }
    lock.unlock();
    mark(trace, &RequestTrace::encode_end);
    if (!flight->value) throw Error(flight->error_kind, flight->error_message);
    if (trace) {
      trace->outcome = RequestOutcome::merged;
      trace->stored_bytes = hook_->stored_bytes(*flight->value);
    }
    return hook_->load_artifact(*flight->value);
  }

  /// Leads the load of `key`: second tier, else encode; then resolves the waiters and, when the
  /// flight is still current, caches the result and writes it through. The leader's caller may give
  /// up meanwhile (a stop request at once, its deadline when noticed); the encode goes on while a
  /// follower waits, and the caller gets its error when the encode ends.
  ArtifactT lead(const InputT& input, const ReferenceEncodeKey& key, const std::shared_ptr<Flight>& flight,
                 RequestTrace* trace, const CallOptions& call) {
    const Clock::time_point started = Clock::now();
    std::optional<ErrorKind> caller_gone;  // guarded by mutex_: why the leader's caller left
    auto give_up = [&](ErrorKind why) {    // called without the mutex, from any thread
      bool abandoned = false;
      {
        std::lock_guard lock(mutex_);
        if (caller_gone || flight->done) return;
        caller_gone = why;
        ++(why == ErrorKind::cancelled ? counters_.cancelled : counters_.timeouts);
        abandoned = leave(key, flight);
      }
      if (abandoned) flight->stop.request_stop();
    };
    // A deadline signals nothing by itself: a poll of the hook notices it.
    auto notice_deadline = [&] {
      if (Clock::now() >= *call.deadline) give_up(ErrorKind::timeout);
      return false;  // the flight's stop, requested if this caller was the last, is the answer
    };
    const EncodeContext ctx = call.deadline ? EncodeContext(flight->stop.get_token(), std::ref(notice_deadline))
                                            : EncodeContext(flight->stop.get_token());

    std::shared_ptr<const StoredT> stored;
    std::shared_ptr<void> lease;  // other processes sharing the tier wait for this one's entry
    bool from_disk = false;
    bool from_shared = false;
    bool cacheable = false;
    std::size_t bytes = 0;
    std::exception_ptr failure;
    {
      // Destroyed before the result is published: its destructor waits for a callback in progress.
      std::stop_callback on_stop(call.stop, [&] { give_up(ErrorKind::cancelled); });
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
          bool batched = false;
          ArtifactT artifact = encode(input, trace, ctx, &batched);
          stored = std::make_shared<const StoredT>(hook_->store_artifact(artifact));
          cacheable = hook_->revalidate(input, key) && (options_.cache_batched || !batched);
        } else {
          cacheable = true;
        }
        bytes = hook_->stored_bytes(*stored);
      } catch (...) {
        failure = std::current_exception();
      }
    }

    std::optional<Error> error;
    if (failure) error = to_error(failure);
    bool inserted = false;
    bool current = false;
    std::optional<ErrorKind> gone;
    {
      std::lock_guard lock(mutex_);
      current = is_current(key, flight);  // not when abandoned or forgotten: its result is not cached
      if (!caller_gone && (caller_gone = given_up(call))) {
        // A deadline (or stop) noticed only now: the load is done, so the followers and the cache
        // still get it; only this caller gets its error.
        ++(*caller_gone == ErrorKind::cancelled ? counters_.cancelled : counters_.timeouts);
      }
      gone = caller_gone;
      ++counters_.loads;
      counters_.load_ns += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - started).count());
      if (error) {
        if (!flight->abandoned) ++counters_.failed;
        flight->error_kind = error->kind();
        flight->error_message = error->what();
      } else {
        if (current && cacheable) {
          ReadMostlyLock::Writer writer(readers_);  // waits for the hits in progress to finish
          inserted = cache_.put(key, stored, bytes);
          if (!inserted) ++counters_.oversize;
        }
        flight->value = stored;
      }
      if (current) inflight_.erase(key);
      flight->done = true;
    }
    flight->cv.notify_all();
    if (!error && current && cacheable && !inserted && log::level() <= log::Level::debug)
      log::debug(options_.log_prefix + "artifact of " + std::to_string(bytes) + " bytes exceeds max_bytes " +
                 std::to_string(options_.max_bytes) + ": returned, not cached");
    if (!error && tier_ && current && cacheable && !from_disk) tier_->store(key, *stored);
    lease.reset();
    if (gone) {
      if (trace) (*gone == ErrorKind::cancelled ? trace->cancelled : trace->timed_out) = true;
      throw given_up_error(*gone);
    }
    if (error) throw *error;
    if (trace) {
      trace->outcome = from_shared ? RequestOutcome::shared_hit
                       : from_disk ? RequestOutcome::disk_hit
                                   : RequestOutcome::encoded;
      trace->cached = inserted;
      trace->stored_bytes = bytes;
    }
    return hook_->load_artifact(*stored);
  }

  /// One encode, through the batch queue when M4b is active; a failed batch is retried alone. `ctx`
  /// tells whether anybody still waits: a queued item leaves the queue, and no encode begins, when not.
  /// `batched`, when given, is set when a batch produced the artifact.
  ArtifactT encode(const InputT& input, RequestTrace* trace, const EncodeContext& ctx, bool* batched = nullptr) {
    mark(trace, &RequestTrace::encode_start);
    struct Timer {
      std::atomic<std::uint64_t>& total;
      Clock::time_point start = Clock::now();
      ~Timer() {
        total.fetch_add(static_cast<std::uint64_t>(
                            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count()),
                        std::memory_order_relaxed);
      }
    } timer{encode_ns_};
    if (batcher_) {
      int batch_size = 0;
      double padding = 0;
      std::uint64_t batch_id = 0;
      std::optional<ArtifactT> out = batcher_->submit(input, &batch_size, ctx.stop_token(), &padding, &batch_id);
      if (out) {
        if (batched) *batched = true;
        if (trace) trace->batch_size = batch_size, trace->batch_padding = padding, trace->batch_id = batch_id;
        mark(trace, &RequestTrace::encode_end);
        return std::move(*out);
      }
    }
    if (ctx.cancel_requested()) throw Error(ErrorKind::cancelled, "every caller gave up before the encode began");
    ArtifactT out = hook_->encode_one_cancellable(input, ctx);
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
  ServiceStats counters_;                    ///< All counters but hits.
  StripedCounter hits_;                      ///< Hits, counted per thread: a hit writes no shared counter.
  std::atomic<std::uint64_t> encode_ns_{0};  ///< ServiceStats::encode_ns, added to outside the mutex.
  std::atomic<bool> closed_{false};
};

}  // namespace refenc
