#include "util/source_dir.hpp"

#ifndef REFENC_SOURCE_DIR
#define REFENC_SOURCE_DIR "."
#endif

namespace refenc {

const char* source_dir() noexcept { return REFENC_SOURCE_DIR; }

}  // namespace refenc
