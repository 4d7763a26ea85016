// The profiler's Python hook backend (apps/refenc/python_backend.hpp) against the C++ path: the
// example TorchScript hook (python/examples/torchscript_hook.py), run in the embedded interpreter,
// must write the same disk entries (same keys, same artifacts) as refenc's own encoder over the
// same module file; it must read the C++ path's entries as hits; M4b batches through its
// encode_batch with bit-exact parity; a hook's failure reaches its request only.
#include <torch/script.h>
#undef CHECK  // LibTorch's logging macro; the tests use Catch's

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "core/error.hpp"
#include "encoder_backend.hpp"
#include "python_backend.hpp"
#include "store/disk_tier.hpp"
#include "util/source_dir.hpp"

using namespace refenc;
using namespace refenc::profile;
namespace fs = std::filesystem;

namespace {

const fs::path source_dir = refenc::source_dir();

/// A folder under the temporary directory, removed with its contents.
struct Folder {
  fs::path path;
  explicit Folder(const std::string& name) : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() { fs::remove_all(path); }
};

/// A Fish-convention module: forward(wave[1, 1, N]) -> codes [1, 10, ceil(N / 2048)] from a seeded
/// projection of each 2048-sample frame (so the codes depend on every sample).
std::string save_module(const fs::path& dir) {
  torch::jit::Module m("FishCodes");
  torch::manual_seed(7);
  m.register_parameter("proj", torch::randn({10, 2048}), false);
  m.define(R"(
def forward(self, wave: Tensor) -> Tensor:
    n = wave.size(2)
    t = (n + 2047) // 2048
    frames = torch.constant_pad_nd(wave.reshape([-1]), [0, t * 2048 - n], 0.0).reshape([t, 2048])
    y = torch.matmul(frames, self.proj.t())
    return torch.remainder((y.abs() * 1000.0).long(), 1024).t().unsqueeze(0)
)");
  const std::string path = (dir / "fish.pt").string();
  m.save(path);
  return path;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Every regular file under `root` by relative path, with its bytes.
std::map<std::string, std::string> files_under(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().filename().string().rfind(".", 0) != 0)
      out[fs::relative(e.path(), root).string()] = read_file(e.path());
  return out;
}

ModelSpec cpp_spec(const std::string& module) {
  ModelSpec s;
  s.name = "fish-s2-pro";
  s.encoder.module_path = module;
  s.encoder.threads = 1;
  return s;
}

ModelSpec python_spec(const std::string& module, const std::string& factory = "torchscript_hook:make_hook") {
  ModelSpec s;
  s.name = "fish-s2-pro";
  s.encoder.python = factory;
  s.encoder.python_path = {(source_dir / "python" / "examples").string()};
  s.encoder.python_args = R"({"module": ")" + module + R"(", "model": "fish-s2-pro", "threads": 1})";
  s.encoder.threads = 1;
  return s;
}

/// Two references: a 44.1 kHz file sent as a path, and a 24 kHz file sent as bytes (resampled).
std::vector<ReferenceItem> references() {
  ReferenceItem a{"en-m-44k", (source_dir / "workloads/clips/en-m-44k.flac").string(), nullptr, 0, 44100};
  ReferenceItem b{"de-m-24k#bytes", "", std::make_shared<const std::string>(read_file(source_dir / "workloads/clips/de-m-24k.flac")),
                  0, 24000};
  return {a, b};
}

void encode_all(ModelBackend& backend, const std::string& tier_root, const std::vector<ReferenceItem>& refs,
                std::vector<RequestTrace>* traces = nullptr) {
  ArmSpec m4a;
  auto service = backend.make_service(m4a, CacheSpec{}, tier_root);
  for (std::size_t i = 0; i < refs.size(); ++i) {
    RequestTrace t;
    service->encode(WorkItem{i, &refs[i], "", ""}, t);
    if (traces) traces->push_back(t);
  }
}

}  // namespace

