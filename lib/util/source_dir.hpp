// The source tree this build was configured from: where the shipped workloads, the report schema and the
// test fixtures are found, and whose git revision a run records.
//
//   std::ifstream schema(std::string(refenc::source_dir()) + "/reports/report.schema.json");
//
// One small translation unit holds the path (compiled with REFENC_SOURCE_DIR), so that no other unit's
// text depends on where the tree was cloned and ccache reuses them from any clone.
#pragma once

namespace refenc {

/// The absolute path of the source tree (CMAKE_SOURCE_DIR at configure time), or "." when built without it.
const char* source_dir() noexcept;

}  // namespace refenc
