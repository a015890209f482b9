#include "kiln/error.h"

namespace kiln {

const char* errorKindName(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Invalid:
      return "invalid";
    case ErrorKind::InvalidArgument:
      return "invalid argument";
    case ErrorKind::FileNotFound:
      return "file not found";
    case ErrorKind::CorruptFile:
      return "corrupt file";
    case ErrorKind::UnsupportedModel:
      return "unsupported model";
    case ErrorKind::ShapeMismatch:
      return "shape mismatch";
    case ErrorKind::OutOfMemory:
      return "out of memory";
    case ErrorKind::NonFinite:
      return "non-finite result";
    case ErrorKind::Cancelled:
      return "cancelled";
    case ErrorKind::Io:
      return "i/o error";
    case ErrorKind::InvalidWorkflow:
      return "invalid workflow";
    case ErrorKind::Internal:
      return "internal error";
  }
  return "unknown";
}

}  // namespace kiln
