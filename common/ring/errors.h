// Errors of the shared-memory ring, its segments and their names, as values.
//
// Every function that can fail here runs at startup or on a restart (creating,
// attaching, validating a layout), never per datagram, so the error carries a
// readable sentence that names the object and what did not match: the process
// logs it once and exits, and the operator reads it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace gtpcp::ring {

enum class Errc : uint8_t {
  kInvalidArgument,  // a programming or configuration error: bad name, size, capacity
  kNotFound,         // attach() to a segment that does not exist (yet)
  kMismatch,         // magic, layout version, kind or size differ from this build's
  kNotInitialised,   // the creator has not finished (or died while) initialising
  kSystem,           // the operating system refused (permissions, /dev/shm full...)
};

struct Error {
  Errc code = Errc::kInvalidArgument;
  std::string message;
};

template <class T>
using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> fail(Errc code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}

// Stable snake_case name, e.g. "not_found", for logs and metric labels.
std::string_view errcName(Errc code) noexcept;

}  // namespace gtpcp::ring
