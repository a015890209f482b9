#include "node_canvas.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QCursor>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QUndoStack>
#include <QWheelEvent>

#include <cmath>
#include <optional>

#include "node_search.h"
#include "workflow_document.h"

namespace kiln::ui {

namespace {

constexpr double kWidth = 210, kHeader = 24, kRow = 20, kPort = 5;

QColor typeColour(kiln::ValueType type) {
  switch (type) {
    case kiln::ValueType::Model: return QColor(180, 120, 220);
    case kiln::ValueType::Clip: return QColor(240, 200, 60);
    case kiln::ValueType::Vae: return QColor(230, 90, 90);
    case kiln::ValueType::Conditioning: return QColor(240, 160, 60);
    case kiln::ValueType::Latent: return QColor(230, 120, 200);
    case kiln::ValueType::Image: return QColor(90, 170, 240);
    case kiln::ValueType::Mask: return QColor(120, 200, 120);
    default: return QColor(160, 160, 160);
  }
}

QPainterPath linkPath(const QPointF& from, const QPointF& to) {
  QPainterPath path(from);
  const double bend = std::max(40.0, std::abs(to.x() - from.x()) / 2);
  path.cubicTo(from + QPointF(bend, 0), to - QPointF(bend, 0), to);
  return path;
}

}  // namespace

// One node: a header with its title, inputs down the left edge, outputs down the right.
class NodeItem : public QGraphicsItem {
 public:
  NodeItem(const kiln::WorkflowNode& node, const kiln::NodeSchema& schema) : node_(node), schema_(schema) {
    setFlags(ItemIsMovable | ItemIsSelectable);
    setPos(node.x, node.y);
    setZValue(1);
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
  int rows() const { return static_cast<int>(std::max(schema_.inputs.size(), schema_.outputs.size())); }
  QRectF boundingRect() const override {
    return {-kPort, 0, kWidth + 2 * kPort, kHeader + kRow * rows() + ((state_.isEmpty() && problem_.isEmpty()) ? 6 : 24)};
  }
  // The port's centre, in item coordinates; null when there is no such port.
  std::optional<QPointF> port(const std::string& name, bool output) const {
    for (std::size_t i = 0; i < (output ? schema_.outputs.size() : schema_.inputs.size()); ++i) {
      const std::string& n = output ? schema_.outputs[i].name : schema_.inputs[i].name;
      if (n == name) return QPointF(output ? kWidth : 0, kHeader + kRow * static_cast<double>(i) + kRow / 2);
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
    const QString title = node_.title.empty() ? QString::fromStdString(schema_.display_name) : QString::fromStdString(node_.title);
    p->drawText(QRectF(8, 0, kWidth - 16, kHeader), Qt::AlignVCenter | Qt::AlignLeft, title);
    bold.setBold(false);
    p->setFont(bold);
    p->setPen(pal.color(QPalette::Text));
    for (std::size_t i = 0; i < schema_.inputs.size(); ++i) {
      const QPointF at(0, kHeader + kRow * static_cast<double>(i) + kRow / 2);
      p->setBrush(typeColour(schema_.inputs[i].type));
      p->drawEllipse(at, kPort, kPort);
      p->drawText(QRectF(10, at.y() - kRow / 2, kWidth / 2, kRow), Qt::AlignVCenter | Qt::AlignLeft,
                  QString::fromStdString(schema_.inputs[i].display_name));
    }
    for (std::size_t i = 0; i < schema_.outputs.size(); ++i) {
      const QPointF at(kWidth, kHeader + kRow * static_cast<double>(i) + kRow / 2);
      p->setBrush(typeColour(schema_.outputs[i].type));
      p->drawEllipse(at, kPort, kPort);
      p->drawText(QRectF(kWidth / 2, at.y() - kRow / 2, kWidth / 2 - 10, kRow), Qt::AlignVCenter | Qt::AlignRight,
                  QString::fromStdString(schema_.outputs[i].display_name));
    }
    if (progress_ >= 0 && problem_.isEmpty()) {
      const QRectF track(8, body.height() - 5, kWidth - 16, 3);
      p->setPen(Qt::NoPen);
      p->setBrush(pal.color(QPalette::Mid));
      p->drawRect(track);
      p->setBrush(pal.color(QPalette::Highlight));
      p->drawRect(QRectF(track.topLeft(), QSizeF(track.width() * std::clamp(progress_, 0.0, 1.0), track.height())));
    }
    const QString line = !problem_.isEmpty() ? problem_ : (message_.isEmpty() ? state_ : state_ + ": " + message_);
    if (!line.isEmpty()) {
      p->setPen(!problem_.isEmpty() || state_ == "failed" ? QColor(220, 50, 47) : pal.color(QPalette::Text));
      p->drawText(QRectF(8, kHeader + kRow * rows(), kWidth - 16, 22), Qt::AlignVCenter | Qt::AlignLeft,
                  p->fontMetrics().elidedText(line, Qt::ElideRight, static_cast<int>(kWidth - 16)));
    }
  }

 private:
  kiln::WorkflowNode node_;
  kiln::NodeSchema schema_;
  QString state_, message_, problem_;
  double progress_ = -1;  // of a running node, 0 to 1; < 0: none shown
};

NodeCanvas::NodeCanvas(app::WorkflowDocument* document, QWidget* parent) : QGraphicsView(parent), doc_(document) {
  setScene(new QGraphicsScene(this));
  setRenderHint(QPainter::Antialiasing);
  setDragMode(QGraphicsView::RubberBandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  // An edit makes earlier validation results stale.
  connect(doc_, &app::WorkflowDocument::changed, this, [this] {
    problems_.clear();
    rebuild();
  });
  rebuild();
}

// The scene goes with the view; nobody hears of its items' selection as they go.
NodeCanvas::~NodeCanvas() {
  scene()->blockSignals(true);
  nodes_.clear();
}

void NodeCanvas::rebuild() {
  const std::vector<std::string> selected = selectedIds();
  // One selectionChanged for the whole rebuild, after it: nothing looks at half-deleted items.
  const QSignalBlocker block(scene());
  drag_line_ = nullptr;
  nodes_.clear();
  scene()->clear();
  const kiln::Workflow& w = doc_->workflow();
  for (const auto& n : w.nodes) {
    const kiln::NodeSchema* s = doc_->schema(n.type);
    if (!s) continue;
    auto* item = new NodeItem(n, *s);
    scene()->addItem(item);
    const QString id = QString::fromStdString(n.id);
    nodes_.insert(id, item);
    if (states_.contains(id)) item->setState(states_[id].first, states_[id].second, progress_.value(id, -1));
    if (problems_.contains(id)) item->setProblem(problems_[id]);
  }
  for (const auto& l : w.links) {
    const QPointF from = portPosition(l.from_node, l.from_output, true), to = portPosition(l.to_node, l.to_input, false);
    if (from.isNull() && to.isNull()) continue;
    auto* link = scene()->addPath(linkPath(from, to), QPen(palette().color(QPalette::Text), 2));
    link->setZValue(0);
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

QPointF NodeCanvas::portPosition(const std::string& node, const std::string& port, bool output) const {
  const NodeItem* item = nodes_.value(QString::fromStdString(node));
  if (!item) return {};
  const std::optional<QPointF> p = item->port(port, output);
  return p ? item->mapToScene(*p) : QPointF();
}

QPointF NodeCanvas::nodePosition(const std::string& node) const {
  const NodeItem* item = nodes_.value(QString::fromStdString(node));
  return item ? item->pos() : QPointF();
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
  if (event->button() == Qt::LeftButton && !itemAt(event->position().toPoint())) {
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
  const QPointF at = mapToScene(event->position().toPoint());
  PortHit hit = event->button() == Qt::LeftButton ? portAt(at) : PortHit{};
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
      drag_line_ = scene()->addPath(QPainterPath(), QPen(palette().color(QPalette::Highlight), 2, Qt::DashLine));
      drag_line_->setZValue(2);
      event->accept();
      return;
    }
  }
  QGraphicsView::mousePressEvent(event);
  move_start_.clear();
  for (const auto& id : selectedIds()) move_start_.insert(QString::fromStdString(id), nodePosition(id));
}

void NodeCanvas::mouseMoveEvent(QMouseEvent* event) {
  if (panning_) {
    const QPoint delta = event->position().toPoint() - pan_last_;
    pan_last_ = event->position().toPoint();
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() - delta.x());
    verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
    return;
  }
  if (drag_line_) {
    const QPointF at = mapToScene(event->position().toPoint());
    const QPointF from = portPosition(drag_from_.node->id(), drag_from_.port, true);
    drag_line_->setPath(linkPath(from, at));
    const PortHit target = portAt(at);
    drag_problem_.clear();
    if (target.valid() && !target.output)
      drag_problem_ = doc_->connectionProblem(drag_from_.node->id(), drag_from_.port, target.node->id(), target.port);
    QPen pen = drag_line_->pen();
    pen.setColor(!drag_problem_.isEmpty() ? QColor(220, 50, 47)
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
    if (target.valid() && !target.output) doc_->connectPorts(from, output, target.node->id(), target.port);
    return;
  }
  QGraphicsView::mouseReleaseEvent(event);
  // A finished drag of nodes is one move in the document.
  if (!move_start_.isEmpty()) {
    const QString first = move_start_.firstKey();
    const NodeItem* item = nodes_.value(first);
    const QPointF delta = item ? item->pos() - move_start_.first() : QPointF();
    std::vector<std::string> ids;
    for (auto it = move_start_.begin(); it != move_start_.end(); ++it) ids.push_back(it.key().toStdString());
    move_start_.clear();
    if (!delta.isNull()) doc_->moveNodes(ids, delta.x(), delta.y());
  }
}

void NodeCanvas::wheelEvent(QWheelEvent* event) {
  const double factor = std::pow(1.2, event->angleDelta().y() / 120.0);
  const double zoom = transform().m11() * factor;
  if (zoom < 0.05 || zoom > 4) return;
  scale(factor, factor);
  event->accept();
}

void NodeCanvas::keyPressEvent(QKeyEvent* event) {
  if (event->matches(QKeySequence::Delete) || event->key() == Qt::Key_Backspace) deleteSelection();
  else if (event->matches(QKeySequence::Copy)) copySelection();
  else if (event->matches(QKeySequence::Paste)) paste();
  else if (event->matches(QKeySequence::Undo)) doc_->undoStack()->undo();
  else if (event->matches(QKeySequence::Redo)) doc_->undoStack()->redo();
  else if (event->matches(QKeySequence::SelectAll)) {
    for (NodeItem* item : nodes_) item->setSelected(true);
  } else if (event->key() == Qt::Key_Home) frameAll();
  else if ((event->modifiers() & ~Qt::ShiftModifier) == Qt::NoModifier && event->text().size() == 1 &&
           event->text().at(0).isLetterOrNumber())
    openNodeSearch(mapToScene(viewport()->mapFromGlobal(QCursor::pos())), event->text());
  else return QGraphicsView::keyPressEvent(event);
  event->accept();
}

void NodeCanvas::contextMenuEvent(QContextMenuEvent* event) {
  const QPointF at = mapToScene(event->pos());
  QMenu menu(this);
  menu.addAction(tr("Search…"), this, [this, at] { openNodeSearch(at); });
  menu.addSeparator();
  QMap<QString, QMenu*> categories;
  for (const kiln::NodeSchema& s : doc_->schemas()) {
    const QString category = QString::fromStdString(s.category);
    if (!categories.contains(category)) categories.insert(category, menu.addMenu(category));
    const std::string type = s.type;
    categories[category]->addAction(QString::fromStdString(s.display_name), this,
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

void NodeCanvas::setNodeState(const std::string& node, const QString& state, const QString& message) {
  const QString id = QString::fromStdString(node);
  if (state.isEmpty()) states_.remove(id);
  else states_.insert(id, {state, message});
  if (state != "running") progress_.remove(id);
  if (NodeItem* item = nodes_.value(id)) item->setState(state, message, progress_.value(id, -1));
}

void NodeCanvas::setNodeProgress(const std::string& node, qint64 done, qint64 total) {
  const QString id = QString::fromStdString(node);
  if (!states_.contains(id) || total <= 0) return;
  progress_.insert(id, static_cast<double>(done) / static_cast<double>(total));
  states_[id].second = QString::number(done) + "/" + QString::number(total);
  if (NodeItem* item = nodes_.value(id)) item->setState(states_[id].first, states_[id].second, progress_[id]);
}

void NodeCanvas::showProblems(const std::vector<kiln::WorkflowProblem>& problems) {
  problems_.clear();
  for (const auto& p : problems)
    if (!p.node.empty()) {
      QString& text = problems_[QString::fromStdString(p.node)];
      text += (text.isEmpty() ? "" : "; ") + QString::fromStdString(p.message);
    }
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it) it.value()->setProblem(problems_.value(it.key()));
}

}  // namespace kiln::ui
