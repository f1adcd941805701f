// The engine view's block map: BlockMapItem lays out one cell per KV block to fill the item and
// paints each with its state (pane colour, shared mark, cached outline, free), read back from a
// grabbed image; EngineView.qml loads (offscreen, no warnings) and shows a monitor's numbers.
#include <QtQml/qqmlextensionplugin.h>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTest>

#include "app/controllers/engine_monitor.h"
#include "app/render/block_map_item.h"
#include "gui_test_util.h"

Q_IMPORT_QML_PLUGIN(PagedChatPlugin)

namespace {

/// `n` blocks: block 0 used and shared, 1 used, 2 free but cached, the rest free; 2 requests.
EngineSnapshot snapshotOf(int n) {
  EngineSnapshot s;
  s.totalBlocks = n;
  s.numRunning = 2;
  s.usedBlocks = 2;
  s.sharedBlocks = 1;
  s.cachedBlocks = 1;
  s.freeBlocks = n - 3;
  s.prefixCacheQueries = 100;
  s.prefixCacheHits = 25;
  s.requests = {EngineRequestInfo{QStringLiteral("req-1"), true, 10, 10, 5, 2},
                EngineRequestInfo{QStringLiteral("req-2"), true, 10, 10, 5, 1}};
  s.blockOwner = QList<qint32>(n, -1);
  s.blockFlags = QByteArray(n, 0);
  s.blockOwner[0] = 0;
  s.blockFlags[0] = char(EngineSnapshot::kUsed | EngineSnapshot::kShared | EngineSnapshot::kCached);
  s.blockOwner[1] = 1;
  s.blockFlags[1] = char(EngineSnapshot::kUsed);
  s.blockFlags[2] = char(EngineSnapshot::kCached);
  return s;
}

}  // namespace

class TestBlockMap : public QObject {
  Q_OBJECT

 private slots:
  void paintsEveryBlockState();
  void thousandsOfBlocksFit();
  void tensOfThousandsAggregate();
  void engineViewLoads();
};

void TestBlockMap::paintsEveryBlockState() {
  EngineMonitor monitor(nullptr, nullptr);
  monitor.setSnapshot(snapshotOf(64));
  QQuickWindow window;
  window.resize(160, 160);
  BlockMapItem map(window.contentItem());
  map.setSize(QSizeF(160, 160));
  map.setMonitor(&monitor);
  map.setPaneColors({QColor(Qt::blue), QColor(Qt::red)});
  QCOMPARE(map.columns(), 8);  // 64 square cells in a square: 8 x 8 of 20 px
  QCOMPARE(map.cellSize(), 20.0);
  QCOMPARE(map.blockAt(5, 5), 0);
  QCOMPARE(map.blockAt(25, 5), 1);
  QCOMPARE(map.blockAt(5, 25), 8);
  QCOMPARE(map.blockAt(159, 159), 63);
  QCOMPARE(map.blockAt(-1, 0), -1);
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  const QImage image = window.grabWindow();
  QVERIFY(!image.isNull());
  const qreal dpr = image.devicePixelRatio();
  auto pixel = [&](int x, int y) { return image.pixelColor(QPoint(int(x * dpr), int(y * dpr))); };
  // Without panes every request is "other"; the item's colours otherwise.
  QCOMPARE(map.colorOf(0), map.property("otherColor").value<QColor>());
  QCOMPARE(pixel(15, 15), map.property("otherColor").value<QColor>());     // block 0's fill
  QCOMPARE(pixel(2, 2), map.property("sharedMarkColor").value<QColor>());  // its shared corner mark
  QCOMPARE(pixel(35, 15), map.property("otherColor").value<QColor>());     // block 1, not shared
  QCOMPARE(pixel(22, 2).rgb(), map.property("otherColor").value<QColor>().rgb());
  QCOMPARE(pixel(50, 10), map.property("freeColor").value<QColor>());    // block 2: cached, inside
  QCOMPARE(pixel(42, 10), map.property("cachedColor").value<QColor>());  // its outline
  QCOMPARE(pixel(70, 10), map.property("freeColor").value<QColor>());    // block 3: free
  QCOMPARE(map.colorOf(2), map.property("cachedColor").value<QColor>());
  QCOMPARE(map.colorOf(3), map.property("freeColor").value<QColor>());

  // A new snapshot repaints: block 3 in use now.
  EngineSnapshot next = snapshotOf(64);
  next.blockOwner[3] = 1;
  next.blockFlags[3] = char(EngineSnapshot::kUsed);
  monitor.setSnapshot(next);
  QTRY_COMPARE(window.grabWindow().pixelColor(QPoint(int(70 * dpr), int(10 * dpr))),
               map.property("otherColor").value<QColor>());
}

