#include "encoders/cpu_tensor_memory.hpp"

#include <dlfcn.h>

#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <memory>

namespace refenc::encoders {

namespace {

// Never destroyed: tensors may be freed by static destructors after main returns.
std::atomic<BlockCache*> installed{nullptr};

void free_block(void* p) { installed.load(std::memory_order_acquire)->deallocate(p); }

struct BlockCacheAllocator final : c10::Allocator {
  c10::DataPtr allocate(std::size_t n) const override {
    if (n == 0) return {nullptr, nullptr, &free_block, c10::Device(c10::DeviceType::CPU)};  // as c10's own
    void* p = installed.load(std::memory_order_acquire)->allocate(n);
    return {p, p, &free_block, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_block; }
};

template <typename Fn>
Fn* openblas_function(const char* name) {
  return reinterpret_cast<Fn*>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

bool cache_cpu_tensor_blocks(std::size_t max_cached_bytes) {
  auto cache = std::make_unique<BlockCache>(max_cached_bytes);
  BlockCache* none = nullptr;
  if (!installed.compare_exchange_strong(none, cache.get(), std::memory_order_acq_rel)) return false;
  cache.release();                                   // now `installed`, never destroyed
  static auto* allocator = new BlockCacheAllocator;  // never destroyed, like the cache
  c10::SetCPUAllocator(allocator, /*priority=*/0);
  return true;
}

std::size_t cpu_tensor_cache_bytes() {
  const BlockCache* c = installed.load(std::memory_order_acquire);
  return c ? c->max_cached_bytes() : 0;
}

BlockCacheStats cpu_tensor_block_stats() {
  const BlockCache* c = installed.load(std::memory_order_acquire);
  return c ? c->stats() : BlockCacheStats{};
}

void set_torch_threads(int threads) {
  at::set_num_threads(threads);
  if (auto* set = openblas_function<void(int)>("openblas_set_num_threads")) set(threads);
}

int blas_threads() {
  auto* get = openblas_function<int()>("openblas_get_num_threads");
  return get ? get() : 0;
}

}  // namespace refenc::encoders
