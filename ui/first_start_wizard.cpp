#include "first_start_wizard.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMap>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>
#include <QWizardPage>

#include <algorithm>

#include "kiln/units.h"
#include "settings.h"

namespace kiln::ui {
namespace {

constexpr int kPathRole = Qt::UserRole;

QString memoryText(qint64 bytes) {
  return bytes > 0 ? QString::fromStdString(formatBytes(bytes))
                   : FirstStartWizard::tr("memory unknown");
}

}  // namespace

FirstStartWizard::FirstStartWizard(app::Settings& settings, QList<app::FoundModelFolder> folders,
                                   QList<app::GpuInfo> gpus, bool build_has_gpu, QWidget* parent)
    : QWizard(parent), settings_(settings), gpus_(std::move(gpus)), build_has_gpu_(build_has_gpu) {
  setWindowTitle(tr("Welcome to Kiln"));
  setObjectName("firstStartWizard");
  setButtonText(QWizard::CancelButton, tr("Skip"));

  // Model folders.
  auto* models = new QWizardPage;
  models->setTitle(tr("Your models"));
  auto* intro = new QLabel(folders.isEmpty()
                               ? tr("No A1111, ComfyUI or InvokeAI model folders were found. "
                                    "Kiln's starter model is ready to use; add "
                                    "folders of your own checkpoints here or later in Preferences.")
                               : tr("Kiln found the model folders of these programs. Checked "
                                    "folders are searched for checkpoints, "
                                    "LoRAs and VAEs; the files stay where they are."));
  intro->setWordWrap(true);
  folders_ = new QListWidget;
  folders_->setObjectName("modelFolders");
  for (const app::FoundModelFolder& f : folders) {
    const QString text = f.checkpoints == 1
                             ? tr("%1: %2 (1 checkpoint)").arg(app::layoutName(f.layout), f.path)
                             : tr("%1: %2 (%3 checkpoints)")
                                   .arg(app::layoutName(f.layout), f.path)
                                   .arg(f.checkpoints);
    addFolderRow(text, f.path);
  }
  auto* add = new QPushButton(tr("Add folder..."));
  connect(add, &QPushButton::clicked, this, &FirstStartWizard::browseFolder);
  auto* models_layout = new QVBoxLayout(models);
  models_layout->addWidget(intro);
  models_layout->addWidget(folders_);
  models_layout->addWidget(add, 0, Qt::AlignLeft);
  addPage(models);

  // Memory.
  proposed_ = app::proposeMemoryPreset(gpus_, build_has_gpu_);
  auto* memory = new QWizardPage;
  memory->setTitle(tr("Memory"));
  gpu_label_ = new QLabel(gpuText());
  gpu_label_->setObjectName("gpuText");
  gpu_label_->setWordWrap(true);
  auto* memory_layout = new QVBoxLayout(memory);
  memory_layout->addWidget(gpu_label_);
  if (build_has_gpu_) addDeviceChoice(memory_layout);
  presets_ = new QButtonGroup(this);
  for (app::MemoryPreset p : app::memoryPresets()) {
    QString title = app::memoryPresetTitle(p);
    if (p == proposed_) title = tr("%1 (proposed)").arg(title);
    auto* button = new QRadioButton(title);
    button->setObjectName("preset-" + app::memoryPresetKey(p));
    auto* what = new QLabel(app::memoryPresetDescription(p));
    what->setWordWrap(true);
    what->setIndent(24);
    presets_->addButton(button, static_cast<int>(p));
    memory_layout->addWidget(button);
    memory_layout->addWidget(what);
  }
  presets_->button(static_cast<int>(proposed_))->setChecked(true);
  auto* later = new QLabel(tr("Every one of these settings can be changed later in Preferences."));
  later->setWordWrap(true);
  memory_layout->addStretch();
  memory_layout->addWidget(later);
  addPage(memory);
  // Wide and tall enough that the wrapped descriptions are shown whole.
  setMinimumSize(680, 600);
}

FirstStartWizard* FirstStartWizard::detect(app::Settings& settings, QWidget* parent) {
  return new FirstStartWizard(settings, app::findModelFolders(app::usualModelSearchRoots()),
                              app::firstStartGpus(), app::buildHasGpu(), parent);
}

// Where the build computes on GPUs: which one Kiln uses (or the CPU), the largest
// proposed. Picking one proposes the preset for its memory.
void FirstStartWizard::addDeviceChoice(QVBoxLayout* layout) {
  devices_ = new QComboBox;
  devices_->setObjectName("computeDevice");
  QMap<QString, int> vendor_count;
  for (const app::GpuInfo& g : gpus_) {
    // A GPU found without the build naming it gets CUDA's number among its vendor's.
    const QString device =
        !g.device.isEmpty() ? g.device : QStringLiteral("cuda:%1").arg(vendor_count[g.vendor]++);
    devices_->addItem(tr("%1: %2 (%3)").arg(device, g.name, memoryText(g.memory_bytes)), device);
  }
  devices_->addItem(tr("cpu: the processor (slow; for machines without a usable GPU)"),
                    QStringLiteral("cpu"));
  const int proposed =
      devices_->findData(app::proposedDevice(gpus_, build_has_gpu_, settings_.device()));
  devices_->setCurrentIndex(std::max(proposed, 0));
  connect(devices_, &QComboBox::currentIndexChanged, this, [this] {
    const QString device = chosenDevice();
    QList<app::GpuInfo> chosen;
    for (int i = 0; i < gpus_.size(); ++i)
      if (devices_->itemData(i).toString() == device) chosen << gpus_[i];
    choosePreset(app::proposeMemoryPreset(chosen, build_has_gpu_));
  });
  auto* row = new QHBoxLayout;
  auto* label = new QLabel(tr("Compute on"));
  label->setBuddy(devices_);
  row->addWidget(label);
  row->addWidget(devices_, 1);
  layout->addLayout(row);
}

QString FirstStartWizard::chosenDevice() const {
  if (devices_) return devices_->currentData().toString();
  return app::proposedDevice(gpus_, build_has_gpu_, settings_.device());
}

QString FirstStartWizard::gpuText() const {
  QString text;
  if (gpus_.isEmpty()) {
    text = tr("No GPU was found: Kiln computes on the CPU.");
  } else {
    QStringList names;
    for (const app::GpuInfo& g : gpus_)
      names << tr("%1 (%2)").arg(g.name, memoryText(g.memory_bytes));
    text = tr("Found: %1.").arg(names.join(", "));
    if (!build_has_gpu_)
      text +=
          ' ' + tr("This build of Kiln computes on the CPU only, so the CPU preset is proposed.");
  }
  return text;
}

app::MemoryPreset FirstStartWizard::chosenPreset() const {
  return static_cast<app::MemoryPreset>(presets_->checkedId());
}

void FirstStartWizard::choosePreset(app::MemoryPreset preset) {
  presets_->button(static_cast<int>(preset))->setChecked(true);
}

QStringList FirstStartWizard::chosenFolders() const {
  QStringList out;
  for (int i = 0; i < folders_->count(); ++i)
    if (folders_->item(i)->checkState() == Qt::Checked)
      out << folders_->item(i)->data(kPathRole).toString();
  return out;
}

void FirstStartWizard::addFolder(const QString& path) {
  if (path.isEmpty()) return;
  for (int i = 0; i < folders_->count(); ++i)
    if (folders_->item(i)->data(kPathRole).toString() == path) {
      folders_->item(i)->setCheckState(Qt::Checked);
      return;
    }
  addFolderRow(path, path);
}

void FirstStartWizard::addFolderRow(const QString& text, const QString& path) {
  auto* item = new QListWidgetItem(text);
  item->setData(kPathRole, path);
  item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
  item->setCheckState(Qt::Checked);
  folders_->addItem(item);
}

void FirstStartWizard::browseFolder() {
  addFolder(QFileDialog::getExistingDirectory(this, tr("Model folder")));
}

void FirstStartWizard::accept() {
  QStringList folders = settings_.modelFolders();
  for (const QString& f : chosenFolders())
    if (!folders.contains(f)) folders << f;
  settings_.set("general/model_folders", folders);
  const QString problem = app::applyMemoryPreset(settings_, chosenPreset(), chosenDevice());
  if (!problem.isEmpty()) qWarning("first-start assistant: %s", qPrintable(problem));
  settings_.set("general/first_start", false);
  QWizard::accept();
}

void FirstStartWizard::reject() {
  settings_.set("general/first_start", false);
  QWizard::reject();
}

}  // namespace kiln::ui
