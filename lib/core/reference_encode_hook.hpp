// ReferenceEncodeHook: the model semantics that ReferenceEncodeService calls.
//
// The service owns the mechanics (cache, single-flight, waiters, stats); a hook owns what a model
// means: how a raw request becomes an input, whether and how it is keyed, the encode itself, the
// cache-owned stored form and the caller-owned copy returned from it.
//
//   struct MyHook : refenc::ReferenceEncodeHook<Clip, Codes, Codes, ClipRequest> {
//     Clip normalize_input(const ClipRequest& r) override { return decode(r); }
//     std::optional<refenc::ReferenceEncodeKey> cache_key(const Clip& c) override { return key_of(c); }
//     Codes encode_one(const Clip& c) override { return net(c); }
//     Codes encode_one_cancellable(const Clip& c, const refenc::EncodeContext& ctx) override {
//       return net(c, [&] { return ctx.cancel_requested(); });  // net polls it between layers
//     }
//     Codes store_artifact(const Codes& a) override { return a.compact(); }
//     Codes load_artifact(const Codes& s) override { return s.widened_copy(); }
//     std::size_t stored_bytes(const Codes& s) const override { return s.bytes(); }
//   };
//
// Every method may be called from many threads at once; a hook must be thread-safe. A hook whose
// encode can stop early when every caller has given up also overrides `encode_one_cancellable`
// (the default calls encode_one).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/reference_encode_key.hpp"

namespace refenc {

/// What a running encode may ask the service: whether every caller waiting for its result has given
/// up (cancelled, or past its deadline). The result would then be discarded, so the encode may stop
/// early by throwing anything. A default-constructed context is never cancelled. A context is valid
/// only during the call it was passed to.
class EncodeContext {
 public:
  EncodeContext() = default;
  /// `stop` is signalled when everyone gave up; `poll`, when given, is called by cancel_requested()
  /// first (it notices deadlines, which signal nothing by themselves, and may request `stop`).
  explicit EncodeContext(std::stop_token stop, std::function<bool()> poll = {})
      : stop_(std::move(stop)), poll_(std::move(poll)) {}

  /// True once nobody waits for this encode any more. Cheap; meant to be polled between steps.
  bool cancel_requested() const { return (poll_ && poll_()) || stop_.stop_requested(); }
  /// Signalled when a stop request makes everyone give up, for std::stop_callback; a deadline shows
  /// here only once cancel_requested() (or the service) has noticed it.
  const std::stop_token& stop_token() const noexcept { return stop_; }

 private:
  std::stop_token stop_;
  std::function<bool()> poll_;
};

/// How an artifact from a batch compares with the single encode of the same input.
struct ArtifactParity {
  bool identical = true;               ///< Bit-identical (every tensor, shape and field).
  std::uint64_t mismatched_codes = 0;  ///< Integer elements, shapes or other fields that differ.
  double max_abs_diff = 0;             ///< Largest |batched - single| over floating-point elements.
};

/// InputT: the normalized input an encode consumes. ArtifactT: what callers receive (caller-owned).
/// StoredT: what the cache holds (cache-owned, immutable once stored). RawT: what callers pass to
/// get_or_encode; it defaults to InputT, in which case normalize_input defaults to a copy.
template <class InputT, class ArtifactT, class StoredT, class RawT = InputT>
class ReferenceEncodeHook {
 public:
  using Input = InputT;
  using Artifact = ArtifactT;
  using Stored = StoredT;
  using Raw = RawT;

  virtual ~ReferenceEncodeHook() = default;

  /// Turns a raw request into the input an encode consumes (decode, resample, validate). Throws
  /// Error(bad_input) for input that must be refused before any encode.
  virtual InputT normalize_input(const RawT& raw) {
    if constexpr (std::is_constructible_v<InputT, const RawT&>) {
      return InputT(raw);
    } else {
      throw Error(ErrorKind::config, "hook does not implement normalize_input");
    }
  }

  /// The cache key of an input, or no value when the input must not be cached (it then bypasses the
  /// cache and single-flight).
  virtual std::optional<ReferenceEncodeKey> cache_key(const InputT& item) = 0;

  /// Encodes one input. May throw; the failure reaches the caller and every same-key waiter.
  virtual ArtifactT encode_one(const InputT& item) = 0;

  /// What the service calls to encode one input: encode_one with a way to notice that nobody waits
  /// for the result any more (see EncodeContext). The default ignores `ctx` and calls encode_one.
  virtual ArtifactT encode_one_cancellable(const InputT& item, const EncodeContext& ctx) {
    (void)ctx;
    return encode_one(item);
  }

  /// The cache-owned form of an artifact (e.g. detached CPU tensors in the smallest lossless dtype).
  virtual StoredT store_artifact(const ArtifactT& artifact) = 0;

  /// A caller-owned artifact made from a stored one; must not share mutable state with it.
  virtual ArtifactT load_artifact(const StoredT& stored) = 0;

  /// Called after an encode and before insertion: false means "do not cache this result" (for
  /// example a local file changed while it was being encoded). The result is still returned.
  virtual bool revalidate(const InputT& /*item*/, const ReferenceEncodeKey& /*key*/) { return true; }

  /// Size in bytes of a stored artifact, as charged against the cache's byte budget.
  virtual std::size_t stored_bytes(const StoredT& stored) const = 0;

  /// Batching capability (M4b). Only hooks that return true get encode_batch calls, and only from a
  /// service configured with max_batch_size > 1.
  virtual bool can_encode_batch() const { return false; }

  /// Encodes several distinct inputs at once; must return exactly one artifact per item, in order,
  /// each equal to what encode_one would give. The default loops encode_one.
  virtual std::vector<ArtifactT> encode_batch(std::span<const InputT* const> items) {
    std::vector<ArtifactT> out;
    out.reserve(items.size());
    for (const InputT* item : items) out.push_back(encode_one(*item));
    return out;
  }

  /// An input's length in the dimension a batch pads (e.g. samples), for length-aware batching;
  /// 0 (the default) = unknown, which every grouping accepts.
  virtual std::size_t batch_length(const InputT& /*item*/) const { return 0; }

  /// Compares an artifact produced in a batch with the single encode of the same input (both as
  /// load_artifact returns them). The default uses operator== when ArtifactT has one (a difference
  /// counts as one mismatched code) and throws Error(config) otherwise.
  virtual ArtifactParity compare_artifacts(const ArtifactT& batched, const ArtifactT& single) const {
    if constexpr (std::equality_comparable<ArtifactT>) {
      const bool same = batched == single;
      return {same, same ? 0u : 1u, 0};
    } else {
      (void)batched, (void)single;
      throw Error(ErrorKind::config, "hook does not implement compare_artifacts");
    }
  }
};

}  // namespace refenc
