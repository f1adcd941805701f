#include "app/main_window.h"

#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QtQml/qqmlextensionplugin.h>

#include "app/app_controller.h"

Q_IMPORT_QML_PLUGIN(PagedChatPlugin)

QQuickWindow* loadMainWindow(QQmlApplicationEngine& engine, AppController* controller) {
  if (QQuickStyle::name().isEmpty()) QQuickStyle::setStyle(QStringLiteral("Material"));
  engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
  engine.setInitialProperties({{QStringLiteral("app"), QVariant::fromValue(controller)}});
  engine.load(QUrl(QStringLiteral("qrc:/qt/qml/PagedChat/Main.qml")));
  if (engine.rootObjects().isEmpty()) return nullptr;
  return qobject_cast<QQuickWindow*>(engine.rootObjects().constFirst());
}
