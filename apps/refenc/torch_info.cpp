// LibTorch's version and thread settings, and the process's malloc, for a profile run's context (the one
// LibTorch include of the CLI's profile path).
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/version.h>

#include "encoder_backend.hpp"
#include "encoders/encoder_hook.hpp"

namespace refenc::profile {

LibraryContext torch_library_context() {
  std::string config = at::show_config();
  std::string blas = "unknown";
  for (const char* key : {"BLAS_INFO=", "LAPACK_INFO="}) {
    auto pos = config.find(key);
    if (pos != std::string::npos) {
      auto end = config.find_first_of(", \n", pos);
      blas = config.substr(pos + std::string(key).size(), end - pos - std::string(key).size());
      break;
    }
  }
  return {.version = TORCH_VERSION,
          .blas = blas,
          .intra_op_threads = at::get_num_threads(),
          .blas_threads = encoders::blas_threads(),
          .allocator = encoders::allocator_name(),
          .parallel_info = at::get_parallel_info()};
}

}  // namespace refenc::profile
