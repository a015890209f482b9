#include "parameter_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <climits>
#include <cmath>

#include "kiln/error.h"
#include "kiln/render.h"
#include "number_fields.h"

namespace kiln::ui {

namespace {

int toInt(double v) {
  return static_cast<int>(std::clamp(v, double{INT_MIN}, double{INT_MAX}));
}

int64_t asInt(const kiln::ParamValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return static_cast<int64_t>(*d);
  return 0;
}

double asDouble(const kiln::ParamValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return 0;
}

QString asString(const kiln::ParamValue& v) {
  const auto* s = std::get_if<std::string>(&v);
  return s ? QString::fromStdString(*s) : QString();
}

// One row: `main` stretched, `side` (Browse, Random) at its right.
QWidget* besides(QWidget* main, QWidget* side) {
  auto* box = new QWidget;
  auto* layout = new QHBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(main, 1);
  layout->addWidget(side);
  return box;
}

}  // namespace

ParameterPanel::ParameterPanel(QWidget* parent)
    : QWidget(parent), schemas_(kiln::builtinNodeSchemas()) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  form_ = new QFormLayout;
  layout->addLayout(form_);
  notice_ = new QLabel;
  notice_->setObjectName("panelNotice");
  notice_->setWordWrap(true);
  notice_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  notice_->hide();
  layout->addWidget(notice_);
}

void ParameterPanel::showAdjustment(const QString& label, const QString& message) {
  notice_->setText(tr("%1: %2").arg(label, message));
  notice_->show();
}

void ParameterPanel::setWorkflow(const kiln::Workflow& workflow) {
  template_ = workflow;
  rebuild();
}

void ParameterPanel::setModels(const QList<app::ModelChoice>& models) {
  models_ = models;
  for (Entry& e : entries_)
    if (e.model_picker) {
      auto* combo = static_cast<QComboBox*>(e.editor);
      const kiln::ParamValue current = valueOf(e);
      const QSignalBlocker block(combo);
      fillModelPicker(combo);
      display(e, current);
    }
}

void ParameterPanel::fillModelPicker(QComboBox* combo) const {
  combo->clear();
  try {
    (void)kiln::starterModelPath();
    combo->addItem(tr("Kiln starter model"), QString());  // an empty name picks it
  } catch (const kiln::Error&) {
    // Not installed: only the model folders' checkpoints are offered.
  }
  for (const app::ModelChoice& m : models_) {
    if (m.problem.isEmpty()) {
      combo->addItem(m.name, m.path);
      combo->setItemData(combo->count() - 1, m.path, Qt::ToolTipRole);
      continue;
    }
    // Listed, so the file is not a mystery, but not offered: it would fail at Generate.
    combo->addItem(tr("%1 (not a checkpoint)").arg(m.name), m.path);
    combo->setItemData(combo->count() - 1, tr("%1: %2").arg(m.path, m.problem), Qt::ToolTipRole);
    if (auto* items = qobject_cast<QStandardItemModel*>(combo->model()))
      items->item(combo->count() - 1)->setEnabled(false);
  }
}

