#include "node_canvas.h"

#include <QApplication>
#include <QClipboard>
#include <QColorDialog>
#include <QContextMenuEvent>
#include <QCursor>
#include <QFileInfo>
#include <QFrame>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QUndoStack>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <cmath>
#include <optional>
#include <set>

#include "node_search.h"
#include "node_texts.h"
#include "parameter_panel.h"
#include "template_workflow.h"
#include "workflow_document.h"

namespace kiln::ui {

namespace {

constexpr double kWidth = 210, kHeader = 24, kRow = 20, kPort = 5;
// A group's frame: its title bar, and the margin around its nodes.
constexpr double kGroupTitle = 28, kGroupMargin = 14;

QColor typeColour(kiln::ValueType type) {
  switch (type) {
    case kiln::ValueType::Model:
      return QColor(180, 120, 220);
    case kiln::ValueType::Clip:
      return QColor(240, 200, 60);
    case kiln::ValueType::Vae:
      return QColor(230, 90, 90);
    case kiln::ValueType::Conditioning:
      return QColor(240, 160, 60);
    case kiln::ValueType::Latent:
      return QColor(230, 120, 200);
    case kiln::ValueType::Image:
      return QColor(90, 170, 240);
    case kiln::ValueType::Mask:
      return QColor(120, 200, 120);
    default:
      return QColor(160, 160, 160);
  }
}

QPainterPath linkPath(const QPointF& from, const QPointF& to) {
  QPainterPath path(from);
  const double bend = std::max(40.0, std::abs(to.x() - from.x()) / 2);
  path.cubicTo(from + QPointF(bend, 0), to - QPointF(bend, 0), to);
  return path;
}

// A parameter's value as a node shows it: one line, files by their name.
QString shownValue(const kiln::ParamSpec& spec, const kiln::ParamValue& v) {
  if (const auto* b = std::get_if<bool>(&v))
    return *b ? NodeCanvas::tr("on") : NodeCanvas::tr("off");
  if (const auto* i = std::get_if<int64_t>(&v)) return QString::number(*i);
  if (const auto* d = std::get_if<double>(&v)) return QString::number(*d, 'g', 6);
  if (const auto* s = std::get_if<std::string>(&v)) {
    QString text = QString::fromStdString(*s);
    if (spec.type == kiln::ValueType::File) {
      if (text.isEmpty())
        return spec.name == "ckpt_name" ? NodeCanvas::tr("starter model") : NodeCanvas::tr("none");
      return QFileInfo(text).fileName().isEmpty() ? text : QFileInfo(text).fileName();
    }
    return text.section('\n', 0, 0).trimmed() +
           (text.contains('\n') ? QStringLiteral(" …") : QString());
  }
  return NodeCanvas::tr("(required)");
}

}  // namespace

// A group: a titled frame behind its nodes. It is not selected or moved by Qt; the
// canvas drags it by its title bar.
class GroupItem : public QGraphicsItem {
 public:
  GroupItem(int index, const QString& title, const QColor& colour, const QRectF& rect)
      : index_(index), title_(title), colour_(colour), rect_(rect) {
    setZValue(-1);
  }
  int index() const { return index_; }
  QRectF boundingRect() const override { return rect_; }
  QRectF titleBar() const { return {rect_.topLeft(), QSizeF(rect_.width(), kGroupTitle)}; }
  void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget* widget) override {
    const QPalette pal = widget ? widget->palette() : QPalette();
    const QColor edge = colour_.isValid() ? colour_ : pal.color(QPalette::Highlight);
    QColor fill = edge;
    fill.setAlpha(40);
    p->setRenderHint(QPainter::Antialiasing);
    p->setPen(QPen(edge, 1.5));
    p->setBrush(fill);
    p->drawRoundedRect(rect_, 8, 8);
    fill.setAlpha(110);
    p->setBrush(fill);
    p->setPen(Qt::NoPen);
    p->drawRoundedRect(titleBar(), 8, 8);
    p->setPen(pal.color(QPalette::Text));
    QFont bold = p->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    p->setFont(bold);
    const QRectF text = titleBar().adjusted(10, 0, -10, 0);
    p->drawText(
        text, Qt::AlignVCenter | Qt::AlignLeft,
        p->fontMetrics().elidedText(title_, Qt::ElideRight, static_cast<int>(text.width())));
  }

 private:
  int index_;
  QString title_;
  QColor colour_;
  QRectF rect_;
};

