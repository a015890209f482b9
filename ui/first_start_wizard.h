// The first-start assistant: the model folders of other programs found on this machine
// (each can be left out, others added), the GPUs found with their memory (those this
// build's libtorch computes on, where it has any), the GPU to compute on, and the memory
// preset proposed for it. Finishing stores the folders and the preset's
// settings; skipping stores nothing but that the assistant ran. Preferences can change
// all of it later (and show the assistant again).
#pragma once

#include <QList>
#include <QWizard>

#include "machine_probe.h"
#include "memory_presets.h"

class QButtonGroup;
class QComboBox;
class QLabel;
class QListWidget;
class QVBoxLayout;

namespace kiln::app {
class Settings;
}

namespace kiln::ui {

class FirstStartWizard : public QWizard {
  Q_OBJECT

 public:
  // `build_has_gpu`: whether this build can compute on a GPU at all (see
  // kiln::buildInfo); without it the CPU preset is proposed whatever `gpus` holds.
  FirstStartWizard(app::Settings& settings, QList<app::FoundModelFolder> folders,
                   QList<app::GpuInfo> gpus, bool build_has_gpu, QWidget* parent = nullptr);

  // Looks for model folders in the usual places and for GPUs.
  static FirstStartWizard* detect(app::Settings& settings, QWidget* parent = nullptr);

  app::MemoryPreset proposedPreset() const { return proposed_; }
  app::MemoryPreset chosenPreset() const;
  void choosePreset(app::MemoryPreset preset);
  // The folders that will be added: the found ones still checked, then those added.
  QStringList chosenFolders() const;
  void addFolder(const QString& path);
  QListWidget* folderList() const { return folders_; }
  QString gpuText() const;
  // The device Kiln will compute on: the one picked where the build has GPUs, else the
  // proposed one.
  QString chosenDevice() const;
  QComboBox* deviceChoice() const { return devices_; }  // null for a CPU-only build

  void accept() override;
  void reject() override;

 private:
  void browseFolder();
  void addFolderRow(const QString& text, const QString& path);  // checked
  void addDeviceChoice(QVBoxLayout* layout);

  app::Settings& settings_;
  QList<app::GpuInfo> gpus_;
  bool build_has_gpu_ = false;
  app::MemoryPreset proposed_ = app::MemoryPreset::Cpu;
  QListWidget* folders_ = nullptr;
  QLabel* gpu_label_ = nullptr;
  QButtonGroup* presets_ = nullptr;
  QComboBox* devices_ = nullptr;
};

}  // namespace kiln::ui
