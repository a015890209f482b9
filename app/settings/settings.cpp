#include "settings.h"

#include <QCoreApplication>
#include <QDir>
#include <QStandardPaths>

#include "kiln/error.h"
#include "kiln/units.h"

#include <QRegularExpression>

namespace kiln::app {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("kiln::app::Settings", text);
}

SettingSpec spec(QString key, SettingType type, QVariant def, QString description, qint64 min = 0,
                 qint64 max = 0, QStringList choices = {}) {
  return {std::move(key),        type, std::move(def), min, max, std::move(choices),
          std::move(description)};
}

const QStringList kOffloadModes{"none", "model", "group-block", "group-leaf", "balanced"};

// QSettings' INI format keeps the section [General] for keys outside any group: a group
// named "general" is written as [%General] and read back as "General", so general/ keys
// came back empty at the next start. They are stored under "main/" instead; files
// written before are read once and moved there.
const QLatin1String kGeneralGroup("general/"), kStoredGeneralGroup("main/");

QString storageKey(const QString& key) {
  return key.startsWith(kGeneralGroup) ? kStoredGeneralGroup + key.mid(kGeneralGroup.size()) : key;
}

void moveLegacyGeneralKeys(QSettings& store) {
  bool moved = false;
  for (const QString& key : store.allKeys()) {
    if (key.section('/', 0, 0).compare(QLatin1String("general"), Qt::CaseInsensitive) != 0)
      continue;
    const QString target = kStoredGeneralGroup + key.section('/', 1);
    if (!store.contains(target)) store.setValue(target, store.value(key));
    store.remove(key);
    moved = true;
  }
  if (moved) store.sync();
}

QString defaultOutputFolder() {
  const QString pictures = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
  return pictures.isEmpty() ? QDir::homePath() + "/Pictures" : pictures;
}

}  // namespace

