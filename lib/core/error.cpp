#include "core/error.hpp"

#include <exception>

namespace refenc {

std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::bad_input: return "bad input";
    case ErrorKind::encode: return "encode failure";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::config: return "config";
    case ErrorKind::io: return "io";
    case ErrorKind::closed: return "closed";
    case ErrorKind::cancelled: return "cancelled";
  }
  return "unknown";
}

int exit_code(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::bad_input: return 2;
    case ErrorKind::config: return 3;
    case ErrorKind::encode: return 4;
    case ErrorKind::timeout: return 5;
    case ErrorKind::io: return 6;
    case ErrorKind::closed: return 7;
    case ErrorKind::cancelled: return 8;
  }
  return 1;
}

Error Error::with_context(std::string_view context) const {
  if (context.empty()) return Error(kind_, what());
  std::string msg(context);
  msg += ": ";
  msg += what();
  return Error(kind_, msg);
}

Error to_error(std::exception_ptr ep, ErrorKind fallback) {
  try {
    std::rethrow_exception(ep);
  } catch (const Error& e) {
    return Error(e.kind(), e.what());
  } catch (const std::exception& e) {
    return Error(fallback, e.what());
  } catch (...) {
    return Error(fallback, "unknown error");
  }
}

}  // namespace refenc