// One node: a header with its title, inputs down the left edge, outputs down the right.
class NodeItem : public QGraphicsItem {
 public:
  // One parameter row: its name and its value, as shown.
  struct Row {
    std::string param;
    QString label, value;
  };
  NodeItem(const kiln::WorkflowNode& node, const kiln::NodeSchema& schema, std::vector<Row> rows)
      : node_(node), schema_(schema), params_(std::move(rows)) {
    setFlags(ItemIsMovable | ItemIsSelectable);
    setPos(node.x, node.y);
    setZValue(1);
    title_ = node_.title.empty() ? app::nodeText(schema_.display_name)
                                 : QString::fromStdString(node_.title);
    for (const auto& i : schema_.inputs) inputs_ << app::nodeText(i.display_name);
    for (const auto& o : schema_.outputs) outputs_ << app::nodeText(o.display_name);
  }
  // Where parameter row `i` is, in item coordinates.
  QRectF paramRect(std::size_t i) const {
    return {0, kHeader + kRow * rows() + kRow * static_cast<double>(i), kWidth, kRow};
  }
  // The parameter whose row is at `local` ("" when none).
  std::string paramAt(const QPointF& local) const {
    for (std::size_t i = 0; i < params_.size(); ++i)
      if (paramRect(i).contains(local)) return params_[i].param;
    return {};
  }
  std::optional<QRectF> paramRect(const std::string& param) const {
    for (std::size_t i = 0; i < params_.size(); ++i)
      if (params_[i].param == param) return paramRect(i);
    return std::nullopt;
  }
  const std::string& id() const { return node_.id; }
  const kiln::NodeSchema& schema() const { return schema_; }
  void setState(const QString& state, const QString& message, double progress = -1) {
    state_ = state;
    message_ = message;
    progress_ = progress;
    update();
  }
  void setProblem(const QString& problem) {
    problem_ = problem;
    setToolTip(problem);
    update();
  }
  int rows() const {
    return static_cast<int>(std::max(schema_.inputs.size(), schema_.outputs.size()));
  }
  QRectF boundingRect() const override {
    return {-kPort, 0, kWidth + 2 * kPort,
            kHeader + kRow * (rows() + static_cast<double>(params_.size())) +
                ((state_.isEmpty() && problem_.isEmpty()) ? 6 : 24)};
  }
  // The port's centre, in item coordinates; null when there is no such port.
  std::optional<QPointF> port(const std::string& name, bool output) const {
    for (std::size_t i = 0; i < (output ? schema_.outputs.size() : schema_.inputs.size()); ++i) {
      const std::string& n = output ? schema_.outputs[i].name : schema_.inputs[i].name;
      if (n == name)
        return QPointF(output ? kWidth : 0, kHeader + kRow * static_cast<double>(i) + kRow / 2);
    }
    return std::nullopt;
  }
  void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget* widget) override {
    const QPalette pal = widget ? widget->palette() : QPalette();
    const QRectF body(0, 0, kWidth, boundingRect().height());
    p->setRenderHint(QPainter::Antialiasing);
    QColor edge = isSelected() ? pal.color(QPalette::Highlight) : pal.color(QPalette::Mid);
    if (!problem_.isEmpty() || state_ == "failed") edge = QColor(220, 50, 47);
    p->setPen(QPen(edge, isSelected() || !problem_.isEmpty() ? 2.5 : 1));
    p->setBrush(pal.color(QPalette::Base));
    p->drawRoundedRect(body, 6, 6);
    p->setBrush(pal.color(QPalette::Button));
    p->drawRoundedRect(QRectF(0, 0, kWidth, kHeader), 6, 6);
    p->setPen(pal.color(QPalette::ButtonText));
    QFont bold = p->font();
    bold.setBold(true);
    p->setFont(bold);
    p->drawText(QRectF(8, 0, kWidth - 16, kHeader), Qt::AlignVCenter | Qt::AlignLeft,
                p->fontMetrics().elidedText(title_, Qt::ElideRight, static_cast<int>(kWidth - 16)));
    bold.setBold(false);
    p->setFont(bold);
    p->setPen(pal.color(QPalette::Text));
    for (std::size_t i = 0; i < schema_.inputs.size(); ++i) {
      const QPointF at(0, kHeader + kRow * static_cast<double>(i) + kRow / 2);
      p->setBrush(typeColour(schema_.inputs[i].type));
      p->drawEllipse(at, kPort, kPort);
      p->drawText(QRectF(10, at.y() - kRow / 2, kWidth / 2, kRow), Qt::AlignVCenter | Qt::AlignLeft,
                  inputs_[static_cast<int>(i)]);
    }
    for (std::size_t i = 0; i < schema_.outputs.size(); ++i) {
      const QPointF at(kWidth, kHeader + kRow * static_cast<double>(i) + kRow / 2);
      p->setBrush(typeColour(schema_.outputs[i].type));
      p->drawEllipse(at, kPort, kPort);
      p->drawText(QRectF(kWidth / 2, at.y() - kRow / 2, kWidth / 2 - 10, kRow),
                  Qt::AlignVCenter | Qt::AlignRight, outputs_[static_cast<int>(i)]);
    }
    // Parameters: a field per row, name on the left, value on the right; a click edits it.
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const QRectF field = paramRect(i).adjusted(6, 2, -6, -2);
      p->setPen(Qt::NoPen);
      p->setBrush(pal.color(QPalette::AlternateBase));
      p->drawRoundedRect(field, 4, 4);
      const QRectF text = field.adjusted(6, 0, -6, 0);
      const int half = static_cast<int>(text.width() / 2);
      p->setPen(pal.color(QPalette::PlaceholderText));
      const QString label = p->fontMetrics().elidedText(params_[i].label, Qt::ElideRight, half - 4);
      p->drawText(text, Qt::AlignVCenter | Qt::AlignLeft, label);
      p->setPen(pal.color(QPalette::Text));
      const int room =
          static_cast<int>(text.width()) - p->fontMetrics().horizontalAdvance(label) - 8;
      p->drawText(
          text, Qt::AlignVCenter | Qt::AlignRight,
          p->fontMetrics().elidedText(params_[i].value, Qt::ElideRight, std::max(room, 10)));
    }
    if (progress_ >= 0 && problem_.isEmpty()) {
      const QRectF track(8, body.height() - 5, kWidth - 16, 3);
      p->setPen(Qt::NoPen);
      p->setBrush(pal.color(QPalette::Mid));
      p->drawRect(track);
      p->setBrush(pal.color(QPalette::Highlight));
      p->drawRect(QRectF(track.topLeft(),
                         QSizeF(track.width() * std::clamp(progress_, 0.0, 1.0), track.height())));
    }
    const QString line =
        !problem_.isEmpty() ? problem_ : (message_.isEmpty() ? state_ : state_ + ": " + message_);
    if (!line.isEmpty()) {
      p->setPen(!problem_.isEmpty() || state_ == "failed" ? QColor(220, 50, 47)
                                                          : pal.color(QPalette::Text));
      p->drawText(QRectF(8, kHeader + kRow * (rows() + static_cast<double>(params_.size())),
                         kWidth - 16, 22),
                  Qt::AlignVCenter | Qt::AlignLeft,
                  p->fontMetrics().elidedText(line, Qt::ElideRight, static_cast<int>(kWidth - 16)));
    }
  }

 private:
  kiln::WorkflowNode node_;
  kiln::NodeSchema schema_;
  std::vector<Row> params_;
  QString title_;
  QStringList inputs_, outputs_;
  QString state_, message_, problem_;
  double progress_ = -1;  // of a running node, 0 to 1; < 0: none shown
};

