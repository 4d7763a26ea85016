// The one Catch2 main of every test program (refenc_catch_main): catch.hpp's implementation costs
// about 29 CPU s to compile, so a build compiles it once, not once per test program. A test program
// may also register a child mode (child_mode.hpp), which this main runs instead of the tests when the
// program is started with that mode's flag.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <string_view>

#include "child_mode.hpp"

namespace refenc::test {

std::vector<ChildMode>& child_modes() {
  static std::vector<ChildMode> modes;
  return modes;
}

RegisterChildMode::RegisterChildMode(const char* flag, int (*run)(int argc, char** argv)) {
  child_modes().push_back({flag, run});
}

}  // namespace refenc::test

int main(int argc, char** argv) {
  if (argc >= 2)
    for (const refenc::test::ChildMode& mode : refenc::test::child_modes())
      if (std::string_view(argv[1]) == mode.flag) return mode.run(argc, argv);
  return Catch::Session().run(argc, argv);
}
