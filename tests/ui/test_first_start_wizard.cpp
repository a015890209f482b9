// The first-start assistant under the offscreen platform: found folders listed and
// checked, the proposed preset chosen and marked, finishing storing the folders and the
// preset's settings (a CPU-only build never gets a GPU device), skipping storing only
// that it ran; and the Preferences preset row filling in the memory editors.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRadioButton>
#include <QTemporaryDir>
#include <QtTest>

#include "first_start_wizard.h"
#include "preferences_dialog.h"
#include "settings.h"

using namespace kiln::app;

namespace {
constexpr qint64 kGiB = qint64{1} << 30;
}

class TestFirstStartWizard : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  int files_ = 0;

  std::unique_ptr<QSettings> store() {
    return std::make_unique<QSettings>(dir_.filePath(QString("s%1.ini").arg(++files_)),
                                       QSettings::IniFormat);
  }

  QList<FoundModelFolder> folders() const {
    return {{"/home/u/ComfyUI", ModelLayout::ComfyUI, 3},
            {"/home/u/invokeai", ModelLayout::InvokeAI, 1}};
  }

 private Q_SLOTS:
  void finishingStoresFoldersAndThePreset() {
    Settings settings(store());
    QCOMPARE(settings.set("general/model_folders", QStringList{"/data/models"}), QString());
    QCOMPARE(settings.set("memory/device", "sim:8G"), QString());
    kiln::ui::FirstStartWizard wizard(settings, folders(),
                                      {{"NVIDIA GeForce RTX 3060", "NVIDIA", 12 * kGiB}}, true);
    wizard.show();
    QCOMPARE(wizard.folderList()->count(), 2);
    QVERIFY(wizard.folderList()->item(0)->text().contains("ComfyUI"));
    QVERIFY(wizard.folderList()->item(0)->text().contains("3 checkpoints"));
    QCOMPARE(wizard.proposedPreset(), MemoryPreset::Upto12GB);
    auto* proposed = wizard.findChild<QRadioButton*>("preset-upto-12gb");
    QVERIFY(proposed && proposed->isChecked());
    QVERIFY(proposed->text().contains("proposed"));
    QVERIFY(wizard.gpuText().contains("RTX 3060"));
    QVERIFY(wizard.gpuText().contains("12.0 GiB"));
    wizard.folderList()->item(1)->setCheckState(Qt::Unchecked);  // leave InvokeAI out
    wizard.addFolder("/mnt/models");
    wizard.choosePreset(MemoryPreset::Upto6GB);
    wizard.accept();
    QCOMPARE(settings.modelFolders(),
             (QStringList{"/data/models", "/home/u/ComfyUI", "/mnt/models"}));
    QCOMPARE(settings.value("memory/offload").toString(), QString("balanced"));
    QCOMPARE(settings.value("memory/offload_text_encoder").toString(), QString("group-leaf"));
    QCOMPARE(settings.value("memory/vae_tiling").toString(), QString("always"));
    QCOMPARE(settings.device(), QString("cuda:0"));  // a build with a GPU backend
    QCOMPARE(settings.value("general/first_start").toBool(), false);
  }

  void aCpuOnlyBuildProposesTheCpu() {
    Settings settings(store());
    kiln::ui::FirstStartWizard wizard(settings, {},
                                      {{"NVIDIA GeForce RTX 4090", "NVIDIA", 24 * kGiB}}, false);
    QCOMPARE(wizard.proposedPreset(), MemoryPreset::Cpu);
    QVERIFY(wizard.findChild<QRadioButton*>("preset-cpu")->isChecked());
    QVERIFY(wizard.gpuText().contains("CPU only"));
    QCOMPARE(wizard.folderList()->count(), 0);
    wizard.choosePreset(
        MemoryPreset::Over12GB);  // chosen anyway: offload settings, but no GPU device
    wizard.accept();
    QCOMPARE(settings.device(), QString("cpu"));
    QCOMPARE(settings.value("memory/streams").toBool(), true);
  }

  // A build with GPUs lists the ones its libtorch computes on, by their device, proposes
  // the largest, and picking another proposes the preset for that one's memory.
  void theGpuToComputeOnIsChosen() {
    Settings settings(store());
    kiln::ui::FirstStartWizard wizard(settings, {},
                                      {{"NVIDIA GeForce RTX 3060", "NVIDIA", 12 * kGiB, "cuda:0"},
                                       {"NVIDIA GeForce RTX 4090", "NVIDIA", 24 * kGiB, "cuda:1"}},
                                      true);
    QComboBox* devices = wizard.deviceChoice();
    QVERIFY(devices);
    QCOMPARE(devices->count(), 3);  // both GPUs and the CPU
    QCOMPARE(wizard.chosenDevice(), QString("cuda:1"));
    QVERIFY(devices->currentText().contains("RTX 4090"));
    QCOMPARE(wizard.chosenPreset(), MemoryPreset::Over12GB);
    devices->setCurrentIndex(devices->findData("cuda:0"));
    QCOMPARE(wizard.chosenPreset(), MemoryPreset::Upto12GB);
    devices->setCurrentIndex(devices->findData("cpu"));
    QCOMPARE(wizard.chosenPreset(), MemoryPreset::Cpu);
    devices->setCurrentIndex(devices->findData("cuda:0"));
    wizard.accept();
    QCOMPARE(settings.device(), QString("cuda:0"));
    QCOMPARE(
        settings.value("memory/offload").toString(),
        memoryPresetValues(MemoryPreset::Upto12GB, "cuda:0").value("memory/offload").toString());
    // A CPU-only build offers no choice.
    kiln::ui::FirstStartWizard cpu_only(settings, {}, {{"RTX", "NVIDIA", 8 * kGiB}}, false);
    QVERIFY(!cpu_only.deviceChoice());
    QCOMPARE(cpu_only.chosenDevice(), QString("cpu"));
  }

  void skippingStoresOnlyThatItRan() {
    Settings settings(store());
    kiln::ui::FirstStartWizard wizard(settings, folders(), {}, true);
    QCOMPARE(wizard.proposedPreset(), MemoryPreset::Cpu);
    QVERIFY(wizard.gpuText().contains("No GPU"));
    wizard.reject();
    QVERIFY(settings.modelFolders().isEmpty());
    QCOMPARE(settings.value("memory/offload").toString(), QString("none"));
    QCOMPARE(settings.value("general/first_start").toBool(), false);
  }

  void preferencesFillInAPreset() {
    Settings settings(store());
    kiln::ui::PreferencesDialog dialog(settings, nullptr);
    auto* combo = dialog.findChild<QComboBox*>("memoryPreset");
    QVERIFY(combo);
    QCOMPARE(combo->count(), 5);  // the four presets and Custom
    QCOMPARE(combo->currentData().toString(),
             QString("custom"));  // the defaults pin; the CPU preset does not
    QCOMPARE(combo->itemText(1), QString("GPU with up to 6 GB"));
    combo->setCurrentIndex(1);
    dialog.findChild<QPushButton*>("applyMemoryPreset")->click();
    QCOMPARE(qobject_cast<QComboBox*>(dialog.editorFor("memory/offload"))->currentText(),
             QString("balanced"));
    QCOMPARE(qobject_cast<QComboBox*>(dialog.editorFor("memory/vae_tiling"))->currentText(),
             QString("always"));
    QCOMPARE(settings.value("memory/offload").toString(),
             QString("none"));  // not stored before Apply
    QVERIFY(dialog.apply());
    QCOMPARE(settings.value("memory/offload").toString(), QString("balanced"));
    QCOMPARE(settings.value("memory/offload_text_encoder").toString(), QString("group-leaf"));
    QCOMPARE(settings.device(), QString("cpu"));  // this build has no GPU device to switch to
    // Opened again, the box names the preset the values are; changed by hand, Custom.
    kiln::ui::PreferencesDialog again(settings, nullptr);
    auto* box = again.findChild<QComboBox*>("memoryPreset");
    QCOMPARE(box->currentData().toString(), QString("upto-6gb"));
    auto* tiling = qobject_cast<QComboBox*>(again.editorFor("memory/vae_tiling"));
    tiling->setCurrentIndex(tiling->findText("never"));  // no preset's
    QCOMPARE(box->currentData().toString(), QString("custom"));
    QCOMPARE(box->currentText(), QString("Custom (your own values)"));
  }
};

QTEST_MAIN(TestFirstStartWizard)
#include "test_first_start_wizard.moc"
