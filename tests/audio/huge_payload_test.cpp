// Payloads far over the size limit, through the public loader API: refused with Error(bad_input)
// naming the reason, before the decoder allocates anything sized by the payload. Peak RSS is measured
// in a forked child (getrusage's ru_maxrss is a high-water mark, so earlier tests in this process
// must not set it): the child builds the input in place (no second copy that would raise the mark
// above the input itself), reads its peak, loads, and reads its peak again.
#include "audio/reference_loader.hpp"
#include "core/error.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>

using namespace refenc;
using namespace refenc::audio;
using namespace refenc::audio::test;

namespace {

long peak_rss_kb() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

struct Refusal {
  bool refused = false;
  bool bad_input = false;
  long input_kb = 0;   ///< Peak RSS growth while building the input.
  long refuse_kb = 0;  ///< Peak RSS growth while load_reference refused it.
  std::string message;
};

/// In a child process: builds the source with `make` (peak measured), calls load_reference on it
/// (peak measured again) and reports back through a pipe.
Refusal refuse_in_child(const std::function<ReferenceSource()>& make) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    char out[1024] = {};
    const long start = peak_rss_kb();
    const ReferenceSource source = make();
    const long built = peak_rss_kb();
    int refused = 0, bad_input = 0;
    std::string message;
    try {
      load_reference(source, {});
    } catch (const Error& e) {
      refused = 1;
      bad_input = e.kind() == ErrorKind::bad_input;
      message = e.what();
    } catch (const std::exception& e) {
      refused = 1;
      message = e.what();
    }
    const long after = peak_rss_kb();
    const int n = std::snprintf(out, sizeof out, "%d %d %ld %ld %.900s", refused, bad_input, built - start,
                                after - built, message.c_str());
    const bool sent = n > 0 && ::write(fds[1], out, static_cast<std::size_t>(n)) == n;
    ::_exit(sent ? 0 : 1);
  }
  ::close(fds[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  Refusal r;
  int refused = 0, bad_input = 0, used = 0;
  REQUIRE(std::sscanf(text.c_str(), "%d %d %ld %ld %n", &refused, &bad_input, &r.input_kb, &r.refuse_kb, &used) == 4);
  r.refused = refused;
  r.bad_input = bad_input;
  r.message = text.substr(static_cast<std::size_t>(used));
  return r;
}

constexpr std::size_t kHuge = 300'000'000;  // characters of base64 text: 225 MB decoded
constexpr long kBoundKb = 4096;             // what refusing may add to the peak, whatever the input size

}  // namespace

