// The preferences dialog under the offscreen platform: pages and editors made from the
// setting descriptions, Apply storing valid values and handing memory settings to the
// running engine, invalid values refused with their messages and nothing stored.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "engine_bridge.h"
#include "memory_map.h"
#include "preferences_dialog.h"
#include "settings.h"

class TestPreferencesDialog : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  std::unique_ptr<QSettings> store() const {
    return std::make_unique<QSettings>(dir_.filePath("kiln.ini"), QSettings::IniFormat);
  }

 private Q_SLOTS:
  void pagesHoldAnEditorPerSetting() {
    kiln::app::Settings settings(store());
    kiln::ui::PreferencesDialog dialog(settings, nullptr);
    QCOMPARE(dialog.pages()->count(), 4);
    QCOMPARE(dialog.pages()->tabText(1), QString("Memory"));
    for (const auto& spec : kiln::app::settingSpecs())  // every one but the session's own
      QVERIFY2(spec.key.startsWith("session/") != (dialog.editorFor(spec.key) != nullptr),
               qPrintable(spec.key));
    QCOMPARE(qobject_cast<QSpinBox*>(dialog.editorFor("memory/blocks_per_group"))->value(), 1);
    QCOMPARE(qobject_cast<QLineEdit*>(dialog.editorFor("memory/pin_reserve"))->text(),
             QString("2.00GiB"));
  }

  // A new device says at once that it takes effect at the next start; refusals name the
  // field as the page labels it, not the setting's key.
  void deviceNoteAndErrorsByLabel() {
    kiln::app::Settings settings(store());
    kiln::ui::PreferencesDialog dialog(settings, nullptr);
    dialog.show();
    QVERIFY(dialog.deviceNote()->isHidden());
    auto* device = qobject_cast<QLineEdit*>(dialog.editorFor("memory/device"));
    device->setText("sim:4G");
    QVERIFY(!dialog.deviceNote()->isHidden());
    QVERIFY2(dialog.deviceNote()->text().startsWith("Takes effect when Kiln starts again"),
             qPrintable(dialog.deviceNote()->text()));
    device->setText("gpu7");
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.errorText().startsWith("Device must be cpu, cuda:N or sim:SIZE, not 'gpu7'"),
             qPrintable(dialog.errorText()));
    QVERIFY(!dialog.errorText().contains("memory/"));
    device->setText(settings.device());
    QVERIFY(dialog.deviceNote()->isHidden());
  }

  void applyStoresAndReachesTheEngine() {
    kiln::app::EngineBridge bridge;
    kiln::app::Settings settings(store());
    kiln::ui::PreferencesDialog dialog(settings, &bridge);
    dialog.show();
    // On the CPU the memory map has nothing to place, and says so.
    QVERIFY2(dialog.memoryMap()->shownText().contains("computes on the CPU"),
             qPrintable(dialog.memoryMap()->shownText()));
    QVERIFY(dialog.memoryMap()->deviceBars().isEmpty());
    qobject_cast<QSpinBox*>(dialog.editorFor("memory/blocks_per_group"))->setValue(3);
    qobject_cast<QComboBox*>(dialog.editorFor("memory/offload_unet"))
        ->setCurrentText("group-block");
    qobject_cast<QCheckBox*>(dialog.editorFor("memory/streams"))->setChecked(true);
    qobject_cast<QLineEdit*>(dialog.editorFor("memory/pin_reserve"))->setText("1G");
    QVERIFY2(dialog.apply(), qPrintable(dialog.errorText()));
    const kiln::OffloadSettings engine = bridge.offloadSettings();
    QCOMPARE(engine.blocks_per_group, 3);
    QCOMPARE(engine.per_component.at("unet"), kiln::OffloadMode::GroupBlock);
    QVERIFY(engine.streams);
    QCOMPARE(engine.pin_reserve_bytes, int64_t{1} << 30);
    kiln::app::Settings reread(store());
    QCOMPARE(reread.value("memory/blocks_per_group").toInt(), 3);

    // Invalid: a size that is not one, and record stream without streams. Nothing stored.
    qobject_cast<QLineEdit*>(dialog.editorFor("memory/pin_reserve"))->setText("lots");
    qobject_cast<QSpinBox*>(dialog.editorFor("memory/blocks_per_group"))->setValue(5);
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.errorText().contains("a size like 2G or 512MiB, not 'lots'"),
             qPrintable(dialog.errorText()));
    QCOMPARE(kiln::app::Settings(store()).value("memory/blocks_per_group").toInt(), 3);
    qobject_cast<QLineEdit*>(dialog.editorFor("memory/pin_reserve"))->setText("1G");
    qobject_cast<QCheckBox*>(dialog.editorFor("memory/streams"))->setChecked(false);
    qobject_cast<QCheckBox*>(dialog.editorFor("memory/record_stream"))->setChecked(true);
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.errorText().contains("Record stream needs streams"),
             qPrintable(dialog.errorText()));
    QCOMPARE(bridge.offloadSettings().blocks_per_group, 3);
  }
};

QTEST_MAIN(TestPreferencesDialog)
#include "test_preferences_dialog.moc"
