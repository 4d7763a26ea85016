// Loading a reference clip: from any source kind to the float32 mono samples an encoder consumes,
// with the content identity that keys its cache entry.
//
//   auto src = audio::ReferenceSource::parse("clip.flac");          // path, data: URI, http(s) URL
//   audio::LoadOptions opt{.target_rate = 44100};
//   audio::LoadedReference ref = audio::load_reference(src, opt);    // throws Error(bad_input)
//   ref.samples;      // contiguous float32 mono at 44.1 kHz
//   ref.content_key;  // SHA-256 hex of the bytes consumed; empty = uncacheable (URL without digest)
//   audio::still_current(ref);   // false if a local file changed since it was keyed
#pragma once

#include "audio/decode_limits.hpp"
#include "audio/resample_quality.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace refenc::audio {

/// Where a reference comes from. `value` holds the path, the raw bytes, the base64 text, the data URI
/// or the URL, according to `kind`.
struct ReferenceSource {
  enum class Kind { path, bytes, base64, data_uri, url };
  Kind kind = Kind::path;
  std::string value;
  /// For URLs only: a content digest already materialized by an upstream fetch layer (SHA-256 hex of
  /// the fetched bytes). Without it a URL is uncacheable.
  std::string url_content_digest;

  static ReferenceSource from_path(std::string path);
  static ReferenceSource from_bytes(std::string bytes);
  static ReferenceSource from_base64(std::string text);
  static ReferenceSource from_data_uri(std::string uri);
  static ReferenceSource from_url(std::string url, std::string content_digest = {});
  /// Command-line form: "data:..." is a data URI, "http://"/"https://" a URL, anything else a path.
  static ReferenceSource parse(std::string_view text);
  /// Short human description for error messages: the path, "data URI (123 bytes)", "4096 raw bytes".
  std::string describe() const;
};

struct LoadOptions {
  int target_rate = 24000;  ///< The encoder's input rate.
  /// Default chosen from measurements (docs/figures.md): polyphase reaches ~140 dB SNR on test tones (sinc best:
  /// 138-154 dB, medium: 111-131 dB) at under a twentieth of best's cost and a ninth of medium's.
  ResampleQuality quality = ResampleQuality::polyphase;
  DecodeLimits limits;
  /// When set, loudness-normalise to this dBFS (RMS) with the gain clamped to +-max_gain_db.
  std::optional<double> loudness_target_dbfs;
  double max_gain_db = 3.0;
  bool trust_stat = false;  ///< reference_path_cache_key's trust_stat for path sources.
};

/// Wall time spent in each step of a load, in seconds.
struct LoadTimings {
  double read = 0, key = 0, decode = 0, resample = 0, normalize = 0;
};

struct LoadedReference {
  ReferenceSource source;      ///< As given (the payload of bytes/base64 sources is not kept).
  std::vector<float> samples;  ///< Mono float32 at `sample_rate`, contiguous.
  int sample_rate = 0;
  int source_rate = 0;
  int source_channels = 0;
  std::string source_format;  ///< libsndfile's format name, e.g. "FLAC".
  std::string content_key;    ///< SHA-256 hex of the consumed bytes; empty when uncacheable.
  std::uint64_t payload_bytes = 0;
  double gain_db = 0;  ///< Loudness gain applied (0 when not normalised).
  LoadTimings timings;
  std::string description;  ///< source.describe() at load time, for messages about this reference.
  double seconds() const { return sample_rate > 0 ? double(samples.size()) / sample_rate : 0.0; }
};

/// Reads, validates, keys, decodes, downmixes, resamples (and optionally normalises) a reference.
/// URLs are never fetched: they throw Error(bad_input) ("URLs are not fetched ...").
LoadedReference load_reference(const ReferenceSource& source, const LoadOptions& options);

/// False when `ref` came from a local file whose content key has changed since it was loaded; true
/// for every other source kind. Hooks call it from revalidate().
bool still_current(const LoadedReference& ref);

/// Content identity of a local file: SHA-256 of its whole content, memoised (path_key_memo.hpp).
std::string reference_path_cache_key(const std::string& path, bool trust_stat = false);

/// The content key `load_reference` would give `source`, without decoding any audio: the (memoised)
/// whole-file digest for a path, the digest of the decoded bytes for bytes/base64/data URIs, the
/// supplied digest for a URL (empty when none: uncacheable). Hooks use it to look the cache up before
/// loading, and to re-key a path input in revalidate(). Throws Error(bad_input) like load_reference.
std::string reference_content_key(const ReferenceSource& source, const DecodeLimits& limits = {},
                                  bool trust_stat = false);

}  // namespace refenc::audio
