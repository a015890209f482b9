// The memory dock: the device and its use, pinned host memory, the loaded models'
// components with where their weights rest, and the workflow result cache, live.
#pragma once

#include <QWidget>

#include "engine_bridge.h"

class QTreeWidget;

namespace kiln::ui {

class MemoryPanel : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryPanel(QWidget* parent = nullptr);

  void showMemory(const app::MemorySnapshot& memory);
  const app::MemorySnapshot& memory() const noexcept { return memory_; }
  QTreeWidget* tree() const { return tree_; }

 protected:
  void changeEvent(QEvent* event) override;

 private:
  QTreeWidget* tree_ = nullptr;
  app::MemorySnapshot memory_;
};

}  // namespace kiln::ui
