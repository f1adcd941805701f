#include "app/render/block_map_item.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

#include "app/controllers/engine_monitor.h"

BlockMapItem::BlockMapItem(QQuickItem* parent) : QQuickPaintedItem(parent) {
  setAntialiasing(false);
  connect(this, &QQuickItem::widthChanged, this, &BlockMapItem::relayout);
  connect(this, &QQuickItem::heightChanged, this, &BlockMapItem::relayout);
  connect(this, &BlockMapItem::styleChanged, this, [this] { update(); });
}

QObject* BlockMapItem::monitor() const { return monitor_.data(); }

void BlockMapItem::setMonitor(QObject* monitor) {
  auto* m = qobject_cast<EngineMonitor*>(monitor);
  if (m == monitor_) return;
  if (monitor_) monitor_->disconnect(this);
  monitor_ = m;
  if (monitor_) connect(monitor_, &EngineMonitor::snapshotChanged, this, &BlockMapItem::relayout);
  relayout();
  emit monitorChanged();
}

void BlockMapItem::setPaneColors(const QVariantList& colors) {
  paneColors_ = colors;
  emit styleChanged();
}

namespace {
// The largest square cell with which `cells` cells fit a w x h item, row by row (at least 1 px).
double fittingCell(int cells, double w, double h) {
  double cell = std::sqrt(w * h / cells);
  while (cell > 1.0) {
    const int cols = std::max(1, static_cast<int>(w / cell));
    const int rows = (cells + cols - 1) / cols;
    if (rows * cell <= h) break;
    cell *= 0.95;
  }
  return std::max(1.0, cell);
}
}  // namespace

void BlockMapItem::relayout() {
  const int n = monitor_ ? monitor_->totalBlocks() : 0;
  double cell = 0.0;
  int columns = 0, perCell = 1;
  if (n > 0 && width() > 0 && height() > 0) {
    cell = fittingCell(n, width(), height());
    if (cell < kMinCell) {
      // Too many blocks for a readable cell each: a cell of kMinCell px stands for several.
      const int maxCells = std::max(1, static_cast<int>(width() / kMinCell) * static_cast<int>(height() / kMinCell));
      perCell = (n + maxCells - 1) / maxCells;
      cell = fittingCell((n + perCell - 1) / perCell, width(), height());
    }
    columns = std::max(1, static_cast<int>(width() / cell));
  }
  if (cell != cell_ || columns != columns_ || perCell != blocksPerCell_) {
    cell_ = cell;
    columns_ = columns;
    blocksPerCell_ = perCell;
    emit layoutChanged();
  }
  update();
}

int BlockMapItem::blockAt(double x, double y) const {
  if (!monitor_ || columns_ <= 0 || cell_ <= 0 || x < 0 || y < 0) return -1;
  const int col = static_cast<int>(x / cell_), row = static_cast<int>(y / cell_);
  if (col >= columns_) return -1;
  const int block = (row * columns_ + col) * blocksPerCell_;
  return block < monitor_->totalBlocks() ? block : -1;
}

QColor BlockMapItem::colorOf(int block) const {
  if (!monitor_) return freeColor_;
  const int flags = monitor_->blockFlags(block);
  if (flags & EngineSnapshot::kUsed) {
    const int pane = monitor_->blockPane(block);
    if (pane >= 1 && pane <= paneColors_.size()) return paneColors_.at(pane - 1).value<QColor>();
    return otherColor_;
  }
  return (flags & EngineSnapshot::kCached) ? cachedColor_ : freeColor_;
}

void BlockMapItem::paint(QPainter* painter) {
  if (!monitor_ || columns_ <= 0) return;
  const int n = monitor_->totalBlocks();
  const QByteArray& flags = monitor_->blockFlagBytes();
  const QList<qint8>& panes = monitor_->blockPanes();
  // A gap between cells once they are large enough to show one.
  const double gap = cell_ >= 6 ? 1.0 : 0.0;
  const double side = cell_ - gap;
  QList<QColor> paneColors;
  for (const QVariant& v : paneColors_) paneColors.append(v.value<QColor>());
  painter->setPen(Qt::NoPen);
  if (blocksPerCell_ > 1) {
    paintAggregated(painter, side, paneColors);
    return;
  }
  for (int b = 0; b < n && b < flags.size(); ++b) {
    const double x = (b % columns_) * cell_, y = (b / columns_) * cell_;
    const QRectF r(x, y, side, side);
    const quint8 f = static_cast<quint8>(flags.at(b));
    if (f & EngineSnapshot::kUsed) {
      const int pane = b < panes.size() ? panes.at(b) : 0;
      painter->fillRect(r, pane >= 1 && pane <= paneColors.size() ? paneColors.at(pane - 1) : otherColor_);
      if ((f & EngineSnapshot::kShared) && side >= 3) {
        // A shared prefix block: a dark triangle in the top-left corner.
        const double m = std::max(2.0, side * 0.5);
        const QPointF tri[3] = {r.topLeft(), r.topLeft() + QPointF(m, 0), r.topLeft() + QPointF(0, m)};
        painter->setBrush(sharedMarkColor_);
        painter->drawPolygon(tri, 3);
        painter->setBrush(Qt::NoBrush);
      }
    } else if (f & EngineSnapshot::kCached) {
      painter->fillRect(r, freeColor_);
      if (side >= 4) {
        painter->setPen(QPen(cachedColor_, std::max(1.0, side / 6)));
        const double inset = std::max(0.5, side / 12);
        painter->drawRect(r.adjusted(inset, inset, -inset, -inset));
        painter->setPen(Qt::NoPen);
      } else {
        painter->fillRect(r, cachedColor_);
      }
    } else {
      painter->fillRect(r, freeColor_);
    }
  }
}

void BlockMapItem::paintAggregated(QPainter* painter, double side, const QList<QColor>& paneColors) {
  const int n = std::min<int>(monitor_->totalBlocks(), static_cast<int>(monitor_->blockFlagBytes().size()));
  const QByteArray& flags = monitor_->blockFlagBytes();
  const QList<qint8>& panes = monitor_->blockPanes();
  const int k = blocksPerCell_;
  QList<int> perPane(paneColors.size() + 1, 0);  // [0]: requests without a pane
  for (int c = 0; c * k < n; ++c) {
    const int first = c * k, last = std::min(n, first + k);
    int used = 0, cached = 0;
    std::fill(perPane.begin(), perPane.end(), 0);
    for (int b = first; b < last; ++b) {
      const quint8 f = static_cast<quint8>(flags.at(b));
      if (f & EngineSnapshot::kUsed) {
        ++used;
        const int pane = b < panes.size() ? panes.at(b) : 0;
        ++perPane[pane >= 1 && pane <= paneColors.size() ? pane : 0];
      } else if (f & EngineSnapshot::kCached) {
        ++cached;
      }
    }
    const double x = (c % columns_) * cell_, y = (c / columns_) * cell_;
    const QRectF r(x, y, side, side);
    painter->fillRect(r, freeColor_);
    const int count = last - first;
    const double usedH = side * used / count, cachedH = side * cached / count;
    if (used > 0) {
      const int top = static_cast<int>(std::max_element(perPane.begin(), perPane.end()) - perPane.begin());
      painter->fillRect(QRectF(x, y + side - usedH, side, usedH), top == 0 ? otherColor_ : paneColors.at(top - 1));
    }
    if (cached > 0) painter->fillRect(QRectF(x, y + side - usedH - cachedH, side, cachedH), cachedColor_);
  }
}
