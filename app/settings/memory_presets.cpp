#include "memory_presets.h"

#include <QCoreApplication>

#include <algorithm>

#include "kiln/build_info.h"
#include "settings.h"

namespace kiln::app {
namespace {

constexpr qint64 kGiB = qint64{1} << 30;

}  // namespace

const QList<MemoryPreset>& memoryPresets() {
  static const QList<MemoryPreset> all{MemoryPreset::Cpu, MemoryPreset::Upto6GB,
                                       MemoryPreset::Upto12GB, MemoryPreset::Over12GB};
  return all;
}

QString memoryPresetKey(MemoryPreset preset) {
  switch (preset) {
    case MemoryPreset::Cpu:
      return QStringLiteral("cpu");
    case MemoryPreset::Upto6GB:
      return QStringLiteral("upto-6gb");
    case MemoryPreset::Upto12GB:
      return QStringLiteral("upto-12gb");
    case MemoryPreset::Over12GB:
      return QStringLiteral("over-12gb");
  }
  return {};
}

bool parseMemoryPreset(const QString& key, MemoryPreset* preset) {
  for (MemoryPreset p : memoryPresets())
    if (memoryPresetKey(p) == key) {
      *preset = p;
      return true;
    }
  return false;
}

QString memoryPresetTitle(MemoryPreset preset) {
  switch (preset) {
    case MemoryPreset::Cpu:
      return QCoreApplication::translate("kiln::app::MemoryPresets", "CPU only");
    case MemoryPreset::Upto6GB:
      return QCoreApplication::translate("kiln::app::MemoryPresets", "GPU with up to 6 GB");
    case MemoryPreset::Upto12GB:
      return QCoreApplication::translate("kiln::app::MemoryPresets", "GPU with 6 to 12 GB");
    case MemoryPreset::Over12GB:
      return QCoreApplication::translate("kiln::app::MemoryPresets", "GPU with more than 12 GB");
  }
  return {};
}

QString memoryPresetDescription(MemoryPreset preset) {
  switch (preset) {
    case MemoryPreset::Cpu:
      return QCoreApplication::translate(
          "kiln::app::MemoryPresets",
          "Everything computes in host memory; nothing is moved between memories.");
    case MemoryPreset::Upto6GB:
      return QCoreApplication::translate(
          "kiln::app::MemoryPresets",
          "Weights stream to the GPU in groups as they are needed, text encoders layer by layer, "
          "and the "
          "VAE always works in tiles. Slower, but large models fit.");
    case MemoryPreset::Upto12GB:
      return QCoreApplication::translate(
          "kiln::app::MemoryPresets",
          "The denoiser keeps on the GPU what fits and streams the rest in groups (FLUX.1's "
          "transformer fits this way); text encoders stream layer by layer (T5-XXL); the VAE "
          "moves to the GPU whole while it runs and works in tiles when a picture would not fit.");
    case MemoryPreset::Over12GB:
      return QCoreApplication::translate(
          "kiln::app::MemoryPresets",
          "Every model stays on the GPU: the fastest, for cards with room for them.");
  }
  return {};
}

bool buildHasGpu() {
  const BuildInfo info = buildInfo();
  return std::any_of(info.devices.begin(), info.devices.end(),
                     [](const std::string& d) { return d.rfind("cuda", 0) == 0; });
}

int proposedGpuIndex(const QList<GpuInfo>& gpus) {
  int largest = -1;
  for (int i = 0; i < gpus.size(); ++i)
    if (largest < 0 || gpus[i].memory_bytes > gpus[largest].memory_bytes) largest = i;
  if (largest < 0) return 0;
  int index = 0;
  for (int i = 0; i < largest; ++i) index += gpus[i].vendor == gpus[largest].vendor ? 1 : 0;
  return index;
}

QString presetDevice(bool build_has_gpu, const QString& current, int gpu_index) {
  if (build_has_gpu) return QStringLiteral("cuda:%1").arg(gpu_index);
  return current.startsWith("cuda") ? QStringLiteral("cpu") : current;
}

QString proposedDevice(const QList<GpuInfo>& gpus, bool build_has_gpu, const QString& current) {
  const auto largest = std::max_element(gpus.begin(), gpus.end(), [](const auto& a, const auto& b) {
    return a.memory_bytes < b.memory_bytes;
  });
  if (build_has_gpu && largest != gpus.end() && !largest->device.isEmpty()) return largest->device;
  return presetDevice(build_has_gpu, current, proposedGpuIndex(gpus));
}

MemoryPreset proposeMemoryPreset(const QList<GpuInfo>& gpus, bool build_has_gpu) {
  if (!build_has_gpu || gpus.isEmpty()) return MemoryPreset::Cpu;
  qint64 largest = 0;
  for (const GpuInfo& g : gpus) largest = std::max(largest, g.memory_bytes);
  // Cards report a little less than their label (a "6 GB" card: 5.8 GiB to 6 GiB).
  if (largest <= 6 * kGiB + kGiB / 4) return MemoryPreset::Upto6GB;
  if (largest <= 12 * kGiB + kGiB / 4) return MemoryPreset::Upto12GB;
  return MemoryPreset::Over12GB;
}

QMap<QString, QVariant> memoryPresetValues(MemoryPreset preset, const QString& device) {
  QMap<QString, QVariant> v;
  const bool gpu = preset != MemoryPreset::Cpu;
  v["memory/device"] = gpu ? device : QStringLiteral("cpu");
  v["memory/blocks_per_group"] = 1;
  v["memory/streams"] = gpu;
  v["memory/record_stream"] = false;
  v["memory/pin"] = gpu ? QStringLiteral("on") : QStringLiteral("off");
  v["memory/tile_size"] = 0;
  v["memory/tile_overlap"] = 64;
  const auto set = [&v](const char* all, const char* text_encoder, const char* unet,
                        const char* vae, const char* tiling, qint64 working_reserve) {
    v["memory/offload"] = QString(all);
    v["memory/offload_text_encoder"] = QString(text_encoder);
    v["memory/offload_unet"] = QString(unet);
    v["memory/offload_vae"] = QString(vae);
    v["memory/vae_tiling"] = QString(tiling);
    v["memory/working_reserve"] = working_reserve;
  };
  switch (preset) {
    case MemoryPreset::Cpu:
    case MemoryPreset::Over12GB:
      set("none", "none", "none", "none", "auto", qint64{512} << 20);
      break;
    case MemoryPreset::Upto6GB:
      set("balanced", "group-leaf", "balanced", "model", "always", kGiB);
      break;
    case MemoryPreset::Upto12GB:
      // Balanced keeps SDXL whole and streams what does not fit of FLUX.1's 24 GB (bf16)
      // transformer; T5-XXL (9.5 GB) goes leaf by leaf.
      set("balanced", "group-leaf", "balanced", "model", "auto", kGiB);
      break;
  }
  return v;
}

QString applyMemoryPreset(Settings& settings, MemoryPreset preset, const QString& device) {
  const QMap<QString, QVariant> values = memoryPresetValues(preset, device);
  for (auto it = values.begin(); it != values.end(); ++it) {
    const SettingSpec* spec = findSetting(it.key());
    if (!spec)
      return QCoreApplication::translate("kiln::app::MemoryPresets", "Kiln has no setting %1")
          .arg(it.key());
    if (const QString problem = Settings::check(*spec, it.value()); !problem.isEmpty())
      return problem;
  }
  for (auto it = values.begin(); it != values.end(); ++it) settings.set(it.key(), it.value());
  return {};
}

}  // namespace kiln::app
