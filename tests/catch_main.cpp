// The one Catch2 main of every test program (refenc_catch_main): catch.hpp's implementation costs
// about 29 CPU s to compile, so a build compiles it once, not once per test program.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
