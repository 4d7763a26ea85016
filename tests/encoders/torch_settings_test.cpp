// The process settings the encodes run under: LibTorch's and OpenBLAS's threads, and the malloc.
#include <catch2/catch.hpp>

#include "encoders/encoder_hook.hpp"

using namespace refenc::encoders;

TEST_CASE("set_torch_threads sets OpenBLAS's threads with LibTorch's", "[encoders][threads]") {
  const int before = torch_threads();
  set_torch_threads(1);
  CHECK(torch_threads() == 1);
  CHECK((blas_threads() == 0 || blas_threads() == 1));  // 0: LibTorch is not on OpenBLAS
  set_torch_threads(2);
  CHECK(torch_threads() == 2);
  CHECK((blas_threads() == 0 || blas_threads() == 2));
  set_torch_threads(before);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)  // sanitizer builds keep their malloc
TEST_CASE("the encodes run on tcmalloc_minimal, linked as the CLI links it", "[encoders][malloc]") {
  CHECK(allocator_name() == "tcmalloc_minimal");
}
#endif
