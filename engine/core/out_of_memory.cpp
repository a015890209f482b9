#include "core/out_of_memory.h"

#include <c10/util/Exception.h>

#include <new>
#include <string>

#include "kiln/error.h"

namespace kiln::core {

namespace {

bool isAllocationMessage(const std::string& what) {
  return what.find("alloc") != std::string::npos || what.find("out of memory") != std::string::npos;
}

}  // namespace

bool isOutOfMemory(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return e.kind() == ErrorKind::OutOfMemory;
  } catch (const std::bad_alloc&) {
    return true;
  } catch (const c10::OutOfMemoryError&) {
    return true;
  } catch (const c10::Error& e) {
    return isAllocationMessage(e.what_without_backtrace());
  } catch (...) {
    return false;
  }
}

[[noreturn]] void rethrowAsError() {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::OutOfMemory,
                "out of memory while rendering; try a smaller size or bf16 compute");
  } catch (const c10::Error& e) {
    // libtorch reports allocation failures as c10::Error; everything else is a bug.
    const std::string what = e.what_without_backtrace();
    if (isAllocationMessage(what))
      throw Error(ErrorKind::OutOfMemory, "out of memory while rendering: " + what);
    throw Error(ErrorKind::Internal, "internal error while rendering: " + what);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Internal, std::string("internal error while rendering: ") + e.what());
  }
}

}  // namespace kiln::core
