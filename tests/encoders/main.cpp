// test_encoders: Catch2 main, plus a child mode used by the cross-process determinism test:
//   test_encoders --child-digest MODEL   prints the digest of MODEL's tiny artifact for a fixed clip.
// The tests run with LibTorch's CPU buffers on the block cache, as the CLI does; the child runs without
// it, so the determinism test also shows that the cache does not change an artifact.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>
#include <string>

#include "artifact_digest.hpp"
#include "encoders/cpu_tensor_memory.hpp"

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--child-digest") {
    std::cout << refenc::encoders::test::fixed_clip_digest(argv[2]) << std::endl;
    return 0;
  }
  refenc::encoders::cache_cpu_tensor_blocks(std::size_t{256} << 20);
  return Catch::Session().run(argc, argv);
}
