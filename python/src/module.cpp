// refenc._core: the compiled half of the `refenc` Python package (see refenc/__init__.py for the
// public API). It binds PyService (the C++ ReferenceEncodeService over Python objects), the second
// tiers (disk, Redis), the disk folder's maintenance and the registered voices. refenc::Error becomes ValueError (bad input, bad
// configuration), TimeoutError (timeouts) or RuntimeError (the rest).
//
//   import refenc._core as core
//   tier = core.open_tier("/tmp/cache", 1 << 30, None, "", 0, 250, False)
//   svc = core.Service(hook, sizer, False, 256, 64 << 20, 130000, 1, 0, "", error_factory, tier)
//   svc.get_or_encode(item, key, "clip 1")   # desc: a str or None
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "audio_bindings.hpp"
#include "disk_cache_bindings.hpp"
#include "encoder_bindings.hpp"
#include "py_service.hpp"
#include "py_tier.hpp"
#include "py_voice_cache.hpp"
#include "store/disk_tier.hpp"
#include "store/redis_tier.hpp"
#include "store/tier_chain.hpp"

namespace py = pybind11;
using namespace refenc;
using namespace refenc::python;

namespace {

std::shared_ptr<const ArtifactCodec> codec() {
  return std::make_shared<const ArtifactCodec>(py::module_::import("refenc._artifact"));
}

std::shared_ptr<store::RedisTier> open_redis(const std::optional<std::string>& url, const std::string& prefix,
                                             std::int64_t ttl_s, std::int64_t timeout_ms, bool insecure) {
  if (!url || url->empty()) return nullptr;
  if (ttl_s < 0) throw Error(ErrorKind::config, "shared_cache_ttl must be >= 0, got " + std::to_string(ttl_s));
  if (timeout_ms < 1 || timeout_ms > 60'000)
    throw Error(ErrorKind::config, "shared_cache_timeout must be within 1..60000 ms, got " + std::to_string(timeout_ms));
  store::RedisTierOptions o;
  o.url = *url;
  o.prefix = prefix;
  o.ttl = std::chrono::seconds(ttl_s);
  o.connect_timeout = std::chrono::milliseconds(timeout_ms);
  o.command_timeout = std::chrono::milliseconds(timeout_ms);
  o.allow_insecure = insecure;
  return store::open_redis_tier(std::move(o));
}

std::shared_ptr<PyTier> open_tier(const std::optional<std::string>& cache_dir, std::uint64_t max_disk_bytes,
                                  const std::optional<std::string>& shared_cache, const std::string& prefix,
                                  std::int64_t ttl_s, std::int64_t timeout_ms, bool insecure) {
  std::shared_ptr<store::RedisTier> redis = open_redis(shared_cache, prefix, ttl_s, timeout_ms, insecure);
  std::shared_ptr<store::DiskTier> disk;
  if (cache_dir) {
    if (max_disk_bytes < 1) throw Error(ErrorKind::config, "max_disk_bytes must be >= 1");
    py::gil_scoped_release nogil;
    disk = store::open_disk_tier({.root = *cache_dir, .max_disk_bytes = max_disk_bytes});
  }
  if (!disk && !redis) return nullptr;
  std::shared_ptr<SecondTier<Artifact>> inner;
  if (redis)
    inner = std::make_shared<store::TierChain>(disk, redis);
  else
    inner = disk;
  return std::make_shared<PyTier>(std::move(inner), codec());
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "refenc's compiled core: the C++ ReferenceEncodeService over Python hooks and artifacts.";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      switch (e.kind()) {
        case ErrorKind::bad_input:
        case ErrorKind::config: PyErr_SetString(PyExc_ValueError, e.what()); return;
        case ErrorKind::timeout: PyErr_SetString(PyExc_TimeoutError, e.what()); return;
        default: PyErr_SetString(PyExc_RuntimeError, e.what()); return;
      }
    }
  });

  py::class_<PyTier, std::shared_ptr<PyTier>>(m, "Tier", "A second tier (disk, Redis, or both) for a Service.")
      .def("stats", [](const PyTier& t) {
        TierStats s;
        {
          py::gil_scoped_release nogil;
          s = t.stats();
        }
        ServiceStats all;
        all.tier = s;
        py::dict d;
        for (const auto& [name, value] : all.fields())
          if (name.rfind("disk_", 0) == 0 || name.rfind("shared_", 0) == 0) d[py::str(name)] = value;
        d["unconvertible"] = t.unconvertible();
        return d;
      });

  m.def("open_tier", &open_tier, py::arg("cache_dir"), py::arg("max_disk_bytes"), py::arg("shared_cache"),
        py::arg("shared_cache_prefix"), py::arg("shared_cache_ttl"), py::arg("shared_cache_timeout"),
        py::arg("shared_cache_insecure"),
        "The second tier the options name (a disk folder, a Redis URL, or both chained), or None.");

  py::class_<PyService>(m, "Service", "The C++ ReferenceEncodeService driving a Python hook.")
      .def(py::init([](py::object hook, py::object sizer, bool can_batch, std::uint64_t max_items,
                       std::uint64_t max_bytes, std::int64_t timeout_ms, std::uint64_t max_batch_size,
                       std::int64_t max_batch_wait_us, std::string log_prefix, py::object error_factory,
                       std::shared_ptr<PyTier> tier) {
             ServiceOptions o;
             o.max_items = static_cast<std::size_t>(max_items);
             o.max_bytes = static_cast<std::size_t>(max_bytes);
             o.timeout = std::chrono::milliseconds(timeout_ms);
             o.max_batch_size = static_cast<std::size_t>(max_batch_size);
             o.max_batch_wait = std::chrono::microseconds(max_batch_wait_us);
             o.log_prefix = std::move(log_prefix);
             return std::make_unique<PyService>(std::move(hook), std::move(sizer), can_batch, std::move(o),
                                                std::move(tier), std::move(error_factory));
           }),
           py::arg("hook"), py::arg("sizer"), py::arg("can_batch"), py::arg("max_items"), py::arg("max_bytes"),
           py::arg("timeout_ms"), py::arg("max_batch_size"), py::arg("max_batch_wait_us"), py::arg("log_prefix"),
           py::arg("error_factory"), py::arg("tier").none(true))
      .def("get_or_encode", &PyService::get_or_encode, py::arg("item"), py::arg("key"), py::arg("desc"))
      .def("stats", &PyService::stats)
      .def("prometheus_text", &PyService::prometheus, py::arg("labels"), py::arg("prefix"))
      .def("inflight", &PyService::inflight)
      .def("close", &PyService::close, py::arg("wait_s"))
      .def("wait_closed", &PyService::wait_closed, py::arg("wait_s"))
      .def("clear", &PyService::clear)
      .def_property_readonly("batching", &PyService::batching)
      .def("batch_worker_alive", &PyService::batch_worker_alive);

  py::class_<PyVoiceCache>(m, "VoiceCache", "Registered voices: memory (pinned), disk, and optionally Redis.")
      .def(py::init([](const std::optional<std::string>& root, std::uint64_t max_voices, bool persist,
                       std::uint64_t max_entry_bytes, const std::optional<std::string>& shared_cache,
                       const std::string& prefix, std::int64_t ttl_s, std::int64_t timeout_ms, bool insecure) {
             if (max_voices < 1) throw Error(ErrorKind::config, "max_voices must be >= 1, got 0");
             store::VoiceCacheOptions o;
             o.root = root.value_or("");
             o.persist = persist;
             o.max_voices = static_cast<std::size_t>(max_voices);
             o.max_entry_bytes = max_entry_bytes;
             return std::make_unique<PyVoiceCache>(std::move(o), open_redis(shared_cache, prefix, ttl_s, timeout_ms, insecure),
                                                   codec());
           }),
           py::arg("root"), py::arg("max_voices"), py::arg("persist"), py::arg("max_entry_bytes"),
           py::arg("shared_cache"), py::arg("shared_cache_prefix"), py::arg("shared_cache_ttl"),
           py::arg("shared_cache_timeout"), py::arg("shared_cache_insecure"))
      .def("put",
           [](PyVoiceCache& v, std::string model, std::string voice, py::handle artifact, std::string version,
              std::string kind) { return v.put({std::move(model), std::move(voice), std::move(version), std::move(kind)}, artifact); },
           py::arg("model"), py::arg("voice"), py::arg("artifact"), py::arg("version"), py::arg("artifact_kind"))
      .def("get",
           [](PyVoiceCache& v, std::string model, std::string voice, std::string version, std::string kind) {
             return v.get({std::move(model), std::move(voice), std::move(version), std::move(kind)});
           },
           py::arg("model"), py::arg("voice"), py::arg("version"), py::arg("artifact_kind"))
      .def("clear_voice", &PyVoiceCache::clear_voice, py::arg("voice"), py::arg("model"))
      .def("clear", &PyVoiceCache::clear)
      .def("voice_count", &PyVoiceCache::voice_count)
      .def("list", &PyVoiceCache::list, py::arg("voice"))
      .def("stats", &PyVoiceCache::stats)
      .def_property_readonly("persistent", &PyVoiceCache::persistent)
      .def_property_readonly("folder", &PyVoiceCache::folder);

  bind_disk_cache(m);
  bind_audio(m);
  bind_encoders(m);

  m.attr("UNBOUNDED") = std::numeric_limits<std::uint64_t>::max() / 2;
}
