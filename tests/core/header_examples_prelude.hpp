// Stand-ins for the names that lib/core's header examples use without declaring them (a clip, a
// hook, a service, ...). Declarations only: the generated file is compiled, never linked. Each
// header's example sees `common` and its own namespace, named after the header file (`second_tier_hpp`).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

namespace refenc_examples::common {

struct Clip {};
struct ClipRequest {};
/// An artifact: codec codes.
struct Codes {
  Codes compact() const;
  Codes widened_copy() const;
  std::size_t bytes() const;
};
struct Req {};
using Service = refenc::ReferenceEncodeService<Req, Codes, Codes>;

extern Service service;
extern Req req;
extern refenc::ReferenceEncodeKey key;
extern Codes codes;
extern Clip clip;
extern std::mutex mutex;
extern std::string bytes, a, b, cfg_hash, sha;

void use(const Codes&);
void run_phase();
void reject(const Req&);

}  // namespace refenc_examples::common

namespace refenc_examples::batch_coalescer_hpp {
struct BatchingHook {
  std::vector<common::Codes> encode_batch(std::span<const common::Clip* const>);
};
extern BatchingHook hook;
std::size_t length_of(const common::Clip&);
}  // namespace refenc_examples::batch_coalescer_hpp

namespace refenc_examples::reference_encode_hook_hpp {
using common::Clip, common::ClipRequest, common::Codes;
Clip decode(const ClipRequest&);
std::optional<refenc::ReferenceEncodeKey> key_of(const Clip&);
Codes net(const Clip&);
Codes net(const Clip&, const std::function<bool()>& stop_requested);
}  // namespace refenc_examples::reference_encode_hook_hpp

namespace refenc_examples::reference_encode_service_hpp {
struct Ref {};
struct Artifact {};
struct Request {};
struct FishOptions {};
class FishHook : public refenc::ReferenceEncodeHook<Ref, Artifact, Artifact, Request> {
 public:
  explicit FishHook(FishOptions);
  Ref normalize_input(const Request&) override;
  std::optional<refenc::ReferenceEncodeKey> cache_key(const Ref&) override;
  Artifact encode_one(const Ref&) override;
  Artifact store_artifact(const Artifact&) override;
  Artifact load_artifact(const Artifact&) override;
  std::size_t stored_bytes(const Artifact&) const override;
};
extern FishOptions options;
extern Request request;
}  // namespace refenc_examples::reference_encode_service_hpp

namespace refenc_examples::second_tier_hpp {
struct Artifact {};
struct Request {};
using common::Clip;
/// lib/store's disk tier, as far as the example needs it (lib/core cannot include lib/store).
namespace store {
struct DiskTierOptions {
  std::string root;
  std::uint64_t max_disk_bytes = 1ull << 30;
};
class DiskTier : public refenc::SecondTier<Artifact> {};
std::shared_ptr<DiskTier> open_disk_tier(DiskTierOptions options = {});
}  // namespace store
extern std::shared_ptr<refenc::ReferenceEncodeHook<Clip, Artifact, Artifact, Request>> hook;
extern Artifact artifact;
}  // namespace refenc_examples::second_tier_hpp
