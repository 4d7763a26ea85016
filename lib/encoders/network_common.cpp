#include "encoders/network_common.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/InferenceMode.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace refenc::encoders {

namespace nn {

namespace {
std::uint64_t seed_from_hex(const std::string& hex) {
  std::uint64_t seed = 0;
  for (std::size_t i = 0; i < 16 && i < hex.size(); ++i) {
    char c = hex[i];
    int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : 0;
    seed = (seed << 4) | static_cast<std::uint64_t>(v);
  }
  return seed;
}
}  // namespace

SeededInit::SeededInit(const std::string& seed_hex) : gen_(at::detail::createCPUGenerator(seed_from_hex(seed_hex))) {}

at::Tensor SeededInit::weight(at::IntArrayRef shape, std::int64_t fan_in, double gain) {
  return normal(shape, 0.0, gain / std::sqrt(static_cast<double>(std::max<std::int64_t>(fan_in, 1))));
}

at::Tensor SeededInit::normal(at::IntArrayRef shape, double mean, double std) {
  at::Tensor t = at::empty(shape, at::kFloat);
  t.normal_(mean, std, gen_);
  return t;
}

at::Tensor SeededInit::uniform(at::IntArrayRef shape, double lo, double hi) {
  at::Tensor t = at::empty(shape, at::kFloat);
  t.uniform_(lo, hi, gen_);
  return t;
}

void seed_tree(const std::vector<TensorSpec>& tree, SeededInit& init,
               const std::function<SeededKind(const std::string& name)>& kind_of, WeightMap& w) {
  auto is_gain = [](const std::string& n) { return ends_with(n, "original0") || ends_with(n, "weight_g"); };
  for (const TensorSpec& s : tree) {
    if (is_gain(s.name)) continue;  // set from its direction below
    switch (kind_of(s.name)) {
      case SeededKind::ones: w[s.name] = at::ones(s.shape); break;
      case SeededKind::layer_scale: w[s.name] = at::full(s.shape, 1e-2); break;
      case SeededKind::zeros: w[s.name] = at::zeros(s.shape); break;
      case SeededKind::normal: w[s.name] = init.normal(s.shape, 0.0, 1.0); break;
      case SeededKind::weight: {
        std::int64_t fan_in = 1;
        for (std::size_t i = 1; i < s.shape.size(); ++i) fan_in *= s.shape[i];
        w[s.name] = init.weight(s.shape, fan_in);
        break;
      }
    }
  }
  for (const TensorSpec& s : tree) {
    if (!is_gain(s.name)) continue;
    const std::string stem = s.name.substr(0, s.name.size() - 1);
    w[s.name] = at::norm_except_dim(w.at(stem + (ends_with(s.name, "original0") ? "1" : "v")), 2, 0);
  }
}

at::ScalarType scalar_type_of(const std::string& dtype) {
  if (dtype == "float32") return at::kFloat;
  if (dtype == "bfloat16") return at::kBFloat16;
  throw Error(ErrorKind::config, "dtype '" + dtype + "': expected float32 or bfloat16");
}

at::Device device_of(const std::string& device) {
  if (device == "cpu") return at::Device(at::kCPU);
  if (device.rfind("cuda", 0) == 0) {
    const int gpus = at::detail::getCUDAHooks().getNumGPUs();
    if (gpus == 0) throw Error(ErrorKind::config, "device '" + device + "': this LibTorch build has no usable CUDA device");
    try {
      at::Device d(device);
      if (d.has_index() && d.index() >= gpus)
        throw Error(ErrorKind::config, "device '" + device + "': only " + std::to_string(gpus) + " CUDA device(s)");
      return d;
    } catch (const c10::Error&) {}
  }
  throw Error(ErrorKind::config, "device '" + device + "': expected cpu or cuda:N");
}

at::Tensor pad_batch(const std::vector<std::span<const float>>& clips, std::int64_t multiple, const at::Device& device) {
  std::int64_t longest = 0;
  for (const auto& c : clips) longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(c.size()));
  longest = std::max<std::int64_t>(1, (longest + multiple - 1) / multiple) * multiple;
  at::Tensor wave = at::zeros({static_cast<std::int64_t>(clips.size()), 1, longest}, at::kFloat);
  for (std::size_t i = 0; i < clips.size(); ++i)
    if (!clips[i].empty())
      std::memcpy(wave[static_cast<std::int64_t>(i)].data_ptr<float>(), clips[i].data(), clips[i].size_bytes());
  return wave.to(device);
}

}  // namespace nn

ProxyConfig proxy_config(const std::string& family, const NetworkSettings& s, const nlohmann::json& dims) {
  nlohmann::json weights = {{"family", family}, {"revision", kProxyRevision}, {"scale", s.scale}, {"dims", dims}};
  ProxyConfig out;
  out.weight_seed = sha256_hex(weights.dump());
  nlohmann::json full = weights;
  full["dtype"] = s.dtype;
  full["device_type"] = s.device.rfind("cuda", 0) == 0 ? "cuda" : "cpu";
  out.config.model_revision = kProxyRevision;
  out.config.config_json = full.dump();
  out.config.config_hash = sha256_hex(out.config.config_json);
  return out;
}

