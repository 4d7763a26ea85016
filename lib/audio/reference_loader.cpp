#include "audio/reference_loader.hpp"

#include "audio/base64.hpp"
#include "audio/content_key.hpp"
#include "audio/data_uri.hpp"
#include "audio/decode.hpp"
#include "audio/local_file.hpp"
#include "audio/loudness.hpp"
#include "audio/path_key_memo.hpp"
#include "audio/polyphase_resampler.hpp"
#include "audio/resample.hpp"
#include "core/error.hpp"

#include <chrono>

namespace refenc::audio {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

[[noreturn]] void refuse_url(const std::string& what) {
  throw Error(ErrorKind::bad_input, what + ": URLs are not fetched; pass a local file or the bytes");
}

void check_payload_size(const std::string& what, std::size_t size, const DecodeLimits& limits) {
  if (size == 0) throw Error(ErrorKind::bad_input, what + ": empty input");
  if (size > limits.max_payload_bytes)
    throw Error(ErrorKind::bad_input, what + ": payload too large (" + std::to_string(size) + " bytes > " +
                                          std::to_string(limits.max_payload_bytes) + " byte limit)");
}

/// The bytes a non-path, non-URL source carries, decoded and size-checked.
std::string payload_of(const ReferenceSource& source, const std::string& what, const DecodeLimits& limits) {
  std::string bytes;
  switch (source.kind) {
    case ReferenceSource::Kind::bytes: bytes = source.value; break;
    case ReferenceSource::Kind::base64: bytes = decode_base64(source.value, what, limits.max_payload_bytes); break;
    case ReferenceSource::Kind::data_uri: bytes = decode_data_uri(source.value, what, limits.max_payload_bytes); break;
    default: break;
  }
  check_payload_size(what, bytes.size(), limits);
  return bytes;
}

}  // namespace

std::string reference_content_key(const ReferenceSource& source, const DecodeLimits& limits, bool trust_stat) {
  const std::string what = source.describe();
  switch (source.kind) {
    case ReferenceSource::Kind::path: {
      const FileIdentity id = stat_reference_file(source.value);
      if (id.size == 0) throw Error(ErrorKind::bad_input, what + ": empty file");
      return path_cache_key(path_key_memo(), source.value, trust_stat, limits.max_payload_bytes);
    }
    case ReferenceSource::Kind::url:
      if (source.url_content_digest.empty()) return {};
      if (!is_content_digest(source.url_content_digest))
        throw Error(ErrorKind::bad_input, what + ": content digest is not a lower-case SHA-256 hex string");
      return source.url_content_digest;
    default: return content_key(payload_of(source, what, limits));
  }
}

LoadedReference load_reference(const ReferenceSource& source, const LoadOptions& options) {
  LoadedReference out;
  out.description = source.describe();
  const std::string& what = out.description;
  out.source.kind = source.kind;
  out.source.url_content_digest = source.url_content_digest;
  if (source.kind == ReferenceSource::Kind::path || source.kind == ReferenceSource::Kind::url)
    out.source.value = source.value;
  if (source.kind == ReferenceSource::Kind::url) refuse_url(what);
  if (options.target_rate <= 0)
    throw Error(ErrorKind::config, what + ": target sample rate " + std::to_string(options.target_rate) + " Hz");

  auto start = Clock::now();
  std::string bytes;
  if (source.kind == ReferenceSource::Kind::path) {
    FileIdentity identity;
    bytes = read_reference_file(source.value, options.limits.max_payload_bytes, &identity);
    out.timings.read = since(start);
    start = Clock::now();
    // Key exactly the bytes decoded below; with trust_stat an unchanged file reuses its memoised digest.
    std::optional<PathKeyMemo::Entry> memo;
    if (options.trust_stat) memo = memoised_path_key(path_key_memo(), source.value);
    if (memo && memo->identity == identity) {
      out.content_key = memo->digest;
    } else {
      out.content_key = content_key(bytes);
      remember_path_key(path_key_memo(), source.value, identity, out.content_key, sentinel_digest(bytes));
    }
  } else {
    bytes = payload_of(source, what, options.limits);
    out.timings.read = since(start);
    start = Clock::now();
    out.content_key = content_key(bytes);
  }
  out.payload_bytes = bytes.size();
  out.timings.key = since(start);

  // Decoded chunks go straight into the resampler when the polyphase filter takes this ratio, so the
  // clip is never held at its source rate.
  struct Sink final : DecodeSink {
    const LoadOptions* options = nullptr;
    std::optional<PolyphaseStream> stream;
    std::vector<float> kept;  // at the source rate, when not streamed
    double resample_seconds = 0;
    void start(int sample_rate, std::size_t frames_hint) override {
      // Ratios resample() refuses (outside 1/256..256) are left to it, to refuse them after decoding.
      const double ratio = double(options->target_rate) / sample_rate;
      if (sample_rate != options->target_rate && options->quality == ResampleQuality::polyphase && ratio >= 1.0 / 256 &&
          ratio <= 256)
        stream = PolyphaseStream::open(sample_rate, options->target_rate, frames_hint);
      if (!stream) kept.reserve(frames_hint);
    }
    void samples(std::span<const float> mono) override {
      if (!stream) {
        kept.insert(kept.end(), mono.begin(), mono.end());
        return;
      }
      const auto t = Clock::now();
      stream->push(mono);
      resample_seconds += since(t);
    }
  } sink;
  sink.options = &options;
  start = Clock::now();
  const DecodedAudio decoded = decode_audio(bytes, options.limits, what, sink);
  bytes = {};
  out.timings.decode = since(start) - sink.resample_seconds;
  out.source_rate = decoded.sample_rate;
  out.source_channels = decoded.channels;
  out.source_format = decoded.format;

  start = Clock::now();
  if (sink.stream)
    out.samples = sink.stream->finish();
  else if (decoded.sample_rate == options.target_rate)
    out.samples = std::move(sink.kept);
  else
    out.samples = resample(sink.kept, decoded.sample_rate, options.target_rate, options.quality, what);
  out.sample_rate = options.target_rate;
  out.timings.resample = since(start) + sink.resample_seconds;

  if (options.loudness_target_dbfs) {
    start = Clock::now();
    out.gain_db = normalize_loudness(out.samples, *options.loudness_target_dbfs, options.max_gain_db);
    out.timings.normalize = since(start);
  }
  return out;
}

bool still_current(const LoadedReference& ref) {
  if (ref.source.kind != ReferenceSource::Kind::path) return true;
  try {
    return reference_path_cache_key(ref.source.value, false) == ref.content_key;
  } catch (const Error&) {
    return false;  // deleted, replaced by a directory, unreadable: not the clip that was loaded
  }
}

}  // namespace refenc::audio
