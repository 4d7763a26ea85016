#include "audio/reference_loader.hpp"
#include "core/error.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <limits>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace refenc;
using namespace refenc::audio;
using namespace refenc::audio::test;

namespace {

struct BrokenCase {
  std::string name;
  std::function<ReferenceSource()> source;
  std::string expected;  ///< substring of the error message
  DecodeLimits limits = {};
};

std::string float_wav_with(float value, long frames = 8000) {
  TempDir dir;
  std::vector<float> s(static_cast<std::size_t>(frames), 0.1f);
  s[static_cast<std::size_t>(frames / 2)] = value;
  const std::string p = dir.file("f.wav");
  write_audio(p, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 16000, 1, frames, &s);
  return read_bytes(p);
}

}  // namespace

TEST_CASE("broken inputs are refused with a specific bad_input error", "[broken]") {
  TempDir dir;
  const std::string good = dir.file("good.flac");
  REQUIRE(write_audio(good, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 16000, 1, 16000));
  const std::string good_bytes = read_bytes(good);
  const std::string good_wav = dir.file("good.wav");
  REQUIRE(write_audio(good_wav, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 2, 32000));
  const std::string wav_bytes_ok = read_bytes(good_wav);

  write_bytes(dir.file("empty.wav"), "");
  write_bytes(dir.file("text.wav"), "This is not audio.\nJust a note renamed to .wav\n");
  std::string garbage(5000, '\0');
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919 + 13) % 251);
  write_bytes(dir.file("garbage.wav"), garbage);
  write_bytes(dir.file("truncated-header.wav"), wav_bytes_ok.substr(0, 30));
  write_bytes(dir.file("truncated.flac"), good_bytes.substr(0, 200));
  std::filesystem::create_directory(dir.file("a-directory.wav"));
  REQUIRE(::mkfifo(dir.file("fifo.wav").c_str(), 0600) == 0);
  {
    const int fd = ::open(dir.file("huge.wav").c_str(), O_CREAT | O_WRONLY, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, 10LL << 30) == 0);  // 10 GB, sparse: refused from its size, never read
    ::close(fd);
  }
  write_audio(dir.file("short.wav"), SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, 1600);
  write_audio(dir.file("long.wav"), SF_FORMAT_WAV | SF_FORMAT_PCM_U8, 8000, 1, 8000 * 101);
  write_audio(dir.file("long.flac"), SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 8000, 1, 8000 * 101);
  write_bytes(dir.file("zero-channels.wav"), wav_bytes(0, 16000, 16, 32000, 32000));
  write_bytes(dir.file("zero-rate.wav"), wav_bytes(1, 0, 16, 32000, 32000));
  write_bytes(dir.file("absurd-rate.wav"), wav_bytes(1, 2000000000, 16, 32000, 32000));
  write_bytes(dir.file("many-channels.wav"), wav_bytes(200, 16000, 16, 64000, 64000));
  write_bytes(dir.file("absurd-size.wav"), wav_bytes(2, 16000, 16, 0xFFFFFFF0u, 64000));
  write_bytes(dir.file("no-data.wav"), wav_bytes(1, 16000, 16, 0, 0));

  DecodeLimits tight;
  tight.max_payload_bytes = 1000;
  DecodeLimits one_second;
  one_second.max_seconds = 1.0;

  auto path = [&](const std::string& name) { return [p = dir.file(name)] { return ReferenceSource::from_path(p); }; };
  auto bytes = [](std::string b) { return [b] { return ReferenceSource::from_bytes(b); }; };

  const std::vector<BrokenCase> cases = {
      {"missing file", path("missing.wav"), "missing.wav: no such file"},
      {"empty path", [] { return ReferenceSource::from_path(""); }, "no file name given"},
      {"directory", path("a-directory.wav"), "is a directory"},
      {"fifo", path("fifo.wav"), "not a regular file"},
      {"device", [] { return ReferenceSource::from_path("/dev/zero"); }, "not a regular file"},
      {"empty file", path("empty.wav"), "empty.wav: empty file"},
      {"10 GB file", path("huge.wav"), "file too large (10737418240 bytes > 67108864 byte limit)"},
      {"over the payload limit", path("good.flac"), "file too large", tight},
      {"text renamed .wav", path("text.wav"), "text.wav: not an audio file (looks like text"},
      {"garbage", path("garbage.wav"), "garbage.wav: not a readable audio file"},
      {"truncated header", path("truncated-header.wav"), "not a readable audio file"},
      {"truncated FLAC", path("truncated.flac"), "truncated.flac: "},
      {"too short", path("short.wav"), "too short (0.1 s < 0.25 s minimum)"},
      {"too long (header)", path("long.wav"), "too long (101 s > 100 s maximum)"},
      {"too long (FLAC)", path("long.flac"), "too long"},
      {"too long (limit)", path("good.wav"), "too long (2 s > 1 s maximum)", one_second},
      {"zero channels", path("zero-channels.wav"), "zero-channels.wav: "},
      {"zero rate", path("zero-rate.wav"), "zero-rate.wav: "},
      {"absurd rate", path("absurd-rate.wav"), "absurd-rate.wav: "},
      {"too many channels", path("many-channels.wav"), "too many channels (200 > 64)"},
      {"no audio data", path("no-data.wav"), "no-data.wav: "},
      {"NaN sample", bytes(float_wav_with(std::numeric_limits<float>::quiet_NaN())), "non-finite sample"},
      {"infinite sample", bytes(float_wav_with(std::numeric_limits<float>::infinity())), "non-finite sample"},
      {"huge sample", bytes(float_wav_with(3e38f)), "sample magnitude out of range"},
      {"empty bytes", bytes(""), "0 raw bytes: empty input"},
      {"bytes over the limit", bytes(good_bytes), "payload too large", tight},
      {"http URL", [] { return ReferenceSource::parse("http://example.com/a.wav"); },
       "URL http://example.com/a.wav: URLs are not fetched; pass a local file or the bytes"},
      {"https URL with digest", [] { return ReferenceSource::from_url("https://e.com/a.wav", std::string(64, 'a')); },
       "URLs are not fetched"},
      {"malformed base64", [] { return ReferenceSource::from_base64("UklG*RiQ="); },
       "malformed base64: invalid character '*'"},
      {"truncated base64", [] { return ReferenceSource::from_base64("UklGR"); }, "malformed base64: truncated"},
      {"empty base64", [] { return ReferenceSource::from_base64(""); }, "empty input"},
      {"data URI without comma", [] { return ReferenceSource::parse("data:audio/wav;base64"); }, "no ','"},
      {"data URI of text", [] { return ReferenceSource::parse("data:text/plain,hello"); }, "is not audio"},
      {"data URI with bad escape", [] { return ReferenceSource::parse("data:audio/wav,%G1"); }, "bad percent escape"},
      {"data URI of garbage", [] { return ReferenceSource::parse("data:audio/wav;base64,AAAAAAAAAAAA"); },
       "not a readable audio file"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    LoadOptions opt;
    opt.limits = c.limits;
    try {
      load_reference(c.source(), opt);
      FAIL_CHECK("accepted: " << c.name);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::bad_input);
      CHECK_THAT(e.what(), Catch::Contains(c.expected));
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("a header announcing more data than present decodes only the data present", "[broken]") {
  const std::string bytes = wav_bytes(2, 16000, 16, 0xFFFFFFF0u, 64000);
  const LoadedReference r = load_reference(ReferenceSource::from_bytes(bytes), {.target_rate = 16000});
  CHECK(r.samples.size() == 16000);
  CHECK(r.source_channels == 2);
}