void ParameterPanel::rebuild() {
  while (form_->rowCount() > 0) form_->removeRow(0);  // deletes the rows' widgets
  entries_.clear();
  browse_buttons_.clear();
  empty_ = nullptr;
  notice_->hide();
  for (const kiln::ExposedParam& x : template_.exposed) {
    const kiln::WorkflowNode* node = template_.node(x.node);
    if (!node) continue;
    const kiln::ParamSpec* spec = nullptr;
    for (const auto& s : schemas_)
      if (s.type == node->type) spec = s.param(x.param);
    if (!spec) continue;
    Entry e;
    e.node = x.node;
    e.param = x.param;
    e.spec = *spec;
    e.model_picker = node->type == "LoadCheckpoint" && x.param == "ckpt_name";
    e.label = QString::fromStdString(x.label.empty() ? spec->display_name : x.label);
    QWidget* row = nullptr;
    e.editor = makeEditor(e, &row);
    const std::string node_id = x.node, param = x.param;
    const auto edited = [this, node_id, param] {
      if (!showing_) Q_EMIT valueEdited(node_id, param);
    };
    if (auto* w = qobject_cast<QSpinBox*>(e.editor))
      connect(w, &QSpinBox::valueChanged, this, edited);
    else if (auto* d = qobject_cast<QDoubleSpinBox*>(e.editor))
      connect(d, &QDoubleSpinBox::valueChanged, this, edited);
    else if (auto* seed = qobject_cast<SeedField*>(e.editor))
      connect(seed, &SeedField::valueChanged, this, edited);
    // A value changed from what was typed is said beneath the fields.
    const auto adjusted = [this, node_id, param](const QString& message) {
      if (const Entry* entry = find(node_id, param))
        showAdjustment(
            QCoreApplication::translate("kiln::app::Workflow", entry->label.toUtf8().constData()),
            message);
    };
    if (auto* i = qobject_cast<IntField*>(e.editor))
      connect(i, &IntField::adjusted, this, adjusted);
    else if (auto* d = qobject_cast<DoubleField*>(e.editor))
      connect(d, &DoubleField::adjusted, this, adjusted);
    else if (auto* seed = qobject_cast<SeedField*>(e.editor))
      connect(seed, &SeedField::adjusted, this, adjusted);
    else if (auto* c = qobject_cast<QComboBox*>(e.editor))
      connect(c, &QComboBox::currentTextChanged, this, edited);
    else if (auto* b = qobject_cast<QCheckBox*>(e.editor))
      connect(b, &QCheckBox::toggled, this, edited);
    else if (auto* t = qobject_cast<QPlainTextEdit*>(e.editor))
      connect(t, &QPlainTextEdit::textChanged, this, edited);
    else if (auto* l = qobject_cast<QLineEdit*>(e.editor))
      connect(l, &QLineEdit::textChanged, this, edited);
    e.label_widget = new QLabel;
    e.label_widget->setBuddy(e.editor);
    e.editor->setObjectName(QString::fromStdString(x.node + "." + x.param));
    form_->addRow(e.label_widget, row);
    entries_.push_back(e);
    display(entries_.back(), app::paramValue(template_, schemas_, x.node, x.param));
  }
  if (entries_.empty()) {
    empty_ = new QLabel;
    empty_->setWordWrap(true);
    form_->addRow(empty_);
  }
  retranslate();
}