NodeCanvas::NodeCanvas(app::WorkflowDocument* document, QWidget* parent)
    : QGraphicsView(parent), doc_(document) {
  setScene(new QGraphicsScene(this));
  setRenderHint(QPainter::Antialiasing);
  setDragMode(QGraphicsView::RubberBandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  // An edit makes earlier validation results stale.
  connect(doc_, &app::WorkflowDocument::changed, this, [this] {
    problems_.clear();
    if (!editing_param_) closeParamEditor();  // it would show a value from before
    rebuild();
  });
  rebuild();
}

// The scene goes with the view; nobody hears of its items' selection as they go.
NodeCanvas::~NodeCanvas() {
  scene()->blockSignals(true);
  nodes_.clear();
  groups_.clear();
}

void NodeCanvas::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) rebuild();  // node and parameter names
  QGraphicsView::changeEvent(event);
}

void NodeCanvas::rebuild() {
  const std::vector<std::string> selected = selectedIds();
  // One selectionChanged for the whole rebuild, after it: nothing looks at half-deleted items.
  const QSignalBlocker block(scene());
  drag_line_ = nullptr;
  nodes_.clear();
  groups_.clear();
  scene()->clear();
  const kiln::Workflow& w = doc_->workflow();
  for (const auto& n : w.nodes) {
    const kiln::NodeSchema* s = doc_->schema(n.type);
    if (!s) continue;
    std::vector<NodeItem::Row> rows;
    for (const kiln::ParamSpec& spec : s->params)
      rows.push_back({spec.name, app::nodeText(spec.display_name),
                      shownValue(spec, app::paramValue(w, doc_->schemas(), n.id, spec.name))});
    auto* item = new NodeItem(n, *s, std::move(rows));
    scene()->addItem(item);
    const QString id = QString::fromStdString(n.id);
    nodes_.insert(id, item);
    if (states_.contains(id))
      item->setState(states_[id].first, states_[id].second, progress_.value(id, -1));
    if (problems_.contains(id)) item->setProblem(problems_[id]);
  }
  for (const auto& l : w.links) {
    const QPointF from = portPosition(l.from_node, l.from_output, true),
                  to = portPosition(l.to_node, l.to_input, false);
    if (from.isNull() && to.isNull()) continue;
    auto* link = scene()->addPath(linkPath(from, to), QPen(palette().color(QPalette::Text), 2));
    link->setZValue(0);
  }
  groups_.clear();
  for (std::size_t i = 0; i < w.groups.size(); ++i) {
    QRectF frame;
    for (const auto& id : w.groups[i].nodes)
      if (const NodeItem* item = nodes_.value(QString::fromStdString(id)))
        frame |= item->sceneBoundingRect();
    if (frame.isNull()) continue;
    const QString title = QString::fromStdString(w.groups[i].title);
    auto* group = new GroupItem(
        static_cast<int>(i), title.isEmpty() ? tr("Group") : title,
        QColor(QString::fromStdString(w.groups[i].color)),
        frame.adjusted(-kGroupMargin, -kGroupMargin - kGroupTitle, kGroupMargin, kGroupMargin));
    scene()->addItem(group);
    groups_.push_back(group);
  }
  selectIds(selected);
  scene()->setSceneRect(scene()->itemsBoundingRect().adjusted(-2000, -2000, 2000, 2000));
  QMetaObject::invokeMethod(scene(), &QGraphicsScene::selectionChanged, Qt::QueuedConnection);
}

