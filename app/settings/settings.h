// Kiln's settings, each described once (key, type, default, range or choices), stored in
// QSettings through a typed facade that refuses invalid values with a message a person
// can act on. The preferences dialog, the CLI and the bridge read them from here.
#pragma once

#include <QList>
#include <QSettings>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <functional>
#include <memory>

#include "kiln/offload.h"
#include "kiln/render.h"

namespace kiln::app {

enum class SettingType { Bool, Int, String, StringList, Enum, Bytes, Device };

struct SettingSpec {
  QString key;  // "memory/offload_unet"
  SettingType type = SettingType::String;
  QVariant default_value;
  qint64 min = 0, max = 0;  // Int and Bytes (min == max: unbounded)
  QStringList choices;      // Enum
  QString description;      // for people, in English: settingDescription() translates it
};

// Every setting Kiln has, grouped by the page that shows it (general/, memory/, lora/,
// appearance/).
const QList<SettingSpec>& settingSpecs();
const SettingSpec* findSetting(const QString& key);
// What the preferences dialog calls a setting, and its description, in the interface's
// language of the moment.
QString settingTitle(const QString& key);
QString settingDescription(const SettingSpec& spec);
// What a choice of an Enum setting is called where it is shown ("Deutsch" for "de");
// the value itself for choices without a name of their own (offload modes).
QString settingChoiceTitle(const QString& key, const QString& choice);

class Settings {
 public:
  // Over the application's QSettings, or over `store` (tests, portable installs).
  Settings();
  explicit Settings(std::unique_ptr<QSettings> store);

  // The stored value, or the default when it is unset or no longer valid.
  QVariant value(const QString& key) const;
  // Stores `value` converted to the setting's type; returns "" on success, otherwise why
  // it was refused (and nothing changes). Unknown keys are refused too.
  QString set(const QString& key, const QVariant& value);
  void reset(const QString& key);

  // Why `value` cannot be the setting's ("" when it can).
  static QString check(const SettingSpec& spec, const QVariant& value);

  // Typed views of groups of settings.
  QStringList modelFolders() const;
  QString outputFolder() const;
  QString device() const;
  // The offload settings; throws kiln::Error(InvalidArgument) for a combination that
  // cannot work (record stream without streams).
  OffloadSettings offload() const;
  // The same from other values (the Preferences editors before Apply): `value` gives
  // each memory/ key's value as value() would (byte sizes as numbers).
  static OffloadSettings offloadFrom(const std::function<QVariant(const QString&)>& value);
  VaeTiling vaeTiling() const;
  int tileSize() const;
  int tileOverlap() const;
  LoraMode loraMode() const;
  // Whether the first-start assistant shows at this start: on a store with no settings
  // yet, or when general/first_start was turned on again. Settings from before the
  // assistant existed mean Kiln has run here already.
  bool firstStartDue() const;

 private:
  std::unique_ptr<QSettings> store_;
};

}  // namespace kiln::app
