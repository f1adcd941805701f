// Runs the Qt Quick Tests in tests/app/qml (tst_*.qml) against the app's QML module "PagedChat".
#include <QQmlEngine>
#include <QtQml/qqmlextensionplugin.h>
#include <QtQuickTest>

Q_IMPORT_QML_PLUGIN(PagedChatPlugin)

/// Makes the static PagedChat module importable in the test's engine.
class Setup : public QObject {
  Q_OBJECT
 public slots:
  void qmlEngineAvailable(QQmlEngine* engine) { engine->addImportPath(QStringLiteral("qrc:/qt/qml")); }
};

QUICK_TEST_MAIN_WITH_SETUP(pagedchat_qml_components, Setup)
#include "test_qml_components.moc"
