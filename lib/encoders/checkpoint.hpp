// Checkpoint: the tensors of a published checkpoint, by name, checked against a network's parameter
// tree (internal to lib/encoders: included by network .cpp files only, it uses LibTorch).
//
// A checkpoint is a safetensors file or a torch pickle (what `torch.save(model.state_dict())` writes),
// or a downloaded model folder holding one of the family's file names. Both formats are read from a
// read-only mapping of the file: tensors stay in the mapping (no copy) until a network converts them.
// Every problem is one Error(bad_input) line naming the file, and the tensor where there is one.
//
//   CheckpointFile file = read_checkpoint("checkpoints/s2-pro", {"codec.pth"});
//   WeightMap w = bind_checkpoint(file, fish_parameter_tree(dims), {"decoder."}, "fish-s2-pro");
//   const at::Tensor& v = w.at("encoder.block.0.conv.parametrizations.weight.original1");
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace refenc::encoders {

/// One tensor a network expects: its name in the upstream checkpoint and its shape.
struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
};

/// Tensors by checkpoint name.
using WeightMap = std::map<std::string, at::Tensor>;

/// A checkpoint read from disk.
struct CheckpointFile {
  std::string path;     ///< The file read (inside the folder when a folder was given; the index for shards).
  std::string sha256;   ///< SHA-256 hex of the file's bytes (of the "shard sha256" lines for shards).
  std::string format;   ///< "safetensors", "torch pickle" or "safetensors, N shards".
  WeightMap tensors;    ///< Every tensor of the file, as stored (dtype and shape), viewing `mapping`.
  std::shared_ptr<const void> mapping;  ///< Keeps the file mapped while a tensor views it.
};

/// Reads `path`: a file, or a folder holding one of `folder_files` (the first found) or, failing that, its
/// shards and their index (`<name>.index.json`, as Hugging Face saves large checkpoints). Throws
/// Error(bad_input) "<path>: <reason>" for a missing or unreadable file, a truncated one, a tensor
/// whose data lies outside the file, or anything the format does not allow.
CheckpointFile read_checkpoint(const std::string& path, const std::vector<std::string>& folder_files);

/// The tensors of `file` that `tree` names, each float32 and of its spec's shape. Tensors whose
/// name starts with one of `ignored_prefixes` (parts of the upstream model that encoding does not
/// run, such as a codec's decoder) are accepted and dropped. Throws Error(bad_input) for a missing
/// tensor, an unexpected one, a shape that differs or a dtype that is not floating point, naming the
/// first such tensor in name order and counting the others.
WeightMap bind_checkpoint(const CheckpointFile& file, std::span<const TensorSpec> tree,
                          const std::vector<std::string>& ignored_prefixes, const std::string& family);

/// "[4, 1, 7]".
std::string shape_text(std::span<const std::int64_t> shape);

}  // namespace refenc::encoders