TEST_CASE("the example TorchScript hook writes the C++ path's entries", "[python]") {
  REQUIRE(python_hooks_available());
  Folder dir("refenc-python-backend");
  const std::string module = save_module(dir.path);
  const auto refs = references();
  const fs::path cpp_tier = dir.path / "cpp", py_tier = dir.path / "py";

  auto cpp = encoder_backend_factory()(cpp_spec(module));
  auto py = encoder_backend_factory()(python_spec(module));
  CHECK(py->info().name == "fish-s2-pro");
  CHECK(py->info().can_encode_batch);
  CHECK(py->info().sample_rate == 44100);
  encode_all(*cpp, cpp_tier.string(), refs);
  encode_all(*py, py_tier.string(), refs);

  const auto cpp_files = files_under(cpp_tier), py_files = files_under(py_tier);
  std::size_t entries = 0;
  for (const auto& [name, bytes] : cpp_files) entries += name.ends_with(".pt");
  CHECK(entries == refs.size());
  REQUIRE(cpp_files.size() == py_files.size());
  for (const auto& [name, bytes] : cpp_files) {
    INFO(name);
    REQUIRE(py_files.count(name) == 1);  // the entry's name is its key's digest
    if (name.ends_with(".pt")) CHECK(py_files.at(name) == bytes);  // key, tensors, metadata, checksum
  }

  SECTION("the Python hook's service reads the C++ path's entries as disk hits") {
    std::vector<RequestTrace> traces;
    encode_all(*py, cpp_tier.string(), refs, &traces);
    for (const RequestTrace& t : traces) CHECK(t.outcome == RequestOutcome::disk_hit);
  }
}

TEST_CASE("M4b batches through the Python hook with bit-exact parity", "[python]") {
  Folder dir("refenc-python-batch");
  const std::string module = save_module(dir.path);
  const auto refs = references();
  auto py = encoder_backend_factory()(python_spec(module));
  ArmSpec m4b;
  m4b.arm = Arm::m4b;
  m4b.max_batch_size = 4;
  m4b.max_batch_wait_ms = 50;
  m4b.batch_workers = 1;
  auto service = py->make_service(m4b, CacheSpec{}, "");
  REQUIRE(service->batching());
  service->keep_batched(8);
  std::vector<std::jthread> callers;
  std::vector<RequestTrace> traces(refs.size());
  for (std::size_t i = 0; i < refs.size(); ++i)
    callers.emplace_back([&, i] { service->encode(WorkItem{i, &refs[i], "", ""}, traces[i]); });
  callers.clear();
  for (const ParityCheck& c : service->check_parity()) {
    CHECK(c.error.empty());
    CHECK(c.parity.identical);
  }
  CHECK(service->stats().misses == refs.size());
}

TEST_CASE("a Python hook's failures are one clear error each", "[python]") {
  Folder dir("refenc-python-errors");
  const std::string module = save_module(dir.path);

  SECTION("a missing module or factory, or a raising factory, fails the backend") {
    CHECK_THROWS_WITH(encoder_backend_factory()(python_spec(module, "no_such_module:make_hook")),
                      Catch::Contains("fish-s2-pro: encoder.python 'no_such_module:make_hook'") &&
                          Catch::Contains("ModuleNotFoundError"));
    CHECK_THROWS_WITH(encoder_backend_factory()(python_spec(module, "torchscript_hook:no_factory")),
                      Catch::Contains("module has no 'no_factory'"));
    CHECK_THROWS_WITH(encoder_backend_factory()(python_spec((dir.path / "missing.pt").string())),
                      Catch::Contains("ValueError") && Catch::Contains("no such file"));
  }
  SECTION("a request the hook refuses fails alone; the others complete") {
    auto py = encoder_backend_factory()(python_spec(module));
    auto service = py->make_service(ArmSpec{}, CacheSpec{}, "");
    auto refs = references();
    ReferenceItem bad{"not-audio", "", std::make_shared<const std::string>("this is not audio"), 0, 0};
    RequestTrace t;
    CHECK_THROWS_WITH(service->encode(WorkItem{0, &bad, "", ""}, t),
                      Catch::Contains("fish-s2-pro: not-audio: normalize_input") && Catch::Contains("ValueError"));
    for (std::size_t i = 0; i < refs.size(); ++i) {
      RequestTrace ok;
      CHECK_NOTHROW(service->encode(WorkItem{i + 1, &refs[i], "", ""}, ok));
    }
    CHECK(service->stats().misses == refs.size());
  }
}