std::vector<std::string> NodeCanvas::selectedIds() const {
  std::vector<std::string> ids;
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it)
    if (it.value()->isSelected()) ids.push_back(it.key().toStdString());
  return ids;
}

void NodeCanvas::selectIds(const std::vector<std::string>& ids) {
  scene()->clearSelection();
  for (const auto& id : ids)
    if (NodeItem* item = nodes_.value(QString::fromStdString(id))) item->setSelected(true);
}

QPointF NodeCanvas::portPosition(const std::string& node, const std::string& port,
                                 bool output) const {
  const NodeItem* item = nodes_.value(QString::fromStdString(node));
  if (!item) return {};
  const std::optional<QPointF> p = item->port(port, output);
  return p ? item->mapToScene(*p) : QPointF();
}

QPointF NodeCanvas::nodePosition(const std::string& node) const {
  const NodeItem* item = nodes_.value(QString::fromStdString(node));
  return item ? item->pos() : QPointF();
}

QPointF NodeCanvas::paramPosition(const std::string& node, const std::string& param) const {
  const NodeItem* item = nodes_.value(QString::fromStdString(node));
  const std::optional<QRectF> row = item ? item->paramRect(param) : std::nullopt;
  return row ? item->mapToScene(row->center()) : QPointF();
}

int NodeCanvas::groupAt(const QPointF& scene_pos, bool title_only) const {
  for (const GroupItem* g : groups_)
    if ((title_only ? g->titleBar() : g->boundingRect()).contains(scene_pos)) return g->index();
  return -1;
}

QRectF NodeCanvas::groupRect(int group) const {
  for (const GroupItem* g : groups_)
    if (g->index() == group) return g->sceneBoundingRect();
  return {};
}

int NodeCanvas::groupSelection() {
  const std::vector<std::string> ids = selectedIds();
  if (ids.empty()) return -1;
  const int group = doc_->groupNodes(ids, tr("Group"));
  selectIds(ids);
  return group;
}