EncoderConfig checkpoint_config(const std::string& family, const NetworkSettings& s, const nlohmann::json& dims,
                                const CheckpointFile& file) {
  nlohmann::json full = {{"family", family},
                         {"revision", "checkpoint"},
                         {"scale", s.scale},
                         {"dims", dims},
                         {"checkpoint_sha256", file.sha256},
                         {"dtype", s.dtype},
                         {"device_type", s.device.rfind("cuda", 0) == 0 ? "cuda" : "cpu"}};
  EncoderConfig c;
  c.model_revision = "checkpoint:" + file.sha256;
  c.config_json = full.dump();
  c.config_hash = sha256_hex(c.config_json);
  c.checkpoint = file.path;
  return c;
}

EncoderConfig checkpoint_config(const std::string& family, const NetworkSettings& s, const nlohmann::json& dims,
                                std::span<const CheckpointFile* const> files, const std::string& path) {
  nlohmann::json digests = nlohmann::json::object();
  std::string lines;
  for (const CheckpointFile* f : files) {
    const std::string name = std::filesystem::path(f->path).lexically_relative(path).generic_string();
    digests[name] = f->sha256;
    lines += name + " " + f->sha256 + "\n";
  }
  const std::string digest = sha256_hex(lines);
  nlohmann::json full = {{"family", family},
                         {"revision", "checkpoint"},
                         {"scale", s.scale},
                         {"dims", dims},
                         {"checkpoint_files", digests},
                         {"dtype", s.dtype},
                         {"device_type", s.device.rfind("cuda", 0) == 0 ? "cuda" : "cpu"}};
  EncoderConfig c;
  c.model_revision = "checkpoint:" + digest;
  c.config_json = full.dump();
  c.config_hash = sha256_hex(c.config_json);
  c.checkpoint = path;
  return c;
}

HostTensor to_host(const at::Tensor& t) {
  std::vector<std::int64_t> shape(t.sizes().begin(), t.sizes().end());
  if (at::isIntegralType(t.scalar_type(), true)) {
    at::Tensor c = t.to(at::kCPU, at::kLong).contiguous();
    return HostTensor::from_vector<std::int64_t>(shape,
                                                 std::span<const std::int64_t>(c.data_ptr<std::int64_t>(), c.numel()));
  }
  at::Tensor c = t.to(at::kCPU, at::kFloat).contiguous();
  return HostTensor::from_vector<float>(shape, std::span<const float>(c.data_ptr<float>(), c.numel()));
}

NetworkSettings validate_settings(const EncoderOptions& o, const std::vector<std::string>& scales) {
  if (std::find(scales.begin(), scales.end(), o.scale) == scales.end())
    throw Error(ErrorKind::config, "scale '" + o.scale + "': expected full, small or tiny");
  nn::scalar_type_of(o.dtype);
  nn::device_of(o.device);
  if (o.threads < 0) throw Error(ErrorKind::config, "threads must not be negative");
  set_torch_threads(o.threads > 0 ? o.threads : at::get_num_threads());  // 0: LibTorch's default, BLAS follows
  if (!o.module_path.empty() && !o.checkpoint.empty())
    throw Error(ErrorKind::config, "a TorchScript module and a checkpoint exclude each other: give one");
  return {o.scale, o.dtype, o.device, o.module_path, o.checkpoint};
}

int torch_threads() { return at::get_num_threads(); }

namespace {
/// An OpenBLAS function found by name, or null when LibTorch does not run on OpenBLAS.
template <typename Fn>
Fn* openblas_function(const char* name) {
  return reinterpret_cast<Fn*>(dlsym(RTLD_DEFAULT, name));
}
}  // namespace

void set_torch_threads(int threads) {
  at::set_num_threads(threads);
  if (auto* set = openblas_function<void(int)>("openblas_set_num_threads")) set(threads);
}

int blas_threads() {
  auto* get = openblas_function<int()>("openblas_get_num_threads");
  return get ? get() : 0;
}

std::string allocator_name() {
  Dl_info info{};
  void* m = dlsym(RTLD_DEFAULT, "malloc");  // the definition every caller binds to, a preloaded one included
  const std::string file = m && dladdr(m, &info) && info.dli_fname ? info.dli_fname : "";
  for (const char* name : {"tcmalloc_minimal", "tcmalloc", "jemalloc"})
    if (file.find(name) != std::string::npos) return name;
  return "glibc";
}

double warm_up_torch() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return 0;
  auto t0 = std::chrono::steady_clock::now();
  c10::InferenceMode guard;
  at::Tensor a = at::ones({8, 8});
  (void)at::matmul(a, a).sum().item<float>();
  (void)at::get_num_threads();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<NetworkOutput> encode_padded_codes(std::span<const NetworkItem> items, std::int64_t hop,
                                               const at::Device& device, at::ScalarType dtype,
                                               std::int64_t time_dim,
                                               const std::function<at::Tensor(const at::Tensor&)>& forward) {
  c10::InferenceMode guard;
  std::vector<std::span<const float>> clips;
  for (const auto& it : items) clips.push_back(it.samples);
  at::Tensor codes = forward(nn::pad_batch(clips, hop, device).to(dtype)).to(at::kCPU);
  std::vector<NetworkOutput> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::int64_t frames = (static_cast<std::int64_t>(clips[i].size()) + hop - 1) / hop;
    out.push_back({{"codes", to_host(codes[static_cast<std::int64_t>(i)].narrow(time_dim, 0, frames))}});
  }
  return out;
}

}  // namespace refenc::encoders
