// Telling allocation failures from other errors, whichever allocator threw them.
#pragma once

#include <exception>

namespace kiln::core {

// True for the errors allocators throw when memory runs out (std::bad_alloc,
// c10::OutOfMemoryError, libtorch's CPU allocation failures, kiln::Error(OutOfMemory)).
bool isOutOfMemory(const std::exception_ptr& error);

// Inside a catch block: rethrows the exception in flight as a kiln::Error (allocation
// failures as OutOfMemory, anything else unexpected as Internal).
[[noreturn]] void rethrowAsError();

}  // namespace kiln::core
