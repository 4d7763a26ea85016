// refenc::Error: the one exception type of refenc, with a small set of kinds.
//
// Every failure that refenc reports is an `Error` carrying a `kind` that callers (and the CLI's exit
// codes) can act on, and a message that names the input and the reason. `with_context` makes a new,
// independent object, so each waiter of a failed encode gets an exception of its own.
//
//   try { service.get_or_encode(req, "clip.flac"); }
//   catch (const refenc::Error& e) {
//     if (e.kind() == refenc::ErrorKind::bad_input) reject(req);
//     std::cerr << e.what() << '\n';   // "clip.flac: not an audio file: ..."
//   }
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace refenc {

/// What went wrong, coarsely enough for a caller or a shell script to act on.
enum class ErrorKind {
  bad_input,  ///< The request's own input is wrong (unreadable audio, bad manifest field, ...).
  encode,     ///< The encoder failed on an input it accepted.
  timeout,    ///< A wait ran past its limit (a caller's deadline, a follower waiting on a leader).
  config,     ///< The configuration is invalid (options, model names, capacities).
  io,         ///< The file system or the environment failed (write, rename, permissions).
  closed,     ///< The service was closed while the request waited.
  cancelled,  ///< The caller asked to stop waiting (its stop token was signalled).
};

/// Short lower-case name of a kind ("bad input", "encode failure", ...).
std::string_view to_string(ErrorKind kind) noexcept;

/// Process exit code the CLI uses for an error of this kind (listed in the README).
int exit_code(ErrorKind kind) noexcept;

/// The exception type of refenc.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}

  ErrorKind kind() const noexcept { return kind_; }

  /// A new Error of the same kind whose message is prefixed by `context` ("context: message").
  /// An empty context returns a plain copy.
  Error with_context(std::string_view context) const;

 private:
  ErrorKind kind_;
};

/// Converts any in-flight exception (`std::current_exception()`) into an Error: an Error is copied,
/// a std::exception becomes ErrorKind::encode with its what(), anything else an "unknown error".
Error to_error(std::exception_ptr ep, ErrorKind fallback = ErrorKind::encode);

}  // namespace refenc
