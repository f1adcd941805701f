// pagedchat: the desktop chat application.
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickWindow>

#include <cstdio>
#include <memory>

#include "app/app_controller.h"
#include "app/app_options.h"
#include "app/main_window.h"

int main(int argc, char** argv) {
  QGuiApplication app(argc, argv);
  QGuiApplication::setApplicationName(QStringLiteral("PagedChat"));
  QGuiApplication::setApplicationVersion(QStringLiteral(PAGEDCHAT_VERSION));

  const AppOptions options = parseAppOptions(QGuiApplication::arguments());
  std::unique_ptr<AppController> controller;
  try {
    controller = std::make_unique<AppController>(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pagedchat: %s\n", e.what());
    return 1;
  }
  controller->start();

  QQmlApplicationEngine engine;
  if (!loadMainWindow(engine, controller.get())) return 1;
  return QGuiApplication::exec();
}