QLineEdit* NodeCanvas::renameGroup(int group) {
  const QRectF bar = groupRect(group);
  if (bar.isNull()) return nullptr;
  closeParamEditor();
  auto* edit = new QLineEdit(viewport());
  edit->setObjectName("groupTitleEditor");
  edit->setText(
      QString::fromStdString(doc_->workflow().groups[static_cast<std::size_t>(group)].title));
  edit->selectAll();
  const QRect at =
      mapFromScene(QRectF(bar.topLeft(), QSizeF(bar.width(), kGroupTitle))).boundingRect();
  edit->setGeometry(at.x(), at.y(), std::max(at.width(), 160),
                    std::max(at.height(), edit->sizeHint().height()));
  connect(edit, &QLineEdit::editingFinished, this, [this, edit, group] {
    if (!edit->isVisible()) return;
    edit->hide();
    edit->deleteLater();
    if (edit->text() !=
        QString::fromStdString(doc_->workflow().groups[static_cast<std::size_t>(group)].title))
      doc_->setGroupTitle(group, edit->text());
  });
  edit->show();
  edit->setFocus();
  return edit;
}

QWidget* NodeCanvas::editParam(const std::string& node, const std::string& param) {
  closeParamEditor();
  const NodeItem* item = nodes_.value(QString::fromStdString(node));
  const kiln::WorkflowNode* n = doc_->workflow().node(node);
  const kiln::NodeSchema* s = n ? doc_->schema(n->type) : nullptr;
  const kiln::ParamSpec* spec = s ? s->param(param) : nullptr;
  const std::optional<QRectF> row = item ? item->paramRect(param) : std::nullopt;
  if (!spec || !row) return nullptr;
  auto* frame = new QFrame(viewport());
  frame->setObjectName("paramEditor");
  frame->setFrameShape(QFrame::StyledPanel);
  frame->setAutoFillBackground(true);
  auto* layout = new QVBoxLayout(frame);
  layout->setContentsMargins(6, 4, 6, 4);
  auto* panel = new ParameterPanel(frame);
  kiln::Workflow view;
  view.nodes = {*n};
  view.exposed = {{node, param, spec->display_name}};
  panel->setWorkflow(view);
  layout->addWidget(panel);
  auto* error = new QLabel(frame);
  error->setObjectName("paramEditorError");
  error->setWordWrap(true);
  error->setStyleSheet("color: #dc322f");
  error->hide();
  layout->addWidget(error);
  connect(panel, &ParameterPanel::valueEdited, this, [this, panel, error, node, param] {
    editing_param_ = true;
    const bool ok = doc_->setParam(node, param, panel->value(node, param));
    editing_param_ = false;
    error->setText(ok ? QString() : doc_->lastError());
    error->setVisible(!ok);
    if (param_editor_) param_editor_->adjustSize();
  });
  QWidget* field = panel->editor(node, param);
  if (field) field->installEventFilter(this);
  const QRect at = mapFromScene(item->mapToScene(*row)).boundingRect();
  frame->move(at.topLeft());
  frame->resize(std::max(at.width(), 260), frame->sizeHint().height());
  frame->show();
  if (field) field->setFocus();
  param_editor_ = frame;
  return frame;
}

void NodeCanvas::closeParamEditor() {
  if (!param_editor_) return;
  param_editor_->hide();
  param_editor_->deleteLater();
  param_editor_ = nullptr;
}

// The inline editor's field: Escape closes it; Enter too, except in a text box (prompts).
bool NodeCanvas::eventFilter(QObject* watched, QEvent* event) {
  if (param_editor_ && event->type() == QEvent::KeyPress) {
    const auto* key = static_cast<QKeyEvent*>(event);
    const bool enter = key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter;
    const bool text_box =
        watched->inherits("QPlainTextEdit") && !(key->modifiers() & Qt::ControlModifier);
    if (key->key() == Qt::Key_Escape || (enter && !text_box)) {
      closeParamEditor();
      setFocus();
      return true;
    }
  }
  return QGraphicsView::eventFilter(watched, event);
}

NodeCanvas::PortHit NodeCanvas::portAt(const QPointF& scene_pos) const {
  for (NodeItem* item : nodes_) {
    const QPointF local = item->mapFromScene(scene_pos);
    for (bool output : {false, true}) {
      const auto& schema = item->schema();
      const std::size_t count = output ? schema.outputs.size() : schema.inputs.size();
      for (std::size_t i = 0; i < count; ++i) {
        const std::string& name = output ? schema.outputs[i].name : schema.inputs[i].name;
        const std::optional<QPointF> p = item->port(name, output);
        if (p && QLineF(*p, local).length() <= kPort * 2) return {item, name, output};
      }
    }
  }
  return {};
}

void NodeCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
  const QPointF at = mapToScene(event->position().toPoint());
  QGraphicsItem* under = itemAt(event->position().toPoint());
  if (event->button() == Qt::LeftButton && dynamic_cast<GroupItem*>(under)) {
    const int group = groupAt(at, true);
    if (group >= 0)
      renameGroup(group);
    else
      openNodeSearch(at);  // inside a group's frame, off its nodes: empty space
    return;
  }
  if (event->button() == Qt::LeftButton && !under) {
    openNodeSearch(at);
    return;
  }
  QGraphicsView::mouseDoubleClickEvent(event);
}

void NodeCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::MiddleButton) {
    panning_ = true;
    pan_last_ = event->position().toPoint();
    event->accept();
    return;
  }
  closeParamEditor();
  const QPointF at = mapToScene(event->position().toPoint());
  PortHit hit = event->button() == Qt::LeftButton ? portAt(at) : PortHit{};
  pending_param_ = {};
  if (event->button() == Qt::LeftButton && !hit.valid()) {
    QGraphicsItem* under = itemAt(event->position().toPoint());
    if (auto* node = dynamic_cast<NodeItem*>(under)) {
      // A click (no drag) on a parameter's row edits it there.
      const std::string param = node->paramAt(node->mapFromScene(at));
      if (!param.empty()) pending_param_ = {node->id(), param, event->position().toPoint()};
    } else if (dynamic_cast<GroupItem*>(under) && groupAt(at, true) >= 0) {
      // Dragging a group's title bar moves the group with its nodes.
      group_drag_ = groupAt(at, true);
      group_drag_start_ = at;
      const auto& members = doc_->workflow().groups[static_cast<std::size_t>(group_drag_)].nodes;
      selectIds(members);
      move_start_.clear();
      for (const auto& id : members)
        move_start_.insert(QString::fromStdString(id), nodePosition(id));
      event->accept();
      return;
    }
  }
  if (hit.valid()) {
    if (!hit.output) {
      // Pulling a link off an input: it is disconnected, and dragged on from its source.
      const std::string to = hit.node->id(), input = hit.port;
      for (const auto& l : doc_->workflow().links)
        if (l.to_node == to && l.to_input == input) {
          const std::string from = l.from_node, output = l.from_output;
          doc_->disconnectInput(to, input);  // rebuilds the scene
          hit = {nodes_.value(QString::fromStdString(from)), output, true};
          break;
        }
    }
    if (hit.valid() && hit.output) {
      drag_from_ = hit;
      drag_line_ = scene()->addPath(QPainterPath(),
                                    QPen(palette().color(QPalette::Highlight), 2, Qt::DashLine));
      drag_line_->setZValue(2);
      event->accept();
      return;
    }
  }
  QGraphicsView::mousePressEvent(event);
  move_start_.clear();
  for (const auto& id : selectedIds())
    move_start_.insert(QString::fromStdString(id), nodePosition(id));
}

void NodeCanvas::mouseMoveEvent(QMouseEvent* event) {
  if (panning_) {
    const QPoint delta = event->position().toPoint() - pan_last_;
    pan_last_ = event->position().toPoint();
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() - delta.x());
    verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
    return;
  }
  if (group_drag_ >= 0) {
    const QPointF delta = mapToScene(event->position().toPoint()) - group_drag_start_;
    for (auto it = move_start_.begin(); it != move_start_.end(); ++it)
      if (NodeItem* item = nodes_.value(it.key())) item->setPos(it.value() + delta);
    for (GroupItem* g : groups_)
      if (g->index() == group_drag_) g->setPos(delta);
    return;
  }
  if (drag_line_) {
    const QPointF at = mapToScene(event->position().toPoint());
    const QPointF from = portPosition(drag_from_.node->id(), drag_from_.port, true);
    drag_line_->setPath(linkPath(from, at));
    const PortHit target = portAt(at);
    drag_problem_.clear();
    if (target.valid() && !target.output)
      drag_problem_ = doc_->connectionProblem(drag_from_.node->id(), drag_from_.port,
                                              target.node->id(), target.port);
    QPen pen = drag_line_->pen();
    pen.setColor(
        !drag_problem_.isEmpty()
            ? QColor(220, 50, 47)
            : (target.valid() ? QColor(60, 170, 90) : palette().color(QPalette::Highlight)));
    pen.setStyle(drag_problem_.isEmpty() ? Qt::DashLine : Qt::DotLine);
    drag_line_->setPen(pen);
    setToolTip(drag_problem_);
    return;
  }
  QGraphicsView::mouseMoveEvent(event);
}

void NodeCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (panning_) {
    panning_ = false;
    return;
  }
  if (drag_line_) {
    const PortHit target = portAt(mapToScene(event->position().toPoint()));
    const std::string from = drag_from_.node->id(), output = drag_from_.port;
    scene()->removeItem(drag_line_);
    delete drag_line_;
    drag_line_ = nullptr;
    drag_from_ = {};
    drag_problem_.clear();
    setToolTip({});
    if (target.valid() && !target.output)
      doc_->connectPorts(from, output, target.node->id(), target.port);
    return;
  }
  if (group_drag_ >= 0) {
    group_drag_ = -1;
    const QPointF delta = mapToScene(event->position().toPoint()) - group_drag_start_;
    std::vector<std::string> ids;
    for (auto it = move_start_.begin(); it != move_start_.end(); ++it)
      ids.push_back(it.key().toStdString());
    move_start_.clear();
    if (!delta.isNull()) doc_->moveNodes(ids, delta.x(), delta.y());
    return;
  }
  QGraphicsView::mouseReleaseEvent(event);
  if (!pending_param_.node.empty()) {
    const PendingParam p = pending_param_;
    pending_param_ = {};
    const bool moved = (event->position().toPoint() - p.press).manhattanLength() >
                       QApplication::startDragDistance();
    if (!moved) {
      move_start_.clear();
      editParam(p.node, p.param);
      return;
    }
  }
  // A finished drag of nodes is one move in the document.
  if (!move_start_.isEmpty()) {
    const QString first = move_start_.firstKey();
    const NodeItem* item = nodes_.value(first);
    const QPointF delta = item ? item->pos() - move_start_.first() : QPointF();
    std::vector<std::string> ids;
    for (auto it = move_start_.begin(); it != move_start_.end(); ++it)
      ids.push_back(it.key().toStdString());
    move_start_.clear();
    if (!delta.isNull()) doc_->moveNodes(ids, delta.x(), delta.y());
  }
}

void NodeCanvas::wheelEvent(QWheelEvent* event) {
  const double factor = std::pow(1.2, event->angleDelta().y() / 120.0);
  const double zoom = transform().m11() * factor;
  if (zoom < 0.05 || zoom > 4) return;
  closeParamEditor();
  scale(factor, factor);
  event->accept();
}

void NodeCanvas::keyPressEvent(QKeyEvent* event) {
  if (event->matches(QKeySequence::Delete) || event->key() == Qt::Key_Backspace)
    deleteSelection();
  else if (event->matches(QKeySequence::Copy))
    copySelection();
  else if (event->matches(QKeySequence::Paste))
    paste();
  else if (event->matches(QKeySequence::Undo))
    doc_->undoStack()->undo();
  else if (event->matches(QKeySequence::Redo))
    doc_->undoStack()->redo();
  else if (event->matches(QKeySequence::SelectAll)) {
    for (NodeItem* item : nodes_) item->setSelected(true);
  } else if (event->key() == Qt::Key_G && (event->modifiers() & Qt::ControlModifier)) {
    if (event->modifiers() & Qt::ShiftModifier)
      ungroupSelection();
    else
      groupSelection();
  } else if (event->key() == Qt::Key_Home)
    frameAll();
  else if ((event->modifiers() & ~Qt::ShiftModifier) == Qt::NoModifier &&
           event->text().size() == 1 && event->text().at(0).isLetterOrNumber())
    openNodeSearch(mapToScene(viewport()->mapFromGlobal(QCursor::pos())), event->text());
  else
    return QGraphicsView::keyPressEvent(event);
  event->accept();
}

