#include "result_files.h"

#include <QFile>
#include <QRegularExpression>

#include <zlib.h>

#include <algorithm>

namespace kiln::app {

namespace {

quint32 bigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (quint32{u[0]} << 24) | (quint32{u[1]} << 16) | (quint32{u[2]} << 8) | quint32{u[3]};
}

QString decodeText(const QByteArray& bytes) {
  QString text = QString::fromUtf8(bytes);
  return text.contains(QChar::ReplacementCharacter) ? QString::fromLatin1(bytes) : text;
}

// The most text one chunk may inflate to: far beyond any workflow or parameters text, far
// below what a small compressed chunk can claim (zlib reaches a thousand to one).
constexpr qsizetype kMaxChunkText = qsizetype{16} << 20;

// A zlib stream's content; nothing when it is damaged or inflates past kMaxChunkText.
std::optional<QByteArray> inflate(const QByteArray& zlib) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return std::nullopt;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zlib.constData()));
  z.avail_in = static_cast<uInt>(zlib.size());
  QByteArray out;
  char buffer[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = ::inflate(&z, Z_NO_FLUSH);
    const auto produced = static_cast<qsizetype>(sizeof buffer - z.avail_out);
    if ((rc != Z_OK && rc != Z_STREAM_END) || out.size() + produced > kMaxChunkText) {
      out.clear();
      break;
    }
    out.append(buffer, produced);
    if (rc == Z_OK && z.avail_in == 0 && produced == 0) break;  // cut short
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

}  // namespace

// The text chunks before the picture data (tEXt, zTXt, iTXt), read without decoding the
// picture; QImageReader::text() would flatten their line breaks. A file that is not a
// PNG, or is damaged, yields what could be read.
QMap<QString, QString> readPngText(const QString& path) {
  QMap<QString, QString> texts;
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly) || file.read(8) != QByteArray("\x89PNG\r\n\x1a\n", 8))
    return texts;
  for (;;) {
    const QByteArray header = file.read(8);
    if (header.size() != 8) break;
    const quint32 length = bigEndian32(header.constData());
    const QByteArray type = header.mid(4, 4);
    if (type == "IDAT" || type == "IEND" || length > (64u << 20)) break;
    const QByteArray data = file.read(length);
    if (data.size() != static_cast<qsizetype>(length) || file.read(4).size() != 4) break;
    const qsizetype nul = data.indexOf('\0');
    if (nul <= 0) continue;
    const QString key = QString::fromLatin1(data.left(nul));
    if (type == "tEXt") {
      texts.insert(key, decodeText(data.mid(nul + 1)));
    } else if (type == "zTXt" && data.size() > nul + 2) {
      if (const auto text = inflate(data.mid(nul + 2))) texts.insert(key, decodeText(*text));
    } else if (type == "iTXt" && data.size() > nul + 3) {
      const bool compressed = data[nul + 1] != 0;
      // Skip the language tag and the translated keyword, each ended by a NUL.
      const qsizetype language_end = data.indexOf('\0', nul + 3);
      const qsizetype keyword_end = language_end < 0 ? -1 : data.indexOf('\0', language_end + 1);
      if (keyword_end < 0) continue;
      const QByteArray value = data.mid(keyword_end + 1);
      if (const auto text = compressed ? inflate(value) : std::optional<QByteArray>(value))
        texts.insert(key, QString::fromUtf8(*text));
    }
  }
  return texts;
}

std::optional<RecordedSettings> parseParametersText(const QString& text) {
  QStringList lines = text.split('\n');
  while (!lines.isEmpty() && lines.back().trimmed().isEmpty()) lines.pop_back();
  if (lines.isEmpty() || !lines.back().startsWith("Steps: ")) return std::nullopt;
  RecordedSettings s;
  // "Key: value, Key: value": values end at ", " followed by the next key.
  static const QRegularExpression field(
      R"(([A-Za-z][A-Za-z0-9 ]*): (.*?)(?=, [A-Za-z][A-Za-z0-9 ]*: |$))");
  for (auto it = field.globalMatch(lines.takeLast()); it.hasNext();) {
    const auto m = it.next();
    const QString key = m.captured(1).trimmed(), value = m.captured(2).trimmed();
    if (key == "Steps")
      s.steps = value.toInt();
    else if (key == "Sampler")
      s.sampler = value;
    else if (key == "CFG scale")
      s.cfg_scale = value.toDouble();
    else if (key == "Seed")
      s.seed = value.toLongLong();
    else if (key == "Model")
      s.model = value;
    else if (key == "Size") {
      const QStringList wh = value.split('x');
      if (wh.size() == 2) {
        s.width = wh[0].toInt();
        s.height = wh[1].toInt();
      }
    }
  }
  if (s.steps <= 0) return std::nullopt;
  const auto negative = std::find_if(lines.begin(), lines.end(), [](const QString& l) {
    return l.startsWith("Negative prompt:");
  });
  QStringList prompt(lines.begin(), negative), negatives(negative, lines.end());
  if (!negatives.isEmpty())
    negatives.front() =
        negatives.front().mid(int(QStringLiteral("Negative prompt:").size())).trimmed();
  s.prompt = prompt.join('\n');
  s.negative_prompt = negatives.join('\n');
  return s;
}

}  // namespace kiln::app