TEST_CASE("a 300 MB base64 payload or data URI is refused without allocating for it", "[broken][memory]") {
  const std::size_t limit = DecodeLimits{}.max_payload_bytes;
  REQUIRE(kHuge / 4 * 3 > 3 * limit);

  SECTION("base64 text") {
    const Refusal r = refuse_in_child([] { return ReferenceSource::from_base64(std::string(kHuge, 'A')); });
    INFO(r.message);
    CHECK(r.refused);
    CHECK(r.bad_input);
    CHECK_THAT(r.message, Catch::StartsWith("base64 payload (300000000 chars): payload too large"));
    CHECK_THAT(r.message, Catch::Contains(std::to_string(limit) + " byte limit"));
    INFO("input " << r.input_kb << " KB, refusing " << r.refuse_kb << " KB");
    CHECK(r.input_kb > 250'000);  // the measurement sees the input itself
    CHECK(r.refuse_kb < kBoundKb);
  }
  SECTION("base64 text with line breaks every 76 characters") {
    const Refusal r = refuse_in_child([] {
      std::string text;
      text.reserve(kHuge + kHuge / 76 * 2);
      while (text.size() < kHuge) text.append(std::string(76, 'Q')).append("\r\n");
      return ReferenceSource::from_base64(std::move(text));
    });
    INFO(r.message);
    CHECK(r.bad_input);
    CHECK_THAT(r.message, Catch::Contains("payload too large"));
    INFO("input " << r.input_kb << " KB, refusing " << r.refuse_kb << " KB");
    CHECK(r.refuse_kb < kBoundKb);
  }
  SECTION("data URI") {
    const Refusal r = refuse_in_child([] {
      std::string uri = "data:audio/wav;base64,";
      uri.reserve(uri.size() + kHuge);
      uri.append(kHuge, 'A');
      return ReferenceSource::from_data_uri(std::move(uri));  // no copy: the peak is the input itself
    });
    INFO(r.message);
    CHECK(r.bad_input);
    CHECK_THAT(r.message, Catch::StartsWith("data URI (300000022 bytes): payload too large"));
    INFO("input " << r.input_kb << " KB, refusing " << r.refuse_kb << " KB");
    CHECK(r.input_kb > 250'000);
    CHECK(r.refuse_kb < kBoundKb);
  }
  SECTION("data URI with percent-escaped base64") {
    const Refusal r = refuse_in_child([] {
      std::string uri = "data:audio/wav;base64,";
      uri.reserve(uri.size() + kHuge);
      while (uri.size() < kHuge) uri.append("AAAA%2B%2BAA");
      return ReferenceSource::from_data_uri(std::move(uri));  // no copy: the peak is the input itself
    });
    INFO(r.message);
    CHECK(r.bad_input);
    CHECK_THAT(r.message, Catch::Contains("payload too large"));
    INFO("input " << r.input_kb << " KB, refusing " << r.refuse_kb << " KB");
    CHECK(r.refuse_kb < kBoundKb);
  }
  SECTION("percent-encoded data URI") {
    const Refusal r = refuse_in_child([] {
      std::string uri = "data:audio/wav,";
      uri.reserve(uri.size() + kHuge);
      while (uri.size() < kHuge) uri.append("RIFF%00%01");
      return ReferenceSource::from_data_uri(std::move(uri));  // no copy: the peak is the input itself
    });
    INFO(r.message);
    CHECK(r.bad_input);
    CHECK_THAT(r.message, Catch::Contains("payload too large"));
    INFO("input " << r.input_kb << " KB, refusing " << r.refuse_kb << " KB");
    CHECK(r.refuse_kb < kBoundKb);
  }
}

TEST_CASE("a base64 payload just under the size limit decodes; one byte over is refused", "[memory]") {
  // 8 channels of 16-bit 48 kHz for 87 s: a WAV of 64 MiB less 1 KiB, inside the default limits.
  const std::size_t limit = DecodeLimits{}.max_payload_bytes;
  const std::size_t data_bytes = (limit - 1024 - 44) / 16 * 16;
  const std::string wav = wav_bytes(8, 48000, 16, static_cast<std::uint32_t>(data_bytes), data_bytes);
  REQUIRE(wav.size() < limit);
  REQUIRE(wav.size() > limit - 2048);
  const std::string b64 = encode_base64(wav);

  LoadOptions opt;
  opt.target_rate = 48000;
  const LoadedReference r = load_reference(ReferenceSource::from_base64(b64), opt);
  CHECK(r.payload_bytes == wav.size());
  CHECK(r.source_channels == 8);
  CHECK(r.samples.size() == data_bytes / 16);
  CHECK(r.description == "base64 payload (" + std::to_string(b64.size()) + " chars)");
  const LoadedReference u = load_reference(ReferenceSource::parse("data:audio/wav;base64," + b64), opt);
  CHECK(u.payload_bytes == wav.size());
  CHECK(u.content_key == r.content_key);

  opt.limits.max_payload_bytes = wav.size() - 1;
  CHECK_THROWS_WITH(
      load_reference(ReferenceSource::from_base64(b64), opt),
      Catch::Contains("payload too large") && Catch::Contains(std::to_string(wav.size() - 1) + " byte limit"));
}