// The descriptions are kept in English and translated where shown, so a language chosen
// later still applies.
const QList<SettingSpec>& settingSpecs() {
  static const QList<SettingSpec> specs{
      spec("general/model_folders", SettingType::StringList, QStringList{},
           QT_TRANSLATE_NOOP("kiln::app::Settings",
                             "Folders searched for checkpoints, LoRAs and VAEs, including ComfyUI "
                             "and A1111 model trees")),
      spec("general/output_folder", SettingType::String, defaultOutputFolder(),
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Where results are saved")),
      spec(
          "general/file_name_template", SettingType::String, QString("kiln-{date}-{time}"),
          QT_TRANSLATE_NOOP("kiln::app::Settings",
                            "Names of saved files: {date}, {time}, {seed}, {model} are filled in")),
      spec("general/first_start", SettingType::Bool, true,
           QT_TRANSLATE_NOOP(
               "kiln::app::Settings",
               "Show the first-start assistant (model folders, memory preset) when Kiln starts")),
      spec("memory/device", SettingType::Device, QString("cpu"),
           QT_TRANSLATE_NOOP("kiln::app::Settings",
                             "Where to compute: cpu, cuda:N (takes effect when Kiln starts)")),
      spec("memory/offload", SettingType::Enum, QString("none"),
           QT_TRANSLATE_NOOP("kiln::app::Settings",
                             "How weights move between host and device memory"),
           0, 0, kOffloadModes),
      spec("memory/offload_text_encoder", SettingType::Enum, QString("none"),
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Offload mode of the text encoders"), 0, 0,
           kOffloadModes),
      spec("memory/offload_unet", SettingType::Enum, QString("none"),
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Offload mode of the UNet"), 0, 0,
           kOffloadModes),
      spec("memory/offload_vae", SettingType::Enum, QString("none"),
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Offload mode of the VAE"), 0, 0,
           kOffloadModes),
      spec("memory/blocks_per_group", SettingType::Int, 1,
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Blocks moved together in group-block mode"), 1,
           64),
      spec("memory/streams", SettingType::Bool, false,
           QT_TRANSLATE_NOOP("kiln::app::Settings",
                             "Prefetch the next group while the current one runs")),
      spec("memory/record_stream", SettingType::Bool, false,
           QT_TRANSLATE_NOOP("kiln::app::Settings",
                             "Record tensors on the side stream (needs streams)")),
      spec("memory/pin", SettingType::Enum, QString("on"),
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Offloaded weights in pinned host memory"), 0,
           0, {"on", "off", "per-group"}),
      spec("memory/pin_reserve", SettingType::Bytes, qint64{2} << 30,
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Host memory pinning leaves free"), 0,
           qint64{1} << 40),
      spec("memory/never", SettingType::StringList, QStringList{},
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Components never offloaded")),
      spec("memory/always", SettingType::StringList, QStringList{},
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Components always offloaded")),
      spec("memory/vae_tiling", SettingType::Enum, QString("auto"),
           QT_TRANSLATE_NOOP("kiln::app::Settings", "VAE decode and encode in tiles"), 0, 0,
           {"auto", "always", "never"}),
      spec("memory/tile_size", SettingType::Int, 0,
           QT_TRANSLATE_NOOP("kiln::app::Settings",
                             "VAE tile size in pixels (0: the largest that fits)"),
           0, 4096),
      spec("memory/tile_overlap", SettingType::Int, 64,
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Overlap of VAE tiles in pixels"), 0, 2048),
      spec("memory/working_reserve", SettingType::Bytes, qint64{512} << 20,
           QT_TRANSLATE_NOOP("kiln::app::Settings",
                             "Device memory kept free for work beside the weights"),
           0, qint64{1} << 40),
      spec("lora/mode", SettingType::Enum, QString("auto"),
           QT_TRANSLATE_NOOP("kiln::app::Settings", "How LoRAs reach the weights"), 0, 0,
           {"auto", "merge", "hook"}),
      spec("appearance/language", SettingType::Enum, QString("system"),
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Language of the interface"), 0, 0,
           {"system", "en", "de", "ja"}),
      spec("appearance/theme", SettingType::Enum, QString("system"),
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Colour theme"), 0, 0,
           {"system", "light", "dark"}),
      spec("appearance/smooth_scaling", SettingType::Bool, false,
           QT_TRANSLATE_NOOP(
               "kiln::app::Settings",
               "Interpolate enlarged pictures instead of showing their pixels as blocks")),
      // Not shown in Preferences: the generate panel as it was when Kiln last closed.
      spec("session/workflow", SettingType::String, QString(),
           QT_TRANSLATE_NOOP("kiln::app::Settings",
                             "The generate panel's workflow and values when Kiln last closed")),
      spec("session/workflow_source", SettingType::String, QString(),
           QT_TRANSLATE_NOOP("kiln::app::Settings", "Where that workflow came from")),
      spec("session/random_seed", SettingType::Bool, true,
           QT_TRANSLATE_NOOP("kiln::app::Settings",
                             "Whether the generate panel draws a new seed for every Generate")),
  };
  return specs;
}

QString settingTitle(const QString& key) {
  static const QList<QPair<QString, const char*>> titles{
      {"general/model_folders", QT_TRANSLATE_NOOP("kiln::app::Settings", "Model folders")},
      {"general/output_folder", QT_TRANSLATE_NOOP("kiln::app::Settings", "Output folder")},
      {"general/file_name_template", QT_TRANSLATE_NOOP("kiln::app::Settings", "File names")},
      {"general/first_start", QT_TRANSLATE_NOOP("kiln::app::Settings", "First-start assistant")},
      {"memory/device", QT_TRANSLATE_NOOP("kiln::app::Settings", "Device")},
      {"memory/offload", QT_TRANSLATE_NOOP("kiln::app::Settings", "Offload")},
      {"memory/offload_text_encoder", QT_TRANSLATE_NOOP("kiln::app::Settings", "Text encoders")},
      {"memory/offload_unet", QT_TRANSLATE_NOOP("kiln::app::Settings", "UNet")},
      {"memory/offload_vae", QT_TRANSLATE_NOOP("kiln::app::Settings", "VAE")},
      {"memory/blocks_per_group", QT_TRANSLATE_NOOP("kiln::app::Settings", "Blocks per group")},
      {"memory/streams", QT_TRANSLATE_NOOP("kiln::app::Settings", "Streams")},
      {"memory/record_stream", QT_TRANSLATE_NOOP("kiln::app::Settings", "Record stream")},
      {"memory/pin", QT_TRANSLATE_NOOP("kiln::app::Settings", "Pinned memory")},
      {"memory/pin_reserve", QT_TRANSLATE_NOOP("kiln::app::Settings", "Pinned memory reserve")},
      {"memory/never", QT_TRANSLATE_NOOP("kiln::app::Settings", "Never offload")},
      {"memory/always", QT_TRANSLATE_NOOP("kiln::app::Settings", "Always offload")},
      {"memory/vae_tiling", QT_TRANSLATE_NOOP("kiln::app::Settings", "VAE tiling")},
      {"memory/tile_size", QT_TRANSLATE_NOOP("kiln::app::Settings", "Tile size")},
      {"memory/tile_overlap", QT_TRANSLATE_NOOP("kiln::app::Settings", "Tile overlap")},
      {"memory/working_reserve",
       QT_TRANSLATE_NOOP("kiln::app::Settings", "Working memory reserve")},
      {"lora/mode", QT_TRANSLATE_NOOP("kiln::app::Settings", "Apply mode")},
      {"appearance/language", QT_TRANSLATE_NOOP("kiln::app::Settings", "Language")},
      {"appearance/theme", QT_TRANSLATE_NOOP("kiln::app::Settings", "Theme")},
      {"appearance/smooth_scaling", QT_TRANSLATE_NOOP("kiln::app::Settings", "Smooth scaling")},
  };
  for (const auto& [k, title] : titles)
    if (k == key) return QCoreApplication::translate("kiln::app::Settings", title);
  QString name = key.section('/', 1).replace('_', ' ');
  if (!name.isEmpty()) name[0] = name[0].toUpper();
  return name;
}

QString settingChoiceTitle(const QString& key, const QString& choice) {
  if (key == QLatin1String("appearance/language")) {
    // Each language by its own name, so it can be found whatever language is shown now.
    if (choice == QLatin1String("system"))
      return QCoreApplication::translate("kiln::app::Settings", "System language");
    if (choice == QLatin1String("en")) return QStringLiteral("English");
    if (choice == QLatin1String("de")) return QStringLiteral("Deutsch");
    if (choice == QLatin1String("ja")) return QStringLiteral("日本語");
  }
  if (key == QLatin1String("appearance/theme")) {
    if (choice == QLatin1String("system"))
      return QCoreApplication::translate("kiln::app::Settings", "As the system");
    if (choice == QLatin1String("light"))
      return QCoreApplication::translate("kiln::app::Settings", "Light");
    if (choice == QLatin1String("dark"))
      return QCoreApplication::translate("kiln::app::Settings", "Dark");
  }
  return choice;
}

QString settingDescription(const SettingSpec& spec) {
  return QCoreApplication::translate("kiln::app::Settings", spec.description.toUtf8().constData());
}

const SettingSpec* findSetting(const QString& key) {
  for (const SettingSpec& s : settingSpecs())
    if (s.key == key) return &s;
  return nullptr;
}

Settings::Settings() : Settings(std::make_unique<QSettings>()) {}
Settings::Settings(std::unique_ptr<QSettings> store) : store_(std::move(store)) {
  moveLegacyGeneralKeys(*store_);
}

// Messages name the setting as Preferences labels it, not by its key.
QString Settings::check(const SettingSpec& spec, const QVariant& value) {
  switch (spec.type) {
    case SettingType::Bool:
      if (value.typeId() == QMetaType::Bool) return {};
      if (const QString s = value.toString(); s == "true" || s == "false") return {};
      return tr("%1 must be true or false").arg(settingTitle(spec.key));
    case SettingType::Int: {
      bool ok = false;
      const qint64 v = value.toLongLong(&ok);
      if (!ok)
        return tr("%1 must be a whole number, not '%2'")
            .arg(settingTitle(spec.key), value.toString());
      if (spec.min < spec.max && (v < spec.min || v > spec.max))
        return tr("%1 must be between %2 and %3, not %4")
            .arg(settingTitle(spec.key))
            .arg(spec.min)
            .arg(spec.max)
            .arg(v);
      return {};
    }
    case SettingType::Bytes: {
      bool ok = false;
      qint64 v = value.toLongLong(&ok);
      if (!ok) {
        const auto parsed = parseBytes(value.toString().toStdString());
        if (!parsed)
          return tr("%1 must be a size like 2G or 512MiB, not '%2'")
              .arg(settingTitle(spec.key), value.toString());
        v = *parsed;
      }
      if (spec.min < spec.max && (v < spec.min || v > spec.max))
        return tr("%1 must be between %2 and %3")
            .arg(settingTitle(spec.key), QString::fromStdString(formatBytes(spec.min)),
                 QString::fromStdString(formatBytes(spec.max)));
      return {};
    }
    case SettingType::Enum:
      if (spec.choices.contains(value.toString())) return {};
      return tr("%1 must be one of %2, not '%3'")
          .arg(settingTitle(spec.key), spec.choices.join(", "), value.toString());
    case SettingType::Device: {
      const QString s = value.toString();
      static const QRegularExpression device(
          "^(cpu|cuda:[0-9]+|sim:[0-9]+(\\.[0-9]+)?[KMGT]?(i?B)?)$");
      if (device.match(s).hasMatch()) return {};
      return tr("%1 must be cpu, cuda:N or sim:SIZE, not '%2'").arg(settingTitle(spec.key), s);
    }
    case SettingType::StringList:
      if (value.canConvert<QStringList>()) return {};
      return tr("%1 must be a list of names").arg(settingTitle(spec.key));
    case SettingType::String:
      if (spec.key == QLatin1String("general/file_name_template")) {
        const QString t = value.toString().trimmed();
        if (t.isEmpty()) return tr("%1 must not be empty").arg(settingTitle(spec.key));
        if (t.contains('/') || t.contains('\\'))
          return tr("%1 is a file name, not a path: '%2' has a folder separator")
              .arg(settingTitle(spec.key), t);
      }
      return {};
  }
  return tr("%1 has an unknown type").arg(settingTitle(spec.key));
}

QVariant Settings::value(const QString& key) const {
  const SettingSpec* s = findSetting(key);
  if (!s) return {};
  if (!store_->contains(storageKey(key))) return s->default_value;
  const QVariant v = store_->value(storageKey(key));
  if (!check(*s, v).isEmpty()) return s->default_value;  // edited by hand into something invalid
  switch (s->type) {
    case SettingType::Bool:
      return v.typeId() == QMetaType::Bool ? v.toBool() : v.toString() == "true";
    case SettingType::Int:
      return v.toLongLong();
    case SettingType::Bytes: {
      bool ok = false;
      const qint64 n = v.toLongLong(&ok);
      return ok ? n : static_cast<qint64>(*parseBytes(v.toString().toStdString()));
    }
    case SettingType::StringList:
      return v.toStringList();
    default:
      return v.toString();
  }
}

QString Settings::set(const QString& key, const QVariant& v) {
  const SettingSpec* s = findSetting(key);
  if (!s) return tr("Kiln has no setting %1").arg(key);
  const QString problem = check(*s, v);
  if (!problem.isEmpty()) return problem;
  store_->setValue(storageKey(key), v);
  store_->sync();
  return {};
}

void Settings::reset(const QString& key) {
  store_->remove(storageKey(key));
}

QStringList Settings::modelFolders() const {
  return value("general/model_folders").toStringList();
}
QString Settings::outputFolder() const {
  return value("general/output_folder").toString();
}
QString Settings::device() const {
  return value("memory/device").toString();
}

OffloadSettings Settings::offload() const {
  return offloadFrom([this](const QString& key) { return value(key); });
}

OffloadSettings Settings::offloadFrom(const std::function<QVariant(const QString&)>& value) {
  OffloadSettings o;
  o.mode = parseOffloadMode(value("memory/offload").toString().toStdString());
  for (const char* component : {"text_encoder", "unet", "vae"}) {
    const QString mode = value(QString("memory/offload_") + component).toString();
    if (mode != value("memory/offload").toString())
      o.per_component[component] = parseOffloadMode(mode.toStdString());
  }
  o.blocks_per_group = value("memory/blocks_per_group").toInt();
  o.streams = value("memory/streams").toBool();
  o.record_stream = value("memory/record_stream").toBool();
  o.pin = parsePinMode(value("memory/pin").toString().toStdString());
  o.pin_reserve_bytes = value("memory/pin_reserve").toLongLong();
  o.working_reserve_bytes = value("memory/working_reserve").toLongLong();
  for (const QString& n : value("memory/never").toStringList()) o.never.push_back(n.toStdString());
  for (const QString& n : value("memory/always").toStringList())
    o.always.push_back(n.toStdString());
  o.validate();
  return o;
}

VaeTiling Settings::vaeTiling() const {
  return parseVaeTiling(value("memory/vae_tiling").toString().toStdString());
}
int Settings::tileSize() const {
  return value("memory/tile_size").toInt();
}
int Settings::tileOverlap() const {
  return value("memory/tile_overlap").toInt();
}
bool Settings::firstStartDue() const {
  if (!store_->allKeys().isEmpty() && !store_->contains(storageKey("general/first_start")))
    return false;
  return value("general/first_start").toBool();
}

LoraMode Settings::loraMode() const {
  return parseLoraMode(value("lora/mode").toString().toStdString());
}

}  // namespace kiln::app
