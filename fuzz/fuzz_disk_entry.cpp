// libFuzzer target: the disk entry decoder. Entry files live in a folder other processes share, so
// whatever a file holds, decode_entry must either return an artifact or throw EntryError; a crash, a
// leak, another exception, or an allocation far beyond the file's size is a bug. An artifact it
// returns must be exactly what its stored key and checksum say: written again by encode_entry, it
// decodes to the same artifact. And whenever the direct reader (direct_reader.hpp) reads an archive,
// LibTorch's reader reads it too, to the same value: the direct reader only ever saves time.
//
// The first input byte chooses what the rest is:
//   even: a whole entry file, as read from disk (zip container, pickle, tensor records);
//   odd:  the records of an archive separated by "|rec|": first data.pkl (the pickle), then data/0,
//         data/1, ... (tensor storages), packed into a well-formed torch archive by pack_archive, so
//         that mutations of the pickle reach the unpickler and the entry checks instead of stopping
//         at the zip container's CRC.
//
//   scripts/fuzz.sh 30        # builds build/fuzz/fuzz_disk_entry and runs it on fuzz/corpus/fuzz_disk_entry
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "store/direct_reader.hpp"
#include "store/direct_writer.hpp"
#include "store/entry_archive.hpp"
#include "store/entry_format.hpp"
#include "store/libtorch_reader.hpp"

using namespace refenc;
using namespace refenc::store;

namespace {

std::vector<char> archive_of_records(std::string_view rest) {
  constexpr std::string_view sep = "|rec|";
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = rest.find(sep, start);
    parts.push_back(rest.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + sep.size();
  }
  std::vector<ArchiveRecord> records;
  for (std::size_t i = 1; i < parts.size(); ++i) records.push_back({"data/" + std::to_string(i - 1), parts[i]});
  records.push_back({"data.pkl", parts[0]});
  return pack_archive(records);
}

void check_direct_reader(const std::vector<char>& bytes) {
  std::optional<PickledValue> direct;
  try {
    direct = read_archive_directly(bytes, torch_archive_records(bytes));
  } catch (const EntryError&) {
    return;  // refused before either reader runs
  }
  if (!direct) return;
  try {
    if (!(*direct == read_archive_with_libtorch(bytes))) std::abort();
  } catch (const EntryError&) {
    std::abort();  // read directly, refused by LibTorch
  }
}

void check(const std::vector<char>& bytes) {
  check_direct_reader(bytes);
  std::string stored_key;
  Artifact a;
  try {
    a = decode_entry(bytes, "", &stored_key);
  } catch (const EntryError&) {
    return;  // refused
  }
  // Accepted: the same bytes with the right key give the same artifact, another key is refused, and
  // the artifact written again decodes to itself.
  if (decode_entry(bytes, stored_key) != a) std::abort();
  try {
    (void)decode_entry(bytes, stored_key + "x");
    std::abort();
  } catch (const EntryError&) {}
  if (decode_entry(encode_entry(stored_key, a), stored_key) != a) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0)
    check(std::vector<char>(rest.begin(), rest.end()));
  else
    check(archive_of_records(rest));
  return 0;
}
