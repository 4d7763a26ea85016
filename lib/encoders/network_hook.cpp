#include "encoders/network_hook.hpp"

#include "core/error.hpp"

namespace refenc::encoders {

namespace {
thread_local LoadSummary t_last_load;
}

NetworkHook::NetworkHook(const ModelInfo& info, const EncoderOptions& options, std::unique_ptr<Network> network)
    : info_(info), options_(options), network_(std::move(network)) {
  options_.load = reference_load_options(info_, options_.load);
}

EncodeInput NetworkHook::normalize_input(const EncodeRequest& request) {
  EncodeInput in{audio::load_reference(request.source, options_.load), request.text, request.x_vector_only};
  const audio::LoadedReference& r = in.audio;
  t_last_load = {r.timings,         r.seconds(),     r.samples.size(), r.sample_rate, r.source_rate,
                 r.source_channels, r.source_format, r.content_key,    r.gain_db};
  if (in.audio.sample_rate != info_.sample_rate)
    throw Error(ErrorKind::bad_input, request.source.describe() + ": decoded at " +
                                          std::to_string(in.audio.sample_rate) + " Hz, expected " +
                                          std::to_string(info_.sample_rate) + " Hz");
  if (in.audio.samples.empty()) throw Error(ErrorKind::bad_input, request.source.describe() + ": no audio samples");
  return in;
}

LoadSummary NetworkHook::last_load() const { return t_last_load; }

std::optional<ReferenceEncodeKey> NetworkHook::cache_key(const EncodeInput& item) {
  if (item.audio.content_key.empty()) return std::nullopt;
  const EncoderConfig& c = network_->config();
  return ReferenceEncodeKey{info_.name,          c.model_revision,       info_.encoder_id, c.config_hash,
                            info_.artifact_kind, item.audio.content_key, options_key(item)};
}

std::vector<Artifact> NetworkHook::encode_items(std::span<const EncodeInput* const> items) {
  std::vector<NetworkItem> net_items;
  net_items.reserve(items.size());
  for (const EncodeInput* in : items) net_items.push_back({in->audio.samples, in->x_vector_only && info_.reads_text});
  std::vector<NetworkOutput> outputs = network_->encode(net_items);
  if (outputs.size() != items.size())
    throw Error(ErrorKind::encode, info_.name + ": network returned " + std::to_string(outputs.size()) +
                                       " outputs for " + std::to_string(items.size()) + " inputs");
  std::vector<Artifact> out;
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    Artifact a;
    a.tensors = std::move(outputs[i]);
    a.meta["model"] = info_.name;
    a.meta["model_revision"] = network_->config().model_revision;
    a.meta["scale"] = options_.module_path.empty() ? options_.scale : "module";
    annotate(a, *items[i]);
    out.push_back(std::move(a));
  }
  return out;
}

Artifact NetworkHook::encode_one(const EncodeInput& item) {
  const EncodeInput* one = &item;
  return std::move(encode_items(std::span<const EncodeInput* const>(&one, 1)).front());
}

}  // namespace refenc::encoders
