// Memory presets: offload and tiling defaults for the memory a machine's GPU has. The
// first-start assistant proposes one; Preferences can apply any of them later. A preset
// only fills in settings: each stays editable on its own afterwards.
#pragma once

#include <QList>
#include <QMap>
#include <QString>
#include <QVariant>

#include "machine_probe.h"

namespace kiln::app {

class Settings;

enum class MemoryPreset { Cpu, Upto6GB, Upto12GB, Over12GB };

const QList<MemoryPreset>& memoryPresets();
QString memoryPresetKey(MemoryPreset preset);  // "cpu", "upto-6gb", "upto-12gb", "over-12gb"
bool parseMemoryPreset(const QString& key, MemoryPreset* preset);
// "CPU only", "GPU up to 6 GB", ... and a sentence on what it does, translated.
QString memoryPresetTitle(MemoryPreset preset);
QString memoryPresetDescription(MemoryPreset preset);

// The preset for the largest GPU in `gpus` (a GPU whose memory is unknown counts as up
// to 6 GB); Cpu when there is none or `build_has_gpu` is false (this build computes on
// the CPU whatever the machine has).
MemoryPreset proposeMemoryPreset(const QList<GpuInfo>& gpus, bool build_has_gpu);

// Whether this build can compute on a GPU at all (kiln::buildInfo's devices).
bool buildHasGpu();
// The GPU the proposal is for: the index of the largest GPU among those of its vendor
// (nvidia-smi lists them in PCI order; CUDA numbers them that way with
// CUDA_DEVICE_ORDER=PCI_BUS_ID). 0 when there is none.
int proposedGpuIndex(const QList<GpuInfo>& gpus);
// The device a GPU preset computes on: cuda:<gpu_index> where the build has GPU support,
// else `current` (the CPU or a simulated device), so a preset never names a device the
// build cannot open.
QString presetDevice(bool build_has_gpu, const QString& current, int gpu_index = 0);
// The device proposed for `gpus`: the largest one's own device where the build named it
// (buildGpus), else presetDevice for the largest by its vendor index.
QString proposedDevice(const QList<GpuInfo>& gpus, bool build_has_gpu, const QString& current);

// The settings a preset sets (memory/...), every one valid for Settings::set. `device` is
// what memory/device becomes ("cpu" for the CPU preset whatever is given).
QMap<QString, QVariant> memoryPresetValues(MemoryPreset preset, const QString& device);
// Stores the preset's values; "" on success, else why a value was refused (the values
// are checked first, so nothing is stored then).
QString applyMemoryPreset(Settings& settings, MemoryPreset preset, const QString& device);

}  // namespace kiln::app