QWidget* ParameterPanel::makeEditor(Entry& e, QWidget** row) {
  const kiln::ParamSpec& s = e.spec;
  const bool ranged = s.min < s.max;
  QWidget* editor = nullptr;
  if (e.model_picker) {
    auto* combo = new QComboBox;
    combo->setEditable(true);
    combo->setInsertPolicy(QComboBox::NoInsert);
    combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    combo->setMinimumContentsLength(20);
    fillModelPicker(combo);
    auto* browse = new QPushButton(tr("Browse…"));
    browse->setObjectName("browse");
    browse_buttons_.push_back(browse);
    connect(browse, &QPushButton::clicked, this, [this, combo] {
      const QString path = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), QString(),
                                                        tr("Checkpoints (*.safetensors)"));
      if (!path.isEmpty()) combo->setEditText(path);
    });
    const std::string node = e.node, param = e.param;
    connect(combo, &QComboBox::currentTextChanged, this, [this, node, param] {
      if (const Entry* entry = find(node, param)) Q_EMIT modelChanged(asString(valueOf(*entry)));
    });
    *row = besides(combo, browse);
    return combo;
  }
  switch (s.type) {
    case kiln::ValueType::Int: {
      auto* spin = new IntField;
      spin->setRange(ranged ? toInt(s.min) : INT_MIN, ranged ? toInt(s.max) : INT_MAX);
      if (s.step > 0) spin->setSingleStep(toInt(s.step));
      // Picture sizes stay on their grid in the field itself.
      if ((s.name == "width" || s.name == "height") && s.step > 1) spin->setSnap(toInt(s.step));
      editor = spin;
      break;
    }
    case kiln::ValueType::Float: {
      auto* spin = new DoubleField;
      spin->setDecimals(s.step > 0 && s.step < 0.01 ? 3 : 2);
      spin->setRange(ranged ? s.min : -1e9, ranged ? s.max : 1e9);
      if (s.step > 0) spin->setSingleStep(s.step);
      editor = spin;
      break;
    }
    case kiln::ValueType::Seed: {
      auto* spin = new SeedField;
      e.random = new QCheckBox;
      connect(e.random, &QCheckBox::toggled, spin, &QWidget::setDisabled);
      *row = besides(spin, e.random);
      return spin;
    }
    case kiln::ValueType::Enum: {
      auto* combo = new QComboBox;
      for (const auto& c : s.choices) combo->addItem(QString::fromStdString(c));
      editor = combo;
      break;
    }
    case kiln::ValueType::Bool:
      editor = new QCheckBox;
      break;
    case kiln::ValueType::String:
      if (s.multiline) {
        auto* text = new QPlainTextEdit;
        text->setMaximumHeight(80);
        editor = text;
        break;
      }
      editor = new QLineEdit;
      break;
    default: {  // FILE and anything else as text; files with a Browse button
      auto* line = new QLineEdit;
      if (s.type == kiln::ValueType::File) {
        auto* browse = new QPushButton(tr("Browse…"));
        browse_buttons_.push_back(browse);
        connect(browse, &QPushButton::clicked, this, [this, line] {
          const QString path =
              QFileDialog::getOpenFileName(this, tr("Choose a file"), line->text());
          if (!path.isEmpty()) line->setText(path);
        });
        *row = besides(line, browse);
        return line;
      }
      editor = line;
    }
  }
  *row = editor;
  return editor;
}

void ParameterPanel::retranslate() {
  for (Entry& e : entries_) {
    e.label_widget->setText(
        QCoreApplication::translate("kiln::app::Workflow", e.label.toUtf8().constData()));
    QString tip = QString::fromStdString(e.spec.description);
    if (e.spec.min < e.spec.max && e.spec.type != kiln::ValueType::Seed)
      tip += (tip.isEmpty() ? "" : "\n") + tr("From %1 to %2").arg(e.spec.min).arg(e.spec.max);
    e.editor->setToolTip(tip);
    if (auto* text = qobject_cast<QPlainTextEdit*>(e.editor))
      text->setPlaceholderText(e.node == app::findRole(template_, app::PanelRole::Negative).node
                                   ? tr("What to avoid")
                                   : tr("What to render"));
    if (e.random) {
      e.random->setText(tr("Random"));
      e.random->setToolTip(tr("A new seed for every Generate; untick to keep the seed"));
    }
    if (e.model_picker) {
      auto* combo = static_cast<QComboBox*>(e.editor);
      combo->lineEdit()->setPlaceholderText(tr("A .safetensors checkpoint or a diffusers folder"));
      if (combo->count() > 0 && combo->itemData(0).toString().isEmpty())
        combo->setItemText(0, tr("Kiln starter model"));
    }
  }
  for (QPushButton* browse : browse_buttons_) browse->setText(tr("Browse…"));
  if (empty_)
    empty_->setText(tr("This workflow exposes no parameters: Generate runs it as it is."));
}

void ParameterPanel::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}

kiln::ParamValue ParameterPanel::valueOf(const Entry& e) const {
  if (e.model_picker) {
    const auto* combo = static_cast<const QComboBox*>(e.editor);
    const QString text = combo->currentText().trimmed();
    const int i = combo->findText(text);
    return (i >= 0 ? combo->itemData(i).toString() : text).toStdString();
  }
  if (const auto* seed = qobject_cast<const SeedField*>(e.editor)) return int64_t{seed->value()};
  if (const auto* s = qobject_cast<const QSpinBox*>(e.editor)) return int64_t{s->value()};
  if (const auto* d = qobject_cast<const QDoubleSpinBox*>(e.editor)) return d->value();
  if (const auto* c = qobject_cast<const QComboBox*>(e.editor))
    return c->currentText().toStdString();
  if (const auto* b = qobject_cast<const QCheckBox*>(e.editor)) return b->isChecked();
  if (const auto* t = qobject_cast<const QPlainTextEdit*>(e.editor))
    return t->toPlainText().toStdString();
  if (const auto* l = qobject_cast<const QLineEdit*>(e.editor)) return l->text().toStdString();
  return {};
}

