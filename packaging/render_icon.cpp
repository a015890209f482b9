// Renders the application icon's SVG into the PNG sizes desktops look for:
//   kiln-render-icon ICON.svg OUT_DIR NAME SIZE...
// writes OUT_DIR/<size>x<size>/apps/NAME.png (the hicolor theme's layout).
#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: kiln-render-icon ICON.svg OUT_DIR NAME SIZE...\n");
    return 2;
  }
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  QSvgRenderer svg(QString::fromLocal8Bit(argv[1]));
  if (!svg.isValid()) {
    std::fprintf(stderr, "kiln-render-icon: cannot read '%s' as SVG\n", argv[1]);
    return 1;
  }
  for (int i = 4; i < argc; ++i) {
    const int size = QString::fromLatin1(argv[i]).toInt();
    if (size < 8 || size > 1024) {
      std::fprintf(stderr, "kiln-render-icon: size '%s' is not between 8 and 1024\n", argv[i]);
      return 2;
    }
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    svg.render(&painter);
    painter.end();
    const QString dir = QString("%1/%2x%2/apps").arg(QString::fromLocal8Bit(argv[2])).arg(size);
    const QString file = dir + "/" + QString::fromLocal8Bit(argv[3]) + ".png";
    if (!QDir().mkpath(dir) || !image.save(file, "PNG")) {
      std::fprintf(stderr, "kiln-render-icon: cannot write '%s'\n", qPrintable(file));
      return 1;
    }
  }
  return 0;
}
