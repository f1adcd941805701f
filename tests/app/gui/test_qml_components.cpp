// Qt Quick Test for the panes' QML components (tests/app/gui/qml/tst_*.qml) with the real app objects:
// an AppController on a temporary data folder with stories260K, handed to the tests as `app`.
#include <QtQml/qqmlextensionplugin.h>
#include <QQmlContext>
#include <QQmlEngine>
#include <QTemporaryDir>
#include <QtQuickTest>

#include <memory>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"
#include "app_test_util.h"

Q_IMPORT_QML_PLUGIN(PagedChatPlugin)

/// Makes the controller before the QML tests run and gives it to them.
class Setup : public QObject {
  Q_OBJECT

 public slots:
  void qmlEngineAvailable(QQmlEngine* engine) {
    engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
    controller_ = std::make_unique<AppController>(apptest::optionsFor(dataDir_.path()));
    controller_->start();
    engine->rootContext()->setContextProperty(QStringLiteral("app"), controller_.get());
  }
  void cleanupTestCase() { controller_.reset(); }

 private:
  QTemporaryDir dataDir_;
  std::unique_ptr<AppController> controller_;
};

QUICK_TEST_MAIN_WITH_SETUP(test_qml_components, Setup)
#include "test_qml_components.moc"
