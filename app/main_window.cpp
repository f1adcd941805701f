#include "app/main_window.h"

#include <QtQml/qqmlextensionplugin.h>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>

#include "app/controllers/app_controller.h"

Q_IMPORT_QML_PLUGIN(PagedChatPlugin)

namespace {
QQuickWindow* load(QQmlApplicationEngine& engine, const QString& file, const QVariantMap& properties) {
  if (QQuickStyle::name().isEmpty()) QQuickStyle::setStyle(QStringLiteral("Material"));
  engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
  engine.setInitialProperties(properties);
  engine.load(QUrl(QStringLiteral("qrc:/qt/qml/PagedChat/") + file));
  if (engine.rootObjects().isEmpty()) return nullptr;
  return qobject_cast<QQuickWindow*>(engine.rootObjects().constFirst());
}
}  // namespace

QQuickWindow* loadMainWindow(QQmlApplicationEngine& engine, AppController* controller) {
  // A language switch (the tool bar's menu, or app.appearance.language) re-evaluates every qsTr()
  // binding.
  QObject::connect(controller->appearance(), &Appearance::languageChanged, &engine, &QQmlEngine::retranslate);
  return load(engine, QStringLiteral("Main.qml"), {{QStringLiteral("app"), QVariant::fromValue(controller)}});
}

QQuickWindow* loadErrorWindow(QQmlApplicationEngine& engine, const QString& headline, const QString& details,
                              bool retryable) {
  return load(engine, QStringLiteral("ErrorWindow.qml"),
              {{QStringLiteral("headline"), headline},
               {QStringLiteral("details"), details},
               {QStringLiteral("retryExitCode"), retryable ? kErrorWindowRetryExitCode : -1}});
}
