// BlockMapItem: the engine view's KV-cache block map, painted in one item.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QColor>
#include <QPointer>
#include <QQuickPaintedItem>
#include <QVariantList>

class EngineMonitor;

/// Paints one square cell per KV-cache block of `monitor` (an EngineMonitor), row by row, sized to
/// fill the item: a block in use takes the colour of the pane owning it (paneColors[pane - 1],
/// otherColor for a request without a pane), a shared prefix block (ref count > 1) carries a
/// dark corner mark, a free block kept in the prefix cache is drawn as an outlined cell in
/// cachedColor, and a free block in freeColor. One item and one paint pass however many blocks
/// there are, repainted when the monitor's snapshot changes. When one cell per block would be
/// smaller than kMinCell pixels (a cache of 20 000+ blocks in a small window), each cell stands
/// for blocksPerCell consecutive blocks and shows them as a bar chart: from the bottom, the share
/// in use (in the colour of the pane holding most of them), then the share kept in the prefix
/// cache, the rest free.
class BlockMapItem : public QQuickPaintedItem {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QObject* monitor READ monitor WRITE setMonitor NOTIFY monitorChanged)
  Q_PROPERTY(QVariantList paneColors READ paneColors WRITE setPaneColors NOTIFY styleChanged)
  Q_PROPERTY(QColor otherColor MEMBER otherColor_ NOTIFY styleChanged)
  Q_PROPERTY(QColor freeColor MEMBER freeColor_ NOTIFY styleChanged)
  Q_PROPERTY(QColor cachedColor MEMBER cachedColor_ NOTIFY styleChanged)
  Q_PROPERTY(QColor sharedMarkColor MEMBER sharedMarkColor_ NOTIFY styleChanged)
  /// Side of one cell in pixels, and the number of columns, as last laid out.
  Q_PROPERTY(double cellSize READ cellSize NOTIFY layoutChanged)
  Q_PROPERTY(int columns READ columns NOTIFY layoutChanged)
  /// Consecutive blocks one cell stands for (1 while a cell per block is at least kMinCell px).
  Q_PROPERTY(int blocksPerCell READ blocksPerCell NOTIFY layoutChanged)

 public:
  static constexpr double kMinCell = 4.0;

  explicit BlockMapItem(QQuickItem* parent = nullptr);

  QObject* monitor() const;
  void setMonitor(QObject* monitor);
  QVariantList paneColors() const { return paneColors_; }
  void setPaneColors(const QVariantList& colors);
  double cellSize() const { return cell_; }
  int columns() const { return columns_; }
  int blocksPerCell() const { return blocksPerCell_; }

  /// The block under item position (x, y) (the first of its cell's), or -1.
  Q_INVOKABLE int blockAt(double x, double y) const;
  /// The colour block `block` is painted with (its fill).
  Q_INVOKABLE QColor colorOf(int block) const;

  void paint(QPainter* painter) override;

 signals:
  void monitorChanged();
  void styleChanged();
  void layoutChanged();

 private:
  void relayout();
  /// paint() when a cell stands for several blocks (blocksPerCell > 1): a bar chart per cell.
  void paintAggregated(QPainter* painter, double side, const QList<QColor>& paneColors);

  QPointer<EngineMonitor> monitor_;
  QVariantList paneColors_;
  QColor otherColor_{0x78, 0x90, 0x9c};
  QColor freeColor_{0xe0, 0xe0, 0xe0};
  QColor cachedColor_{0x9c, 0xcc, 0x65};
  QColor sharedMarkColor_{0x21, 0x21, 0x21};
  double cell_ = 0.0;
  int columns_ = 0;
  int blocksPerCell_ = 1;
};
