#include "preferences_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QDialogButtonBox>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "engine_bridge.h"
#include "kiln/build_info.h"
#include "kiln/error.h"
#include "kiln/units.h"
#include "memory_map.h"
#include "memory_presets.h"
#include "settings.h"

namespace kiln::ui {
namespace {

QWidget* makeEditor(const app::SettingSpec& spec) {
  switch (spec.type) {
    case app::SettingType::Bool:
      return new QCheckBox;
    case app::SettingType::Int: {
      auto* spin = new QSpinBox;
      spin->setRange(static_cast<int>(spec.min), static_cast<int>(spec.max));
      return spin;
    }
    case app::SettingType::Enum: {
      auto* combo = new QComboBox;
      for (const QString& choice : spec.choices)
        combo->addItem(app::settingChoiceTitle(spec.key, choice), choice);
      return combo;
    }
    case app::SettingType::StringList: {
      auto* edit = new QPlainTextEdit;
      edit->setPlaceholderText(QObject::tr("One per line"));
      edit->setMaximumHeight(80);
      return edit;
    }
    default:
      return new QLineEdit;
  }
}

}  // namespace

PreferencesDialog::PreferencesDialog(app::Settings& settings, app::EngineBridge* bridge,
                                     QWidget* parent)
    : QDialog(parent), settings_(settings), bridge_(bridge) {
  pages_ = new QTabWidget;
  for (const char* group : {"general", "memory", "lora", "appearance"}) {
    auto* page = new QWidget;
    auto* form = new QFormLayout(page);
    if (QLatin1String(group) == QLatin1String("memory")) {
      // A preset fills in the memory editors below; Apply or OK stores them.
      presets_ = new QComboBox;
      presets_->setObjectName("memoryPreset");
      for (app::MemoryPreset p : app::memoryPresets())
        presets_->addItem(QString(), app::memoryPresetKey(p));
      apply_preset_ = new QPushButton;
      apply_preset_->setObjectName("applyMemoryPreset");
      connect(apply_preset_, &QPushButton::clicked, this, [this] {
        app::MemoryPreset preset;
        if (app::parseMemoryPreset(presets_->currentData().toString(), &preset)) fillPreset(preset);
      });
      auto* row = new QHBoxLayout;
      row->addWidget(presets_, 1);
      row->addWidget(apply_preset_);
      preset_label_ = new QLabel;
      form->addRow(preset_label_, row);
    }
    for (const app::SettingSpec& spec : app::settingSpecs()) {
      if (spec.key.section('/', 0, 0) != QLatin1String(group)) continue;
      QWidget* editor = makeEditor(spec);
      editor->setObjectName(spec.key);
      auto* label = new QLabel;
      label->setBuddy(editor);
      label->setWordWrap(true);
      form->addRow(label, editor);
      if (spec.key == QLatin1String("memory/device")) {
        // Said at once: the engine opens its device only when Kiln starts.
        device_note_ = new QLabel;
        device_note_->setObjectName("deviceNote");
        device_note_->setWordWrap(true);
        device_note_->hide();
        form->addRow(QString(), device_note_);
        connect(static_cast<QLineEdit*>(editor), &QLineEdit::textChanged, this,
                &PreferencesDialog::updateDeviceNote);
        addDeviceChoices(static_cast<QLineEdit*>(editor), form);
      }
      editors_.insert(spec.key, editor);
      labels_.insert(spec.key, label);
    }
    if (QLatin1String(group) != QLatin1String("memory")) {
      pages_->addTab(page, QString());
      continue;
    }
    // The settings above, the map of what they do below, each scrolling on its own, so
    // the map answers an edit while the edited field stays in view.
    map_box_ = new QGroupBox;
    map_box_->setVisible(bridge_ != nullptr);  // no engine to ask: no map
    memory_map_ = new MemoryMapView;
    memory_map_->setObjectName("memoryMap");
    (new QVBoxLayout(map_box_))->addWidget(memory_map_);
    connect(memory_map_, &MemoryMapView::sizeChanged, this, &PreferencesDialog::updateMemoryMap);
    const auto scrolling = [](QWidget* w) {
      auto* scroll = new QScrollArea;
      scroll->setWidget(w);
      scroll->setWidgetResizable(true);
      scroll->setFrameShape(QFrame::NoFrame);
      return scroll;
    };
    auto* split = new QSplitter(Qt::Vertical);
    split->setChildrenCollapsible(false);
    split->addWidget(scrolling(page));
    QScrollArea* map_scroll = scrolling(map_box_);
    map_scroll->setVisible(bridge_ != nullptr);
    split->addWidget(map_scroll);
    map_scroll->setMinimumHeight(160);
    split->setSizes({560, 440});  // in proportion: the map gets most of a bar and its texts
    pages_->addTab(split, QString());
  }
  // The Memory page's preset box says which preset the values are, or that they are
  // the user's own.
  presets_->addItem(QString(), QStringLiteral("custom"));
  for (const app::SettingSpec& spec : app::settingSpecs())
    if (spec.key.startsWith(QLatin1String("memory/"))) {
      QWidget* w = editors_.value(spec.key);
      const auto changed = [this] {
        showMatchingPreset();
        updateMemoryMap();
      };
      if (auto* c = qobject_cast<QCheckBox*>(w))
        connect(c, &QCheckBox::toggled, this, changed);
      else if (auto* n = qobject_cast<QSpinBox*>(w))
        connect(n, &QSpinBox::valueChanged, this, changed);
      else if (auto* b = qobject_cast<QComboBox*>(w))
        connect(b, &QComboBox::currentIndexChanged, this, changed);
      else if (auto* p = qobject_cast<QPlainTextEdit*>(w))
        connect(p, &QPlainTextEdit::textChanged, this, changed);
      else if (auto* l = qobject_cast<QLineEdit*>(w))
        connect(l, &QLineEdit::textChanged, this, changed);
    }
  errors_ = new QLabel;
  errors_->setWordWrap(true);
  errors_->setStyleSheet("color: #b00020");
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Apply |
                                       QDialogButtonBox::Cancel);
  connect(buttons->button(QDialogButtonBox::Apply), &QPushButton::clicked, this,
          [this] { apply(); });
  connect(buttons, &QDialogButtonBox::accepted, this, [this] {
    if (apply()) accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(pages_);
  layout->addWidget(errors_);
  layout->addWidget(buttons);
  retranslate();
  load();
}

void PreferencesDialog::retranslate() {
  setWindowTitle(tr("Preferences"));
  const QStringList titles{tr("General"), tr("Memory"), tr("LoRA"), tr("Appearance")};
  for (int i = 0; i < pages_->count() && i < titles.size(); ++i) pages_->setTabText(i, titles[i]);
  preset_label_->setText(tr("Preset"));
  map_box_->setTitle(tr("Memory map: what these settings put where, before Apply"));
  apply_preset_->setText(tr("Fill in"));
  apply_preset_->setToolTip(
      tr("Sets the memory settings below to the preset's; Apply or OK stores them"));
  for (int i = 0; i < presets_->count(); ++i) {
    app::MemoryPreset preset;
    if (presets_->itemData(i).toString() == QLatin1String("custom")) {
      presets_->setItemText(i, tr("Custom (your own values)"));
      presets_->setItemData(i, tr("The values below match no preset"), Qt::ToolTipRole);
    }
    if (!app::parseMemoryPreset(presets_->itemData(i).toString(), &preset)) continue;
    presets_->setItemText(i, app::memoryPresetTitle(preset));
    presets_->setItemData(i, app::memoryPresetDescription(preset), Qt::ToolTipRole);
  }
  for (const app::SettingSpec& spec : app::settingSpecs()) {
    if (QLabel* label = labels_.value(spec.key)) label->setText(app::settingTitle(spec.key));
    if (QWidget* editor = editors_.value(spec.key))
      editor->setToolTip(app::settingDescription(spec));
    if (auto* combo = qobject_cast<QComboBox*>(editors_.value(spec.key)))
      for (int i = 0; i < combo->count(); ++i)
        combo->setItemText(i, app::settingChoiceTitle(spec.key, combo->itemData(i).toString()));
  }
  updateDeviceNote();
}

// The devices this build can use, offered as the field's completions and listed under it:
// the CPU and each GPU the GPU libtorch sees ("cuda:0  NVIDIA ... (24.0 GiB, sm_89, bf16)").
void PreferencesDialog::addDeviceChoices(QLineEdit* edit, QFormLayout* form) {
  QStringList names{QStringLiteral("cpu")}, gpus;
  for (const std::string& d : buildInfo().devices) {
    const QString device = QString::fromStdString(d);
    if (!device.startsWith(QLatin1String("cuda:"))) continue;
    names << device.section(' ', 0, 0);
    gpus << device.simplified();
  }
  auto* completer = new QCompleter(names, edit);
  completer->setCompletionMode(QCompleter::UnfilteredPopupCompletion);
  edit->setCompleter(completer);
  auto* list = new QLabel(
      gpus.isEmpty() ? tr("This build of Kiln has no GPU support (its libtorch is "
                          "CPU-only): cpu, or sim:SIZE to simulate a device")
                     : tr("GPUs this build can use: %1").arg(gpus.join(QStringLiteral("; "))));
  list->setObjectName("deviceChoices");
  list->setWordWrap(true);
  form->addRow(QString(), list);
}

void PreferencesDialog::updateDeviceNote() {
  const auto* edit = qobject_cast<QLineEdit*>(editors_.value("memory/device"));
  if (!device_note_ || !edit) return;
  device_note_->setText(tr("Takes effect when Kiln starts again (now: %1)").arg(started_device_));
  device_note_->setVisible(edit->text().trimmed() != started_device_);
}

QVariant PreferencesDialog::editorValue(const QString& key) const {
  QWidget* w = editors_.value(key);
  if (auto* c = qobject_cast<QCheckBox*>(w)) return c->isChecked();
  if (auto* s = qobject_cast<QSpinBox*>(w)) return s->value();
  if (auto* b = qobject_cast<QComboBox*>(w))
    return b->currentData().isValid() ? b->currentData().toString() : b->currentText();
  if (auto* p = qobject_cast<QPlainTextEdit*>(w))
    return p->toPlainText().split('\n', Qt::SkipEmptyParts);
  if (auto* l = qobject_cast<QLineEdit*>(w)) return l->text().trimmed();
  return {};
}

// The preset whose values the Memory page holds, else Custom.
void PreferencesDialog::showMatchingPreset() {
  if (filling_) return;
  const QString device = editorValue("memory/device").toString();
  QString match = QStringLiteral("custom");
  for (app::MemoryPreset preset : app::memoryPresets()) {
    const QMap<QString, QVariant> values =
        app::memoryPresetValues(preset, app::presetDevice(app::buildHasGpu(), device));
    bool same = true;
    for (auto it = values.begin(); it != values.end() && same; ++it) {
      const app::SettingSpec* spec = app::findSetting(it.key());
      QVariant mine = editorValue(it.key());
      if (spec && spec->type == app::SettingType::Bytes) {
        const auto parsed = parseBytes(mine.toString().toStdString());
        mine = parsed ? QVariant(static_cast<qint64>(*parsed)) : mine;
      }
      same = spec && (mine.toString() == it.value().toString() ||
                      (spec->type == app::SettingType::StringList &&
                       mine.toStringList() == it.value().toStringList()));
    }
    if (same) {
      match = app::memoryPresetKey(preset);
      break;
    }
  }
  presets_->setCurrentIndex(presets_->findData(match));
}

void PreferencesDialog::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QDialog::changeEvent(event);
}

void PreferencesDialog::load() {
  started_device_ = settings_.device();
  filling_ = true;
  for (const app::SettingSpec& spec : app::settingSpecs())
    showValue(spec, settings_.value(spec.key));
  filling_ = false;
  showMatchingPreset();
  updateDeviceNote();
  updateMemoryMap();
}

void PreferencesDialog::fillPreset(app::MemoryPreset preset) {
  QString device = settings_.device();
  if (auto* edit = qobject_cast<QLineEdit*>(editors_.value("memory/device")))
    device = edit->text().trimmed();
  const QMap<QString, QVariant> values =
      app::memoryPresetValues(preset, app::presetDevice(app::buildHasGpu(), device));
  filling_ = true;
  for (auto it = values.begin(); it != values.end(); ++it)
    if (const app::SettingSpec* spec = app::findSetting(it.key())) showValue(*spec, it.value());
  filling_ = false;
  presets_->setCurrentIndex(presets_->findData(app::memoryPresetKey(preset)));
  updateMemoryMap();
}

void PreferencesDialog::setPlanSize(int width, int height, int frames) {
  memory_map_->setSize(width, height, frames);
  updateMemoryMap();
}

// The map of the memory page's values as they stand (not yet applied), from the engine's
// own estimates; settings that cannot work say why instead.
void PreferencesDialog::updateMemoryMap() {
  if (filling_ || !memory_map_ || !bridge_) return;
  kiln::MemoryPlanRequest request;
  request.width = memory_map_->planWidth();
  request.height = memory_map_->planHeight();
  request.frames = memory_map_->planFrames();
  try {
    request.offload = app::Settings::offloadFrom([this](const QString& key) -> QVariant {
      const QVariant v = editorValue(key);
      const app::SettingSpec* spec = app::findSetting(key);
      if (!spec || spec->type != app::SettingType::Bytes) return v;
      const auto parsed = parseBytes(v.toString().toStdString());
      if (!parsed)
        throw kiln::Error(ErrorKind::InvalidArgument,
                          app::settingTitle(key).toStdString() + ": not a size");
      return QVariant(static_cast<qint64>(*parsed));
    });
    const kiln::MemoryPlan plan = bridge_->planMemory(request);
    memory_map_->setPlan(plan);
    if (plan.busy) QTimer::singleShot(250, this, &PreferencesDialog::updateMemoryMap);
  } catch (const std::exception& e) {  // kiln::Error for settings; anything from the device
    memory_map_->showError(QString::fromUtf8(e.what()));
  }
}

void PreferencesDialog::showValue(const app::SettingSpec& spec, const QVariant& v) {
  QWidget* w = editors_.value(spec.key);
  if (auto* c = qobject_cast<QCheckBox*>(w))
    c->setChecked(v.toBool());
  else if (auto* s = qobject_cast<QSpinBox*>(w))
    s->setValue(v.toInt());
  else if (auto* b = qobject_cast<QComboBox*>(w))
    b->setCurrentIndex(std::max(0, b->findData(v.toString())));
  else if (auto* p = qobject_cast<QPlainTextEdit*>(w))
    p->setPlainText(v.toStringList().join('\n'));
  else if (auto* l = qobject_cast<QLineEdit*>(w))
    l->setText(spec.type == app::SettingType::Bytes
                   ? QString::fromStdString(formatBytes(v.toLongLong())).remove(' ')
                   : v.toString());
}

QString PreferencesDialog::errorText() const {
  return errors_->text();
}

bool PreferencesDialog::apply() {
  // Every value checked first: nothing is stored unless all are valid.
  QMap<QString, QVariant> values;
  QStringList problems;
  for (const app::SettingSpec& spec : app::settingSpecs()) {
    if (!editors_.contains(spec.key)) continue;  // not shown here (the session's own)
    const QVariant v = editorValue(spec.key);
    const QString problem = app::Settings::check(spec, v);
    if (!problem.isEmpty()) problems << problem;
    values.insert(spec.key, v);
  }
  if (problems.isEmpty() && values.value("memory/record_stream").toBool() &&
      !values.value("memory/streams").toBool())
    problems << tr("Record stream needs streams: turn on streams or turn off record stream");
  if (!problems.isEmpty()) {
    errors_->setText(problems.join('\n'));
    return false;
  }
  for (auto it = values.begin(); it != values.end(); ++it) settings_.set(it.key(), it.value());
  try {
    const OffloadSettings offload = settings_.offload();
    if (bridge_) bridge_->setOffloadSettings(offload);
  } catch (const kiln::Error& e) {
    errors_->setText(QString::fromUtf8(e.what()));
    return false;
  }
  errors_->clear();
  Q_EMIT applied();
  return true;
}

}  // namespace kiln::ui
