// What a first start looks for on this machine: the model folders of other diffusion
// programs (A1111/Forge, ComfyUI, InvokeAI) in the usual places, and the GPUs with their
// memory. Nothing here changes a setting; the first-start assistant proposes, the user
// decides.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace kiln::app {

enum class ModelLayout { A1111, ComfyUI, InvokeAI };
QString layoutName(ModelLayout layout);  // "A1111", "ComfyUI", "InvokeAI"

struct FoundModelFolder {
  QString path;  // the program's folder, as the model_folders setting takes it
  ModelLayout layout = ModelLayout::A1111;
  int checkpoints = 0;  // usable checkpoints findCheckpoints() lists in it (countCheckpoints)
};

// The layout of `dir` when it is a model tree Kiln can read, by what it holds:
// models/Stable-diffusion (A1111, Forge, SD.Next), models/checkpoints (ComfyUI), or
// invokeai.yaml beside models/ (InvokeAI). False when it is none of them.
bool detectModelLayout(const QString& dir, ModelLayout* layout);

// The places looked in: each of `roots`, and its subfolders one and two levels down
// (~/ComfyUI, ~/AI/stable-diffusion-webui, /opt/invokeai, ...). Each folder once, by
// path, in the order found.
QList<FoundModelFolder> findModelFolders(const QStringList& roots);
// The user's home, $INVOKEAI_ROOT and /opt.
QStringList usualModelSearchRoots();

struct GpuInfo {
  QString name;             // "NVIDIA GeForce RTX 3060"
  QString vendor;           // "NVIDIA", "AMD"
  qint64 memory_bytes = 0;  // 0: not known
  // Kiln's device for it ("cuda:0") where this build computes on it; empty for a GPU
  // found on the machine only.
  QString device{};
};

// `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits` output (MiB).
QList<GpuInfo> parseNvidiaSmi(const QString& output);
// Discrete GPUs under <sys_root>/class/drm/card*/device (amdgpu reports its memory in
// mem_info_vram_total; NVIDIA cards only by vendor id). sys_root is "/sys" on a machine.
QList<GpuInfo> probeDrmGpus(const QString& sys_root);
// nvidia-smi when it is installed (NVIDIA), else what sysfs tells.
QList<GpuInfo> detectGpus();
// The GPUs this build's libtorch computes on (kiln::buildInfo().gpus), in device-number
// order, each with its device; empty for a CPU-only build.
QList<GpuInfo> buildGpus();
// What the first start shows: the GPUs this build can use where it has any, else those
// the machine has (for a CPU-only build, to say that they go unused).
QList<GpuInfo> firstStartGpus();

}  // namespace kiln::app
