#pragma once
// What the sanitizer build (./kiln test --sanitize) cannot run. Kiln's sentencepiece
// module needs its own symbol scope (RTLD_DEEPBIND), which AddressSanitizer refuses, so
// T5/UMT5 tokenization and the Wan renders built on it run in the normal suite only.
#include <QtTest>

#ifdef KILN_SANITIZE
#define KILN_SKIP_WITHOUT_SENTENCEPIECE() \
  QSKIP("the sanitizer build cannot load the sentencepiece module (it needs RTLD_DEEPBIND)")
#else
#define KILN_SKIP_WITHOUT_SENTENCEPIECE() \
  do {                                    \
  } while (0)
#endif