void TestBlockMap::thousandsOfBlocksFit() {
  EngineMonitor monitor(nullptr, nullptr);
  monitor.setSnapshot(snapshotOf(5000));
  BlockMapItem map;
  map.setSize(QSizeF(600, 200));
  map.setMonitor(&monitor);
  QVERIFY(map.columns() > 0);
  const int rows = (5000 + map.columns() - 1) / map.columns();
  QVERIFY(map.columns() * map.cellSize() <= 600.0);
  QVERIFY2(rows * map.cellSize() <= 200.0, qPrintable(QString::number(map.cellSize())));
  QVERIFY(map.cellSize() >= 4.0);  // as large as fits: 5000 cells on 120 000 px^2
  QCOMPARE(map.blockAt(599, 199) < 5000, true);
}

// 24 000 blocks on 600 x 200 px: a cell per block would be under 4 px, so each cell stands for
// several blocks, painted as a bar chart of their states.
void TestBlockMap::tensOfThousandsAggregate() {
  const int n = 24000;
  EngineSnapshot s = snapshotOf(n);
  EngineMonitor monitor(nullptr, nullptr);
  monitor.setSnapshot(s);
  QQuickWindow window;
  window.resize(600, 200);
  BlockMapItem map(window.contentItem());
  map.setSize(QSizeF(600, 200));
  map.setMonitor(&monitor);
  map.setPaneColors({QColor(Qt::blue), QColor(Qt::red)});
  const int k = map.blocksPerCell();
  QVERIFY2(k > 1, qPrintable(QString::number(k)));
  QVERIFY(map.cellSize() >= BlockMapItem::kMinCell);
  const int cells = (n + k - 1) / k;
  QVERIFY(map.columns() * map.cellSize() <= 600.0);
  QVERIFY(((cells + map.columns() - 1) / map.columns()) * map.cellSize() <= 200.0);
  QCOMPARE(map.blockAt(0, 0), 0);
  QCOMPARE(map.blockAt(map.cellSize() * 1.5, 1), k);  // the second cell begins at block k
  for (int b = 0; b < k; ++b) {
    s.blockOwner[b] = b < k / 2 ? 0 : -1;  // request 0 (pane 1)
    s.blockFlags[b] = char(b < k / 2 ? EngineSnapshot::kUsed : EngineSnapshot::kCached);
  }
  monitor.setSnapshot(s);
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  const double dpr = window.devicePixelRatio();
  const double side = map.cellSize() - (map.cellSize() >= 6 ? 1 : 0);
  // The first cell: the bottom (half in use; no panes here: "other") in its colour, the top
  // (cached) in cachedColor.
  QTRY_COMPARE(window.grabWindow().pixelColor(QPoint(int(side / 2 * dpr), int((side - 0.5) * dpr))),
               map.property("otherColor").value<QColor>());
  QCOMPARE(window.grabWindow().pixelColor(QPoint(int(side / 2 * dpr), int(0.5 * dpr))),
           map.property("cachedColor").value<QColor>());
  // A cell of free blocks is free.
  QCOMPARE(window.grabWindow().pixelColor(QPoint(int((3 * map.cellSize() + side / 2) * dpr), int(side / 2 * dpr))),
           map.property("freeColor").value<QColor>());
}

void TestBlockMap::engineViewLoads() {
  EngineMonitor monitor(nullptr, nullptr);
  monitor.setSnapshot(snapshotOf(300));
  apptest::warnings().clear();
  apptest::installWarningCollector();
  QQmlApplicationEngine engine;
  engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
  engine.setInitialProperties({{QStringLiteral("monitor"), QVariant::fromValue<QObject*>(&monitor)}});
  engine.load(QUrl(QStringLiteral("qrc:/qt/qml/PagedChat/EngineView.qml")));
  QCOMPARE(engine.rootObjects().size(), 1);
  auto* view = qobject_cast<QQuickItem*>(engine.rootObjects().constFirst());
  QVERIFY(view);
  QQuickWindow window;
  window.resize(800, 600);
  view->setParentItem(window.contentItem());
  view->setSize(QSizeF(800, 600));
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  QTRY_VERIFY(monitor.isActive());  // shown: snapshots are asked for
  auto* map = view->findChild<BlockMapItem*>(QStringLiteral("blockMap"));
  QVERIFY(map);
  QVERIFY(map->cellSize() > 0);
  QCOMPARE(map->monitor(), &monitor);
  auto* summary = view->findChild<QQuickItem*>(QStringLiteral("engineSummary"));
  QVERIFY(summary);
  const QString text = summary->property("text").toString();
  QVERIFY2(text.contains(QLatin1String("2 running")) && text.contains(QLatin1String("25.0%")) &&
               text.contains(QLatin1String("of 300")),
           qPrintable(text));
  QVERIFY(apptest::waitForFrame(&window));
  apptest::removeWarningCollector();
  APPTEST_VERIFY_NO_WARNINGS();
  view->setVisible(false);
  QVERIFY(!monitor.isActive());
}

QTEST_MAIN(TestBlockMap)
#include "test_block_map.moc"
