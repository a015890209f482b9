// The workflow editor's document: a workflow being edited, every edit an undoable
// command on one QUndoStack (add, delete, move, connect, disconnect, set a parameter,
// rename, expose, group, paste), connections checked against the node schemas as they are
// made, copy and paste as workflow fragments, and opening and saving files. The canvas
// and the parameter panel are views of it; it has no widgets and is tested without them.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QUndoStack>

#include <optional>
#include <string>
#include <vector>

#include "kiln/workflow.h"

namespace kiln::app {

class WorkflowDocument : public QObject {
  Q_OBJECT

 public:
  explicit WorkflowDocument(std::vector<kiln::NodeSchema> schemas, QObject* parent = nullptr);

  const kiln::Workflow& workflow() const noexcept { return workflow_; }
  const std::vector<kiln::NodeSchema>& schemas() const noexcept { return schemas_; }
  const kiln::NodeSchema* schema(const std::string& type) const;
  QUndoStack* undoStack() noexcept { return &undo_; }

  // Edits (each one undo step). Ids name nodes; a refused edit changes nothing and
  // returns false (or an empty id) with the reason in lastError().
  std::string addNode(const std::string& type, double x, double y);
  bool removeNodes(const std::vector<std::string>& ids);  // with their links
  // Consecutive moves of the same nodes merge into one undo step (a drag).
  bool moveNodes(const std::vector<std::string>& ids, double dx, double dy);
  bool setParam(const std::string& node, const std::string& param, const kiln::ParamValue& value);
  bool setTitle(const std::string& node, const QString& title);
  // Links an output to an input of a matching type, replacing the input's old link.
  bool connectPorts(const std::string& from_node, const std::string& output,
                    const std::string& to_node, const std::string& input);
  bool disconnectInput(const std::string& node, const std::string& input);
  // Shows or hides a parameter in the generate panel.
  bool setExposed(const std::string& node, const std::string& param, bool exposed,
                  const QString& label = {});

  // Frames the nodes `ids` as one group titled `title` (a node is in at most one group: it
  // leaves its old one, and a group left empty goes); returns the group's index, or -1.
  int groupNodes(const std::vector<std::string>& ids, const QString& title);
  bool ungroup(int group);  // the nodes stay
  bool setGroupTitle(int group, const QString& title);
  bool setGroupColor(int group, const QString& color);  // "#rrggbb", or "" for the theme's
  // The group holding `node` (-1: none).
  int groupOf(const std::string& node) const;

  // Why `output` of `from_node` cannot feed `input` of `to_node` ("" when it can): the
  // editor asks while a connection is dragged.
  QString connectionProblem(const std::string& from_node, const std::string& output,
                            const std::string& to_node, const std::string& input) const;

  // The nodes `ids`, the links among them and the groups wholly among them, as workflow
  // text for the clipboard.
  QString copy(const std::vector<std::string>& ids) const;
  // Adds a copied fragment's nodes under fresh ids, shifted by (dx, dy), with their
  // links and groups among them; returns the new ids (empty, with lastError(), for text that is not
  // a fragment Kiln can use).
  std::vector<std::string> paste(const QString& fragment, double dx, double dy);

  // Replaces the document (not undoable: the undo history starts afresh).
  void setWorkflow(kiln::Workflow workflow);
  bool open(const QString& path);
  bool save(const QString& path);
  QString path() const { return path_; }
  bool isModified() const { return !undo_.isClean(); }
  // Every problem the workflow has now (validateWorkflow), for highlighting nodes.
  std::vector<kiln::WorkflowProblem> problems() const;

  QString lastError() const { return error_; }

 Q_SIGNALS:
  void changed();

 private:
  friend class DocumentCommand;
  void replace(kiln::Workflow next);  // the commands' way in
  bool push(const QString& text, kiln::Workflow next, int merge_id = -1,
            const std::vector<std::string>& merge_key = {});
  bool fail(const QString& message);
  std::string freshId(const kiln::Workflow& w);

  std::vector<kiln::NodeSchema> schemas_;
  kiln::Workflow workflow_;
  QUndoStack undo_;
  QString path_;
  QString error_;
  int64_t next_id_ = 1;
};

}  // namespace kiln::app
