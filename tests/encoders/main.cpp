// test_encoders: Catch2 main, plus a child mode used by the cross-process determinism test:
//   test_encoders --child-digest MODEL   prints the digest of MODEL's tiny artifact for a fixed clip.
// Linked with tcmalloc_minimal, as the CLI is (tests/encoders/CMakeLists.txt).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>
#include <string>

#include "artifact_digest.hpp"

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--child-digest") {
    std::cout << refenc::encoders::test::fixed_clip_digest(argv[2]) << std::endl;
    return 0;
  }
  return Catch::Session().run(argc, argv);
}
