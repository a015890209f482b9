// libFuzzer target for what Kiln reads from a picture someone shares: the PNG's text chunks
// (tEXt, zTXt, iTXt, read without decoding the picture), the A1111 "parameters" text the
// gallery and Reuse parse, and ComfyUI's "prompt" / "workflow" chunks, imported as a
// workflow. Any input is read without an exception; an import is refused only with
// kiln::Error(InvalidWorkflow); parsed settings always have steps.
#include <unistd.h>

#include <QFile>
#include <QString>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "kiln/comfy_import.h"
#include "kiln/error.h"
#include "result_files.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

QString scratchFile() {
  char name[] = "/tmp/kiln_fuzz_png_XXXXXX";
  const int fd = mkstemp(name);
  require(fd >= 0);
  close(fd);
  return QString::fromLocal8Bit(name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const QString path = scratchFile();
  {
    QFile f(path);
    require(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    require(f.write(reinterpret_cast<const char*>(data), static_cast<qint64>(size)) ==
            static_cast<qint64>(size));
  }
  const QMap<QString, QString> texts = kiln::app::readPngText(path);
  for (auto it = texts.begin(); it != texts.end(); ++it) {
    require(it.value().size() <= (qsizetype{16} << 20));
    if (const auto settings = kiln::app::parseParametersText(it.value()))
      require(settings->steps > 0);
    const std::string text = it.value().toStdString();
    if (!kiln::looksLikeComfyWorkflow(text)) continue;
    try {
      (void)kiln::importComfyWorkflow(text, {});
    } catch (const kiln::Error& e) {
      require(e.kind() == kiln::ErrorKind::InvalidWorkflow);
    }
  }
  return 0;
}
