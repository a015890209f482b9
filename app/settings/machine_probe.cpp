#include "machine_probe.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSet>
#include <QStandardPaths>

#include "kiln/build_info.h"
#include "model_list.h"

namespace kiln::app {
namespace {

QString readSmallFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.read(4096)).trimmed();
}

}  // namespace

QString layoutName(ModelLayout layout) {
  switch (layout) {
    case ModelLayout::A1111:
      return QStringLiteral("A1111");
    case ModelLayout::ComfyUI:
      return QStringLiteral("ComfyUI");
    case ModelLayout::InvokeAI:
      return QStringLiteral("InvokeAI");
  }
  return {};
}

bool detectModelLayout(const QString& dir, ModelLayout* layout) {
  const QDir d(dir);
  if (d.exists("invokeai.yaml") && d.exists("models")) {
    *layout = ModelLayout::InvokeAI;
    return true;
  }
  if (d.exists("models/checkpoints")) {
    *layout = ModelLayout::ComfyUI;
    return true;
  }
  if (d.exists("models/Stable-diffusion")) {
    *layout = ModelLayout::A1111;
    return true;
  }
  return false;
}

QList<FoundModelFolder> findModelFolders(const QStringList& roots) {
  QList<FoundModelFolder> found;
  QSet<QString> seen;
  // True when `dir` needs no search below it: a program's folder (its own subfolders are
  // not other programs), or one already looked at.
  const auto consider = [&](const QString& dir) {
    const QString canonical = QFileInfo(dir).canonicalFilePath();
    if (canonical.isEmpty() || seen.contains(canonical)) return true;
    seen.insert(canonical);
    ModelLayout layout;
    if (!detectModelLayout(dir, &layout)) return false;
    found.push_back({QDir::cleanPath(dir), layout, countCheckpoints(findCheckpoints({dir}))});
    return true;
  };
  const auto subfolders = [](const QString& dir) {
    QStringList out;
    const QDir d(dir);
    for (const QString& name :
         d.entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::Readable, QDir::Name))
      out << d.filePath(name);
    return out;
  };
  for (const QString& root : roots) {
    if (root.isEmpty() || !QFileInfo(root).isDir()) continue;
    if (consider(root)) continue;
    for (const QString& one : subfolders(root)) {
      if (consider(one)) continue;
      for (const QString& two : subfolders(one)) consider(two);
    }
  }
  return found;
}

QStringList usualModelSearchRoots() {
  QStringList roots{QDir::homePath()};
  if (const QString invoke = qEnvironmentVariable("INVOKEAI_ROOT"); !invoke.isEmpty())
    roots << invoke;
  roots << QStringLiteral("/opt");
  return roots;
}

QList<GpuInfo> parseNvidiaSmi(const QString& output) {
  QList<GpuInfo> gpus;
  for (const QString& line : output.split('\n', Qt::SkipEmptyParts)) {
    const int comma = static_cast<int>(line.lastIndexOf(','));
    if (comma <= 0) continue;
    bool ok = false;
    const double mib = line.mid(comma + 1).trimmed().toDouble(&ok);
    const QString name = line.left(comma).trimmed();
    if (!ok || mib <= 0 || name.isEmpty()) continue;
    gpus.push_back({name, QStringLiteral("NVIDIA"), static_cast<qint64>(mib * 1024 * 1024)});
  }
  return gpus;
}

QList<GpuInfo> probeDrmGpus(const QString& sys_root) {
  QList<GpuInfo> gpus;
  const QDir drm(sys_root + "/class/drm");
  for (const QString& card :
       drm.entryList({"card*"}, QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
    if (card.contains('-')) continue;  // connectors (card0-DP-1), not devices
    const QString dev = drm.filePath(card) + "/device";
    const QString vendor = readSmallFile(dev + "/vendor").toLower();
    const QString device_id = readSmallFile(dev + "/device");
    GpuInfo gpu;
    if (vendor == "0x1002") {
      gpu.vendor = QStringLiteral("AMD");
      bool ok = false;
      gpu.memory_bytes = readSmallFile(dev + "/mem_info_vram_total").toLongLong(&ok);
      // Integrated Radeon graphics carve a small window out of host memory.
      if (!ok || gpu.memory_bytes < (qint64{1} << 30)) continue;
    } else if (vendor == "0x10de") {
      gpu.vendor = QStringLiteral("NVIDIA");  // memory: only nvidia-smi knows it
    } else {
      continue;  // Intel and others: no compute backend Kiln could use
    }
    gpu.name = readSmallFile(dev + "/product_name");
    if (gpu.name.isEmpty()) gpu.name = gpu.vendor + " GPU " + device_id;
    gpus.push_back(gpu);
  }
  return gpus;
}

QList<GpuInfo> detectGpus() {
  const QString smi = QStandardPaths::findExecutable("nvidia-smi");
  if (!smi.isEmpty()) {
    QProcess p;
    p.start(smi, {"--query-gpu=name,memory.total", "--format=csv,noheader,nounits"});
    if (p.waitForFinished(5000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0) {
      const QList<GpuInfo> nvidia = parseNvidiaSmi(QString::fromUtf8(p.readAllStandardOutput()));
      if (!nvidia.isEmpty()) {
        QList<GpuInfo> all = nvidia;
        for (const GpuInfo& g : probeDrmGpus("/sys"))
          if (g.vendor != QLatin1String("NVIDIA")) all << g;
        return all;
      }
    } else {
      p.kill();
      p.waitForFinished(1000);
    }
  }
  return probeDrmGpus("/sys");
}

QList<GpuInfo> buildGpus() {
  QList<GpuInfo> out;
  for (const kiln::GpuDeviceInfo& g : kiln::buildInfo().gpus)
    out.append({QString::fromStdString(g.name),
                g.rocm ? QStringLiteral("AMD") : QStringLiteral("NVIDIA"),
                static_cast<qint64>(g.memory_bytes), QString::fromStdString(g.device)});
  return out;
}

QList<GpuInfo> firstStartGpus() {
  QList<GpuInfo> usable = buildGpus();
  return usable.isEmpty() ? detectGpus() : usable;
}

}  // namespace kiln::app