void ParameterPanel::display(Entry& e, const kiln::ParamValue& v) {
  showing_ = true;
  struct Done {
    bool& flag;
    ~Done() { flag = false; }
  } done{showing_};
  if (e.model_picker) {
    auto* combo = static_cast<QComboBox*>(e.editor);
    const QString path = asString(v);
    const int i = combo->findData(path);
    if (i >= 0)
      combo->setCurrentIndex(i);
    else
      combo->setEditText(path);
    return;
  }
  if (auto* seed = qobject_cast<SeedField*>(e.editor))
    seed->setValue(asInt(v));
  else if (auto* s = qobject_cast<QSpinBox*>(e.editor))
    s->setValue(static_cast<int>(std::clamp<int64_t>(asInt(v), INT_MIN, INT_MAX)));
  else if (auto* d = qobject_cast<QDoubleSpinBox*>(e.editor))
    d->setValue(asDouble(v));
  else if (auto* c = qobject_cast<QComboBox*>(e.editor))
    c->setCurrentText(asString(v));
  else if (auto* b = qobject_cast<QCheckBox*>(e.editor))
    b->setChecked(std::holds_alternative<bool>(v) && std::get<bool>(v));
  else if (auto* t = qobject_cast<QPlainTextEdit*>(e.editor))
    t->setPlainText(asString(v));
  else if (auto* l = qobject_cast<QLineEdit*>(e.editor))
    l->setText(asString(v));
}

kiln::Workflow ParameterPanel::workflow() const {
  kiln::Workflow w = template_;
  for (const Entry& e : entries_)
    if (kiln::WorkflowNode* n = w.node(e.node)) n->params[e.param] = valueOf(e);
  return w;
}

void ParameterPanel::drawRandomSeeds() {
  for (Entry& e : entries_)
    if (e.random && e.random->isChecked())  // 32-bit, as A1111 and most tools draw them
      static_cast<SeedField*>(e.editor)->setValue(
          static_cast<qint64>(QRandomGenerator::global()->generate()));
}

kiln::ParamValue ParameterPanel::value(const std::string& node, const std::string& param) const {
  const Entry* e = find(node, param);
  return e ? valueOf(*e) : kiln::ParamValue{};
}

const ParameterPanel::Entry* ParameterPanel::find(const std::string& node,
                                                  const std::string& param) const {
  for (const Entry& e : entries_)
    if (e.node == node && e.param == param) return &e;
  return nullptr;
}

QWidget* ParameterPanel::editor(const std::string& node, const std::string& param) const {
  const Entry* e = find(node, param);
  return e ? e->editor : nullptr;
}

QWidget* ParameterPanel::roleEditor(app::PanelRole role) const {
  const app::ParamRef ref = app::findRole(template_, role);
  return ref.valid() ? editor(ref.node, ref.param) : nullptr;
}

QCheckBox* ParameterPanel::randomSeed() const {
  const app::ParamRef ref = app::findRole(template_, app::PanelRole::Seed);
  const Entry* e = ref.valid() ? find(ref.node, ref.param) : nullptr;
  return e ? e->random : nullptr;
}

bool ParameterPanel::setValue(const std::string& node, const std::string& param,
                              const kiln::ParamValue& value) {
  for (Entry& e : entries_)
    if (e.node == node && e.param == param) {
      display(e, value);
      return true;
    }
  return false;
}

bool ParameterPanel::setRoleValue(app::PanelRole role, const kiln::ParamValue& value) {
  const app::ParamRef ref = app::findRole(template_, role);
  return ref.valid() && setValue(ref.node, ref.param, value);
}

}  // namespace kiln::ui
