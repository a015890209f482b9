#include "workflow_document.h"

#include <QFile>
#include <QRegularExpression>
#include <QSaveFile>
#include <QUndoCommand>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "kiln/error.h"
#include "workflow_files.h"

namespace kiln::app {

// One edit: the workflow before and after (workflows are small; a snapshot is simpler
// and safer than inverse operations).
class DocumentCommand : public QUndoCommand {
 public:
  DocumentCommand(WorkflowDocument* doc, const QString& text, kiln::Workflow before,
                  kiln::Workflow after, int merge_id, std::vector<std::string> key)
      : QUndoCommand(text),
        doc_(doc),
        before_(std::move(before)),
        after_(std::move(after)),
        merge_id_(merge_id),
        key_(std::move(key)) {}
  void undo() override { doc_->replace(before_); }
  void redo() override { doc_->replace(after_); }
  int id() const override { return merge_id_; }
  bool mergeWith(const QUndoCommand* other) override {
    const auto* o = static_cast<const DocumentCommand*>(other);
    if (o->key_ != key_) return false;
    after_ = o->after_;
    return true;
  }

 private:
  WorkflowDocument* doc_;
  kiln::Workflow before_, after_;
  int merge_id_;
  std::vector<std::string> key_;
};

namespace {

enum MergeId { kMove = 1, kParam = 2 };

// Why `value` cannot be `spec`'s ("" when it can).
QString valueProblem(const kiln::ParamSpec& spec, const kiln::ParamValue& value) {
  const QString name = QString::fromStdString(spec.name);
  double number = 0;
  switch (spec.type) {
    case kiln::ValueType::Int:
    case kiln::ValueType::Seed:
      if (const auto* i = std::get_if<int64_t>(&value))
        number = static_cast<double>(*i);
      else
        return WorkflowDocument::tr("%1 takes a whole number").arg(name);
      break;
    case kiln::ValueType::Float:
      if (const auto* d = std::get_if<double>(&value))
        number = *d;
      else if (const auto* i = std::get_if<int64_t>(&value))
        number = static_cast<double>(*i);
      else
        return WorkflowDocument::tr("%1 takes a number").arg(name);
      if (!std::isfinite(number)) return WorkflowDocument::tr("%1 takes a finite number").arg(name);
      break;
    case kiln::ValueType::Bool:
      return std::holds_alternative<bool>(value)
                 ? QString()
                 : WorkflowDocument::tr("%1 is on or off").arg(name);
    case kiln::ValueType::Enum: {
      const auto* s = std::get_if<std::string>(&value);
      if (!s || std::find(spec.choices.begin(), spec.choices.end(), *s) == spec.choices.end())
        return WorkflowDocument::tr("%1 is one of the listed choices").arg(name);
      return {};
    }
    default:
      return std::holds_alternative<std::string>(value)
                 ? QString()
                 : WorkflowDocument::tr("%1 takes text").arg(name);
  }
  if (spec.min < spec.max && (number < spec.min || number > spec.max))
    return WorkflowDocument::tr("%1 must be between %2 and %3")
        .arg(name)
        .arg(spec.min)
        .arg(spec.max);
  return {};
}

bool contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Takes `ids` out of every group; groups left empty go.
void dropFromGroups(kiln::Workflow& w, const std::vector<std::string>& ids) {
  for (auto& g : w.groups)
    g.nodes.erase(std::remove_if(g.nodes.begin(), g.nodes.end(),
                                 [&](const auto& n) { return contains(ids, n); }),
                  g.nodes.end());
  w.groups.erase(std::remove_if(w.groups.begin(), w.groups.end(),
                                [](const auto& g) { return g.nodes.empty(); }),
                 w.groups.end());
}

}  // namespace

WorkflowDocument::WorkflowDocument(std::vector<kiln::NodeSchema> schemas, QObject* parent)
    : QObject(parent), schemas_(std::move(schemas)) {
  undo_.setClean();
}

const kiln::NodeSchema* WorkflowDocument::schema(const std::string& type) const {
  for (const auto& s : schemas_)
    if (s.type == type) return &s;
  return nullptr;
}

void WorkflowDocument::replace(kiln::Workflow next) {
  workflow_ = std::move(next);
  Q_EMIT changed();
}

bool WorkflowDocument::push(const QString& text, kiln::Workflow next, int merge_id,
                            const std::vector<std::string>& key) {
  error_.clear();
  undo_.push(new DocumentCommand(this, text, workflow_, std::move(next), merge_id, key));
  return true;
}

bool WorkflowDocument::fail(const QString& message) {
  error_ = message;
  return false;
}

std::string WorkflowDocument::freshId(const kiln::Workflow& w) {
  // Above every id in use and every one given before: a deleted node's id is not reused.
  int64_t n = next_id_;
  for (const auto& node : w.nodes) {
    char* end = nullptr;
    const long long v = std::strtoll(node.id.c_str(), &end, 10);
    if (end && *end == '\0' && !node.id.empty() && v >= n) n = v + 1;
  }
  next_id_ = n + 1;
  return std::to_string(n);
}

std::string WorkflowDocument::addNode(const std::string& type, double x, double y) {
  if (!schema(type)) {
    fail(tr("Kiln has no node type %1").arg(QString::fromStdString(type)));
    return {};
  }
  kiln::Workflow next = workflow_;
  kiln::WorkflowNode node;
  node.id = freshId(next);
  node.type = type;
  node.x = x;
  node.y = y;
  const std::string id = node.id;
  next.nodes.push_back(std::move(node));
  push(tr("Add %1").arg(QString::fromStdString(schema(type)->display_name)), std::move(next));
  return id;
}

bool WorkflowDocument::removeNodes(const std::vector<std::string>& ids) {
  kiln::Workflow next = workflow_;
  const auto before = next.nodes.size();
  next.nodes.erase(std::remove_if(next.nodes.begin(), next.nodes.end(),
                                  [&](const auto& n) { return contains(ids, n.id); }),
                   next.nodes.end());
  if (next.nodes.size() == before) return fail(tr("None of those nodes is in the workflow"));
  next.links.erase(std::remove_if(next.links.begin(), next.links.end(),
                                  [&](const auto& l) {
                                    return contains(ids, l.from_node) || contains(ids, l.to_node);
                                  }),
                   next.links.end());
  next.exposed.erase(std::remove_if(next.exposed.begin(), next.exposed.end(),
                                    [&](const auto& e) { return contains(ids, e.node); }),
                     next.exposed.end());
  dropFromGroups(next, ids);
  return push(before - next.nodes.size() == 1
                  ? tr("Delete node")
                  : tr("Delete %1 nodes").arg(before - next.nodes.size()),
              std::move(next));
}

bool WorkflowDocument::moveNodes(const std::vector<std::string>& ids, double dx, double dy) {
  kiln::Workflow next = workflow_;
  bool any = false;
  for (auto& n : next.nodes)
    if (contains(ids, n.id)) {
      n.x += dx;
      n.y += dy;
      any = true;
    }
  if (!any) return fail(tr("None of those nodes is in the workflow"));
  std::vector<std::string> key = ids;
  std::sort(key.begin(), key.end());
  return push(tr("Move"), std::move(next), kMove, key);
}

bool WorkflowDocument::setParam(const std::string& id, const std::string& param,
                                const kiln::ParamValue& value) {
  const kiln::WorkflowNode* node = workflow_.node(id);
  if (!node) return fail(tr("There is no node %1").arg(QString::fromStdString(id)));
  const kiln::NodeSchema* s = schema(node->type);
  const kiln::ParamSpec* spec = s ? s->param(param) : nullptr;
  if (!spec)
    return fail(tr("%1 has no parameter %2")
                    .arg(QString::fromStdString(node->type), QString::fromStdString(param)));
  if (const QString problem = valueProblem(*spec, value); !problem.isEmpty()) return fail(problem);
  kiln::Workflow next = workflow_;
  next.node(id)->params[param] = value;
  // Typing into one field is one undo step.
  return push(tr("Set %1").arg(QString::fromStdString(spec->display_name)), std::move(next), kParam,
              {id, param});
}

bool WorkflowDocument::setTitle(const std::string& id, const QString& title) {
  if (!workflow_.node(id)) return fail(tr("There is no node %1").arg(QString::fromStdString(id)));
  kiln::Workflow next = workflow_;
  next.node(id)->title = title.trimmed().toStdString();
  return push(tr("Rename node"), std::move(next));
}

int WorkflowDocument::groupNodes(const std::vector<std::string>& ids, const QString& title) {
  kiln::WorkflowGroup group;
  group.title = title.trimmed().toStdString();
  for (const auto& n : workflow_.nodes)
    if (contains(ids, n.id)) group.nodes.push_back(n.id);
  if (group.nodes.empty()) {
    fail(tr("Select the nodes to group first"));
    return -1;
  }
  kiln::Workflow next = workflow_;
  dropFromGroups(next, group.nodes);
  next.groups.push_back(std::move(group));
  const int index = static_cast<int>(next.groups.size()) - 1;
  push(tr("Group"), std::move(next));
  return index;
}

bool WorkflowDocument::ungroup(int group) {
  if (group < 0 || group >= static_cast<int>(workflow_.groups.size()))
    return fail(tr("There is no such group"));
  kiln::Workflow next = workflow_;
  next.groups.erase(next.groups.begin() + group);
  return push(tr("Ungroup"), std::move(next));
}

bool WorkflowDocument::setGroupTitle(int group, const QString& title) {
  if (group < 0 || group >= static_cast<int>(workflow_.groups.size()))
    return fail(tr("There is no such group"));
  kiln::Workflow next = workflow_;
  next.groups[static_cast<std::size_t>(group)].title = title.trimmed().toStdString();
  return push(tr("Rename group"), std::move(next));
}

bool WorkflowDocument::setGroupColor(int group, const QString& color) {
  if (group < 0 || group >= static_cast<int>(workflow_.groups.size()))
    return fail(tr("There is no such group"));
  static const QRegularExpression hex("^#[0-9a-fA-F]{6}$");
  if (!color.isEmpty() && !hex.match(color).hasMatch())
    return fail(tr("%1 is not a colour of the form #rrggbb").arg(color));
  kiln::Workflow next = workflow_;
  next.groups[static_cast<std::size_t>(group)].color = color.toStdString();
  return push(tr("Colour group"), std::move(next));
}

int WorkflowDocument::groupOf(const std::string& node) const {
  for (std::size_t i = 0; i < workflow_.groups.size(); ++i)
    if (contains(workflow_.groups[i].nodes, node)) return static_cast<int>(i);
  return -1;
}

QString WorkflowDocument::connectionProblem(const std::string& from_node, const std::string& output,
                                            const std::string& to_node,
                                            const std::string& input) const {
  const kiln::WorkflowNode* from = workflow_.node(from_node);
  const kiln::WorkflowNode* to = workflow_.node(to_node);
  if (!from || !to) return tr("Both ends must be nodes of the workflow");
  if (from_node == to_node) return tr("A node cannot feed itself");
  const kiln::NodeSchema* fs = schema(from->type);
  const kiln::NodeSchema* ts = schema(to->type);
  const kiln::OutputSpec* out = fs ? fs->output(output) : nullptr;
  const kiln::InputSpec* in = ts ? ts->input(input) : nullptr;
  if (!out)
    return tr("%1 has no output %2")
        .arg(QString::fromStdString(from->type), QString::fromStdString(output));
  if (!in)
    return tr("%1 has no input %2")
        .arg(QString::fromStdString(to->type), QString::fromStdString(input));
  if (out->type != in->type)
    return tr("The output gives %1 and the input takes %2")
        .arg(QString::fromLatin1(kiln::valueTypeName(out->type)),
             QString::fromLatin1(kiln::valueTypeName(in->type)));
  // A link back into one's own ancestors would make a cycle.
  std::set<std::string> seen;
  std::function<bool(const std::string&)> reaches = [&](const std::string& node) {
    if (node == from_node) return true;
    if (!seen.insert(node).second) return false;
    for (const auto& l : workflow_.links)
      if (l.from_node == node && reaches(l.to_node)) return true;
    return false;
  };
  if (reaches(to_node)) return tr("That link would make a cycle");
  return {};
}

bool WorkflowDocument::connectPorts(const std::string& from_node, const std::string& output,
                                    const std::string& to_node, const std::string& input) {
  if (const QString problem = connectionProblem(from_node, output, to_node, input);
      !problem.isEmpty())
    return fail(problem);
  kiln::Workflow next = workflow_;
  next.links.erase(
      std::remove_if(next.links.begin(), next.links.end(),
                     [&](const auto& l) { return l.to_node == to_node && l.to_input == input; }),
      next.links.end());
  next.links.push_back({from_node, output, to_node, input});
  return push(tr("Connect"), std::move(next));
}

bool WorkflowDocument::disconnectInput(const std::string& node, const std::string& input) {
  kiln::Workflow next = workflow_;
  const auto before = next.links.size();
  next.links.erase(
      std::remove_if(next.links.begin(), next.links.end(),
                     [&](const auto& l) { return l.to_node == node && l.to_input == input; }),
      next.links.end());
  if (next.links.size() == before) return fail(tr("Nothing is connected there"));
  return push(tr("Disconnect"), std::move(next));
}

bool WorkflowDocument::setExposed(const std::string& id, const std::string& param, bool exposed,
                                  const QString& label) {
  const kiln::WorkflowNode* node = workflow_.node(id);
  const kiln::NodeSchema* s = node ? schema(node->type) : nullptr;
  const kiln::ParamSpec* spec = s ? s->param(param) : nullptr;
  if (!spec)
    return fail(tr("There is no parameter %1 on node %2")
                    .arg(QString::fromStdString(param), QString::fromStdString(id)));
  kiln::Workflow next = workflow_;
  auto& list = next.exposed;
  const auto it = std::find_if(list.begin(), list.end(),
                               [&](const auto& e) { return e.node == id && e.param == param; });
  if (exposed) {
    const std::string text = label.isEmpty() ? spec->display_name : label.toStdString();
    if (it != list.end())
      it->label = text;
    else
      list.push_back({id, param, text});
  } else {
    if (it == list.end()) return fail(tr("That parameter is not shown in the generate panel"));
    list.erase(it);
  }
  return push(exposed ? tr("Show in the generate panel") : tr("Hide from the generate panel"),
              std::move(next));
}

QString WorkflowDocument::copy(const std::vector<std::string>& ids) const {
  kiln::Workflow fragment;
  for (const auto& n : workflow_.nodes)
    if (contains(ids, n.id)) fragment.nodes.push_back(n);
  for (const auto& l : workflow_.links)
    if (contains(ids, l.from_node) && contains(ids, l.to_node)) fragment.links.push_back(l);
  for (const auto& g : workflow_.groups)
    if (std::all_of(g.nodes.begin(), g.nodes.end(),
                    [&](const auto& n) { return contains(ids, n); }))
      fragment.groups.push_back(g);
  return QString::fromStdString(kiln::workflowToJson(fragment));
}

std::vector<std::string> WorkflowDocument::paste(const QString& text, double dx, double dy) {
  kiln::Workflow fragment;
  try {
    fragment = kiln::parseWorkflow(text.toStdString());
  } catch (const kiln::Error& e) {
    fail(tr("The clipboard holds no Kiln nodes: %1").arg(QString::fromUtf8(e.what())));
    return {};
  }
  for (const auto& n : fragment.nodes)
    if (!schema(n.type)) {
      fail(tr("Kiln has no node type %1").arg(QString::fromStdString(n.type)));
      return {};
    }
  kiln::Workflow next = workflow_;
  std::map<std::string, std::string> ids;
  std::vector<std::string> added;
  for (auto n : fragment.nodes) {
    n.x += dx;
    n.y += dy;
    const std::string old_id = n.id;
    n.id = freshId(next);
    ids[old_id] = n.id;
    added.push_back(n.id);
    next.nodes.push_back(std::move(n));
  }
  for (const auto& l : fragment.links)
    if (ids.count(l.from_node) && ids.count(l.to_node))
      next.links.push_back({ids[l.from_node], l.from_output, ids[l.to_node], l.to_input});
  for (auto g : fragment.groups) {
    std::vector<std::string> members;
    for (const auto& n : g.nodes)
      if (ids.count(n)) members.push_back(ids[n]);
    g.nodes = std::move(members);
    if (!g.nodes.empty()) next.groups.push_back(std::move(g));
  }
  if (added.empty()) {
    fail(tr("The clipboard holds no nodes"));
    return {};
  }
  push(tr("Paste"), std::move(next));
  return added;
}

void WorkflowDocument::setWorkflow(kiln::Workflow workflow) {
  undo_.clear();
  next_id_ = 1;
  replace(std::move(workflow));
  undo_.setClean();
}

bool WorkflowDocument::open(const QString& path) {
  try {
    LoadedWorkflow loaded = loadWorkflowFile(path, {});
    setWorkflow(std::move(loaded.workflow));
    path_ =
        loaded.source == "Kiln" && path.endsWith(".json", Qt::CaseInsensitive) ? path : QString();
    error_.clear();
    return true;
  } catch (const kiln::Error& e) {
    return fail(QString::fromUtf8(e.what()));
  }
}

bool WorkflowDocument::save(const QString& path) {
  QSaveFile file(path);
  const std::string text = kiln::workflowToJson(workflow_);
  if (!file.open(QIODevice::WriteOnly) ||
      file.write(text.data(), static_cast<qint64>(text.size())) < 0 || !file.commit())
    return fail(tr("Cannot write %1: %2").arg(path, file.errorString()));
  path_ = path;
  undo_.setClean();
  error_.clear();
  return true;
}

std::vector<kiln::WorkflowProblem> WorkflowDocument::problems() const {
  return kiln::validateWorkflow(workflow_, schemas_);
}

}  // namespace kiln::app
