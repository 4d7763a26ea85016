// A TorchScript module exported from a real checkpoint, behind the Network interface.
//
// Calling convention: forward(wave) with wave float32 (or bfloat16 with --dtype bfloat16) of shape
// [1, 1, N], mono at the family's sample rate, N the clip's exact length (no padding). It returns one
// tensor or a tuple of tensors, named in the family's artifact order; a leading batch dimension of
// size 1 is dropped; integer outputs become int64, floating outputs float32.
#include <torch/script.h>

#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "encoders/network.hpp"
#include "encoders/network_common.hpp"

namespace refenc::encoders {

namespace {

std::string file_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::config, "module '" + path + "': cannot be read");
  Sha256 h;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) h.update(std::string_view(buf.data(), static_cast<std::size_t>(in.gcount())));
  }
  return h.hex_digest();
}

class TorchScriptNetwork final : public Network {
 public:
  TorchScriptNetwork(const NetworkSettings& s, const std::string& family, std::vector<std::string> names)
      : device_(nn::device_of(s.device)), dtype_(nn::scalar_type_of(s.dtype)), names_(std::move(names)) {
    const std::string digest = file_digest(s.module_path);
    try {
      module_ = torch::jit::load(s.module_path, device_);
    } catch (const std::exception& e) {
      std::string what = e.what();
      throw Error(ErrorKind::config,
                  "module '" + s.module_path + "': not a TorchScript module (" + what.substr(0, what.find('\n')) + ")");
    }
    module_.eval();
    if (dtype_ != torch::kFloat32) module_.to(dtype_);
    nlohmann::json cfg = {{"family", family},
                          {"revision", "module:" + digest},
                          {"module_sha256", digest},
                          {"dtype", s.dtype},
                          {"device_type", s.device.rfind("cuda", 0) == 0 ? "cuda" : "cpu"},
                          {"calling_convention", "forward(wave[1,1,N]) -> tensor or tuple"},
                          {"outputs", names_}};
    config_.model_revision = "module:" + digest;
    config_.config_json = cfg.dump();
    config_.config_hash = sha256_hex(config_.config_json);
    for (const auto& p : module_.parameters()) config_.parameters += p.numel();
  }

  std::vector<NetworkOutput> encode(std::span<const NetworkItem> items) override {
    torch::InferenceMode guard;
    std::vector<NetworkOutput> out;
    for (const NetworkItem& item : items) {
      torch::Tensor wave = nn::pad_batch({item.samples}, 1, device_).to(dtype_);
      c10::IValue result;
      {
        std::lock_guard lock(mutex_);
        result = module_.forward({wave});
      }
      std::vector<torch::Tensor> tensors;
      if (result.isTensor()) {
        tensors.push_back(result.toTensor());
      } else if (result.isTuple()) {
        for (const auto& v : result.toTuple()->elements()) {
          if (!v.isTensor()) throw Error(ErrorKind::encode, "module returned a tuple element that is not a tensor");
          tensors.push_back(v.toTensor());
        }
      } else {
        throw Error(ErrorKind::encode, "module returned neither a tensor nor a tuple of tensors");
      }
      if (tensors.size() != names_.size())
        throw Error(ErrorKind::encode, "module returned " + std::to_string(tensors.size()) + " tensors, expected " +
                                           std::to_string(names_.size()));
      NetworkOutput o;
      for (std::size_t i = 0; i < tensors.size(); ++i) {
        torch::Tensor t = tensors[i];
        const std::int64_t rank = names_[i] == "ref_spk_embedding" ? 1 : 2;
        if (t.dim() == rank + 1 && t.size(0) == 1) t = t.squeeze(0);
        if (item.x_vector_only && names_[i] == "ref_code") continue;
        o[names_[i]] = to_host(t);
      }
      out.push_back(std::move(o));
    }
    return out;
  }

  const EncoderConfig& config() const override { return config_; }

 private:
  torch::Device device_;
  torch::ScalarType dtype_;
  std::vector<std::string> names_;
  torch::jit::Module module_;
  std::mutex mutex_;
  EncoderConfig config_;
};

}  // namespace

std::unique_ptr<Network> make_torchscript_network(const NetworkSettings& settings, const std::string& family,
                                                  std::vector<std::string> output_names) {
  return std::make_unique<TorchScriptNetwork>(settings, family, std::move(output_names));
}

}  // namespace refenc::encoders
