#include "hook_errors.hpp"

#include <charconv>

namespace py = pybind11;

namespace refenc::python {
namespace {
constexpr std::string_view kTag = "[hook exception #";
}


Error HookErrors::record(py::error_already_set& e) {
  const std::uint64_t token = ++next_;
  py::object value = e.value();
  std::string text;
  try {
    text = py::str(value.get_type().attr("__name__")).cast<std::string>() + ": " + py::str(value).cast<std::string>();
  } catch (py::error_already_set&) {
    text = "unprintable exception";
  }
  recent_.emplace_back(token, std::move(value));
  while (recent_.size() > capacity_) recent_.pop_front();
  return Error(ErrorKind::encode, std::string(kTag) + std::to_string(token) + "] " + text);
}

py::object HookErrors::find(std::string_view message) const {
  const std::size_t at = message.find(kTag);
  if (at == std::string_view::npos) return py::none();
  const char* first = message.data() + at + kTag.size();
  std::uint64_t token = 0;
  auto [end, ec] = std::from_chars(first, message.data() + message.size(), token);
  if (ec != std::errc() || end == message.data() + message.size() || *end != ']') return py::none();
  for (const auto& [t, value] : recent_)
    if (t == token) return value;
  return py::none();
}

}  // namespace refenc::python
