// HookErrors: the Python exceptions a hook raised, kept so that every caller of a failed encode
// raises an exception of its own, of the hook's own type.
//
// The service hands a failure to the leader and to every same-key waiter as a message (an Error).
// A hook adapter records the Python exception it caught and throws an Error whose message carries
// the record's token; the binding finds the exception again from the message each caller gets and
// gives the Python layer the original, from which each caller makes a fresh copy. The newest
// `capacity` records are kept (a waiter that comes after that many later failures gets the message
// alone). Every member requires the GIL.
//
//   try { hook.attr("encode_one")(item); }
//   catch (pybind11::error_already_set& e) { throw errors.record(e); }    // GIL held
//   ...
//   pybind11::object original = errors.find(caught.what());              // None when unknown
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace refenc::python {

class HookErrors {
 public:
  explicit HookErrors(std::size_t capacity = 1024) : capacity_(capacity) {}

  /// Records the exception in `e` and returns the Error to throw in its place:
  /// "[hook exception #N] Type: message".
  Error record(pybind11::error_already_set& e);
  /// The exception recorded under the token found in `message`, or None.
  pybind11::object find(std::string_view message) const;
  /// Drops every record.
  void clear() { recent_.clear(); }

 private:
  std::size_t capacity_;
  std::uint64_t next_ = 0;
  std::deque<std::pair<std::uint64_t, pybind11::object>> recent_;
};

}  // namespace refenc::python
