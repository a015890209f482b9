// Typed errors that the engine reports to its callers. Every error carries a message a
// person can act on: what failed, on which file, tensor or argument, and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln {

enum class ErrorKind {
  Invalid = 0,       // never thrown; the zero value of the enum
  InvalidArgument,   // a parameter given by the user is out of range or malformed
  FileNotFound,      // a path does not exist or cannot be opened
  CorruptFile,       // a file exists but its contents violate its format
  UnsupportedModel,  // a well-formed checkpoint of an architecture Kiln does not run
  ShapeMismatch,     // tensors do not have the shapes the architecture needs
  OutOfMemory,       // an allocation failed
  NonFinite,         // NaN or infinity appeared in a result
  Cancelled,         // the job was interrupted
  Io,                // reading or writing failed for an operating-system reason
  InvalidWorkflow,   // a workflow file or graph cannot run (every problem is listed)
  Internal,          // a bug in Kiln
};

const char* errorKindName(ErrorKind kind) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_ = ErrorKind::Invalid;
};

}  // namespace kiln
