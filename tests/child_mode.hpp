// Child modes of a test program: what a test that needs another process runs in it.
//
// A test that starts its own program again (to compare what two processes compute, say) registers a
// mode with a flag; the shared Catch2 main (catch_main.cpp) runs the mode instead of the tests when
// the program's first argument is that flag.
//
//   int print_digest(int argc, char** argv);   // argv[2...]: the mode's own arguments
//   const refenc::test::RegisterChildMode digest_mode("--child-digest", print_digest);
//   // a test: std::system("'/proc/self/exe' --child-digest fish-s2-pro")
#pragma once

#include <vector>

namespace refenc::test {

struct ChildMode {
  const char* flag;
  int (*run)(int argc, char** argv);
};

/// The modes registered so far (while the program starts).
std::vector<ChildMode>& child_modes();

/// Registers `run` as the mode of `flag`; define one at namespace scope.
struct RegisterChildMode {
  RegisterChildMode(const char* flag, int (*run)(int argc, char** argv));
};

}  // namespace refenc::test