void NodeCanvas::contextMenuEvent(QContextMenuEvent* event) {
  const QPointF at = mapToScene(event->pos());
  QMenu menu(this);
  const int group = dynamic_cast<GroupItem*>(itemAt(event->pos())) ? groupAt(at, false) : -1;
  if (group >= 0) {
    menu.addAction(tr("Rename Group…"), this, [this, group] { renameGroup(group); });
    QMenu* colours = menu.addMenu(tr("Group Colour"));
    const QList<QPair<QString, QString>> presets{
        {tr("Theme"), ""},        {tr("Red"), "#b0413e"},  {tr("Orange"), "#c27c2c"},
        {tr("Green"), "#4a8c4a"}, {tr("Blue"), "#3f789e"}, {tr("Purple"), "#7a5ea8"}};
    for (const auto& [name, colour] : presets)
      colours->addAction(name, this,
                         [this, group, colour = colour] { doc_->setGroupColor(group, colour); });
    colours->addAction(tr("Other…"), this, [this, group] {
      const QColor c = QColorDialog::getColor(Qt::gray, this, tr("Group Colour"));
      if (c.isValid()) doc_->setGroupColor(group, c.name());
    });
    menu.addAction(tr("Ungroup"), this, [this, group] { doc_->ungroup(group); });
    menu.addSeparator();
  }
  if (!selectedIds().empty()) {
    menu.addAction(tr("Group Selection"), this, [this] { groupSelection(); })
        ->setShortcut(QKeySequence(tr("Ctrl+G")));
    menu.addSeparator();
  }
  menu.addAction(tr("Search…"), this, [this, at] { openNodeSearch(at); });
  menu.addSeparator();
  QMap<QString, QMenu*> categories;
  for (const kiln::NodeSchema& s : doc_->schemas()) {
    const QString category = app::nodeCategoryText(s.category);
    if (!categories.contains(category)) categories.insert(category, menu.addMenu(category));
    const std::string type = s.type;
    categories[category]->addAction(app::nodeText(s.display_name), this,
                                    [this, type, at] { doc_->addNode(type, at.x(), at.y()); });
  }
  menu.exec(event->globalPos());
}

NodeSearch* NodeCanvas::openNodeSearch(const QPointF& scene_pos, const QString& text) {
  auto* search = new NodeSearch(doc_->schemas(), this);
  connect(search, &NodeSearch::chosen, this, [this, scene_pos](const std::string& type) {
    const std::string id = doc_->addNode(type, scene_pos.x(), scene_pos.y());
    if (!id.empty()) selectIds({id});
  });
  search->move(mapToGlobal(mapFromScene(scene_pos)));
  search->show();
  search->field()->setFocus();
  search->field()->setText(text);
  return search;
}

void NodeCanvas::ungroupSelection() {
  std::set<int> groups;
  for (const auto& id : selectedIds())
    if (const int g = doc_->groupOf(id); g >= 0) groups.insert(g);
  // From the last, so the earlier indexes stay right.
  for (auto it = groups.rbegin(); it != groups.rend(); ++it) doc_->ungroup(*it);
}

void NodeCanvas::frameAll() {
  const QRectF all = scene()->itemsBoundingRect();
  if (all.isEmpty()) return;
  fitInView(all.adjusted(-40, -40, 40, 40), Qt::KeepAspectRatio);
  if (transform().m11() > 1.5) setTransform(QTransform::fromScale(1.5, 1.5));
}

void NodeCanvas::deleteSelection() {
  const std::vector<std::string> ids = selectedIds();
  if (!ids.empty()) doc_->removeNodes(ids);
}

void NodeCanvas::copySelection() {
  const std::vector<std::string> ids = selectedIds();
  if (!ids.empty()) QApplication::clipboard()->setText(doc_->copy(ids));
}

void NodeCanvas::paste() {
  const std::vector<std::string> ids = doc_->paste(QApplication::clipboard()->text(), 40, 40);
  selectIds(ids);
}

void NodeCanvas::setNodeState(const std::string& node, const QString& state,
                              const QString& message) {
  const QString id = QString::fromStdString(node);
  if (state.isEmpty())
    states_.remove(id);
  else
    states_.insert(id, {state, message});
  if (state != "running") progress_.remove(id);
  if (NodeItem* item = nodes_.value(id)) item->setState(state, message, progress_.value(id, -1));
}

void NodeCanvas::clearNodeStates(const QStringList& states) {
  for (const QString& id : states_.keys())
    if (states.isEmpty() || states.contains(states_.value(id).first))
      setNodeState(id.toStdString(), {}, {});
}

void NodeCanvas::setNodeProgress(const std::string& node, qint64 done, qint64 total) {
  const QString id = QString::fromStdString(node);
  if (!states_.contains(id) || total <= 0) return;
  progress_.insert(id, static_cast<double>(done) / static_cast<double>(total));
  states_[id].second = QString::number(done) + "/" + QString::number(total);
  if (NodeItem* item = nodes_.value(id))
    item->setState(states_[id].first, states_[id].second, progress_[id]);
}

void NodeCanvas::showProblems(const std::vector<kiln::WorkflowProblem>& problems) {
  problems_.clear();
  for (const auto& p : problems)
    if (!p.node.empty()) {
      QString& text = problems_[QString::fromStdString(p.node)];
      text += (text.isEmpty() ? "" : "; ") + QString::fromStdString(p.message);
    }
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it)
    it.value()->setProblem(problems_.value(it.key()));
}

}  // namespace kiln::ui
