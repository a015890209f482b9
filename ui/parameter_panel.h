// The generate panel's parameters, made from the template workflow's exposed parameters
// and the node schemas: one editor per parameter by its type (spin boxes with the
// schema's range, choices, prompts, model picker, seed with Random), read back into a
// copy of the template for each Generate.
#pragma once

#include <QList>
#include <QWidget>

#include <vector>

#include "kiln/workflow.h"
#include "model_list.h"
#include "template_workflow.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QPushButton;

namespace kiln::ui {

class ParameterPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ParameterPanel(QWidget* parent = nullptr);

  // The template whose exposed parameters the panel shows, with their values.
  void setWorkflow(const kiln::Workflow& workflow);
  const kiln::Workflow& templateWorkflow() const noexcept { return template_; }
  // The template with the editors' values.
  kiln::Workflow workflow() const;
  // Each seed whose Random box is ticked gets a new value (before a Generate).
  void drawRandomSeeds();

  // The checkpoints the model picker offers after the starter model.
  void setModels(const QList<app::ModelChoice>& models);

  QWidget* editor(const std::string& node, const std::string& param) const;
  QWidget* roleEditor(app::PanelRole role) const;
  QCheckBox* randomSeed() const;  // the Random box of the seed the Sampler uses
  // Sets an exposed parameter's editor; false when the panel does not show it.
  bool setValue(const std::string& node, const std::string& param, const kiln::ParamValue& value);
  bool setRoleValue(app::PanelRole role, const kiln::ParamValue& value);
  int count() const { return static_cast<int>(entries_.size()); }
  // An editor's current value; monostate when the panel does not show that parameter.
  kiln::ParamValue value(const std::string& node, const std::string& param) const;
  // Where a field says it changed what was typed (clamped, snapped to the grid).
  QLabel* notice() const { return notice_; }

 Q_SIGNALS:
  // The checkpoint picked or typed ("" for the starter model).
  void modelChanged(const QString& path);
  // A person changed an editor (not emitted for values set by setWorkflow or setValue).
  void valueEdited(const std::string& node, const std::string& param);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  struct Entry {
    std::string node, param;
    kiln::ParamSpec spec;
    bool model_picker = false;
    QString label;  // the exposed label, translated where shown
    QLabel* label_widget = nullptr;
    QWidget* editor = nullptr;  // the value's widget (spin box, combo, text ...)
    QCheckBox* random = nullptr;
  };
  void rebuild();
  void retranslate();
  QWidget* makeEditor(Entry& e, QWidget** row);
  kiln::ParamValue valueOf(const Entry& e) const;
  void display(Entry& e, const kiln::ParamValue& value);
  const Entry* find(const std::string& node, const std::string& param) const;
  void fillModelPicker(QComboBox* combo) const;
  void showAdjustment(const QString& label, const QString& message);

  kiln::Workflow template_;
  std::vector<kiln::NodeSchema> schemas_;
  QList<app::ModelChoice> models_;
  std::vector<Entry> entries_;
  QFormLayout* form_ = nullptr;
  QLabel* empty_ = nullptr;
  QLabel* notice_ = nullptr;
  QList<QPushButton*> browse_buttons_;
  bool showing_ = false;  // values being set by the program, not edited
};

}  // namespace kiln::ui
