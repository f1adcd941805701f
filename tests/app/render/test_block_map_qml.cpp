// Qt Quick Test runner for the block-map component (tests/app/render/qml_blockmap/tst_block_map.qml): the QML
// module PagedChat is linked in, and `testMonitor`, an EngineMonitor holding a known snapshot of
// 64 blocks, is put in the root context.
#include <QtQml/qqmlextensionplugin.h>
#include <QQmlContext>
#include <QQmlEngine>
#include <QtQuickTest>

#include "app/controllers/engine_monitor.h"

Q_IMPORT_QML_PLUGIN(PagedChatPlugin)

/// Gives the QML tests their module path and a monitor with a fixed snapshot.
class Setup : public QObject {
  Q_OBJECT

 public slots:
  void qmlEngineAvailable(QQmlEngine* engine) {
    engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
    auto* monitor = new EngineMonitor(nullptr, nullptr, engine);
    EngineSnapshot s;
    constexpr int n = 64;
    s.totalBlocks = n;
    s.numRunning = 1;
    s.usedBlocks = 2;
    s.sharedBlocks = 1;
    s.cachedBlocks = 1;
    s.freeBlocks = n - 3;
    s.requests = {EngineRequestInfo{QStringLiteral("req-1"), true, 20, 20, 3, 2}};
    s.blockOwner = QList<qint32>(n, -1);
    s.blockFlags = QByteArray(n, 0);
    s.blockOwner[0] = s.blockOwner[1] = 0;
    s.blockFlags[0] = char(EngineSnapshot::kUsed | EngineSnapshot::kShared | EngineSnapshot::kCached);
    s.blockFlags[1] = char(EngineSnapshot::kUsed);
    s.blockFlags[2] = char(EngineSnapshot::kCached);
    monitor->setSnapshot(s);
    engine->rootContext()->setContextProperty(QStringLiteral("testMonitor"), monitor);
  }
};

QUICK_TEST_MAIN_WITH_SETUP(block_map_qml, Setup)
#include "test_block_map_qml.moc"
