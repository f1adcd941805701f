// HubError: why a request to the Hugging Face hub failed, in words a user can act on.
#pragma once

#include <stdexcept>
#include <string>

namespace pagedchat::hub {

/// Thrown by the hub client. kind says what the user can do: kNotFound (no such repository,
/// revision or file), kUnauthorized (a private or gated repository without a token, or a token
/// the hub refuses: set HF_TOKEN), kForbidden (gated: the token's user has not accepted the
/// terms), kNetwork (no answer, or the transfer broke: run again to resume), kChecksum (the file
/// is not what the hub announced; nothing kept), kProtocol (an answer that is not the hub's),
/// kCancelled, kIo (the models folder cannot be written).
class HubError : public std::runtime_error {
 public:
  enum class Kind { kNotFound, kUnauthorized, kForbidden, kNetwork, kChecksum, kProtocol, kCancelled, kIo };
  HubError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace pagedchat::hub
