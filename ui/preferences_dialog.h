// The preferences dialog: one page per group of settings (General, Memory, LoRA,
// Appearance), an editor per setting made from its description, Apply that refuses
// invalid values with their messages, and memory settings applied to the running engine
// at once (loaded models are placed again before the next job, without reloading).
#pragma once

#include <QDialog>
#include <QMap>

class QLabel;
class QTabWidget;

namespace kiln::app {
class EngineBridge;
class Settings;
}  // namespace kiln::app

namespace kiln::ui {

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

 protected:
  void changeEvent(QEvent* event) override;

 Q_SIGNALS:
  // The settings were stored (Apply or OK with valid values).
  void applied();

 private:
  void load();
  void retranslate();

  app::Settings& settings_;
  app::EngineBridge* bridge_ = nullptr;
  QTabWidget* pages_ = nullptr;
  QLabel* errors_ = nullptr;
  QMap<QString, QWidget*> editors_;
  QMap<QString, QLabel*> labels_;
};

}  // namespace kiln::ui
