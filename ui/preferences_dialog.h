// The preferences dialog: one page per group of settings (General, Memory, LoRA,
// Appearance), an editor per setting made from its description, memory presets that
// fill in the Memory page, Apply that refuses invalid values with their messages, and
// memory settings applied to the running engine at once (loaded models are placed again
// before the next job, without reloading), and the memory map of the Memory page's values
// before they are applied.
#pragma once

#include <QDialog>
#include <QMap>

class QComboBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTabWidget;
class QVariant;

namespace kiln::app {
class EngineBridge;
class Settings;
struct SettingSpec;
enum class MemoryPreset;
}  // namespace kiln::app

namespace kiln::ui {

class MemoryMapView;

class PreferencesDialog : public QDialog {
  Q_OBJECT

 public:
  PreferencesDialog(app::Settings& settings, app::EngineBridge* bridge, QWidget* parent = nullptr);

  // Stores every editor's value; false (storing nothing) when any is invalid, with the
  // reasons in errorText().
  bool apply();
  QWidget* editorFor(const QString& key) const { return editors_.value(key); }
  QString errorText() const;
  QTabWidget* pages() const { return pages_; }
  QComboBox* presetBox() const { return presets_; }
  QLabel* deviceNote() const { return device_note_; }
  // Sets the memory editors to a preset's values (stored by the next Apply or OK), as
  // the Memory page's preset row does.
  void fillPreset(app::MemoryPreset preset);
  // The size the memory map's working memory is for (the Generate panel's; 0: each
  // model's native size), and the map itself.
  void setPlanSize(int width, int height, int frames);
  MemoryMapView* memoryMap() const { return memory_map_; }

 protected:
  void changeEvent(QEvent* event) override;

 Q_SIGNALS:
  // The settings were stored (Apply or OK with valid values).
  void applied();

 private:
  void load();
  void showValue(const app::SettingSpec& spec, const QVariant& value);
  QVariant editorValue(const QString& key) const;
  void retranslate();
  void updateDeviceNote();
  void addDeviceChoices(QLineEdit* edit, QFormLayout* form);
  void showMatchingPreset();
  void updateMemoryMap();

  app::Settings& settings_;
  app::EngineBridge* bridge_ = nullptr;
  QTabWidget* pages_ = nullptr;
  QLabel* errors_ = nullptr;
  QComboBox* presets_ = nullptr;
  QPushButton* apply_preset_ = nullptr;
  QLabel* preset_label_ = nullptr;
  QLabel* device_note_ = nullptr;
  QGroupBox* map_box_ = nullptr;
  MemoryMapView* memory_map_ = nullptr;
  QString started_device_;  // the device the engine runs on until Kiln starts again
  bool filling_ = false;    // editors being set by the program
  QMap<QString, QWidget*> editors_;
  QMap<QString, QLabel*> labels_;
};

}  // namespace kiln::ui
