// pagedchat: the desktop chat application.
#include <QCoreApplication>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickWindow>

#include <cstdio>
#include <memory>

#include "app/app_controller.h"
#include "app/app_options.h"
#include "app/automation.h"
#include "app/main_window.h"
#include "app/store_health.h"
#include "app/translator.h"
#include "app/unix_signal_quitter.h"

namespace {
void setApplicationNames() {
  QCoreApplication::setApplicationName(QStringLiteral("PagedChat"));
  QCoreApplication::setApplicationVersion(QStringLiteral(PAGEDCHAT_VERSION));
}
}  // namespace

int main(int argc, char** argv) {
  AppOptions options;
  {
    // The command line first, with no GUI: --help, --version and errors print (and exit) even
    // where no display can be opened.
    QCoreApplication parsing(argc, argv);
    setApplicationNames();
    options = parseAppOptions(QCoreApplication::arguments());
  }

  QGuiApplication app(argc, argv);
  setApplicationNames();
  // SIGTERM/SIGINT/SIGHUP quit through the event loop: the controller's destructor then stops
  // every generation and saves the partial replies.
  UnixSignalQuitter signalQuitter;
  // The UI language: the system locale's, or the one chosen in the settings (also for the error
  // window below, shown when the controller cannot start).
  Translator translator(AppController::settingsFile(options.dataDir));

  std::unique_ptr<AppController> controller;
  try {
    controller = std::make_unique<AppController>(options, nullptr, &translator);
  } catch (const std::exception& e) {
    // A database problem in plain words first, then its technical detail (never SQL).
    const auto* storeError = dynamic_cast<const StoreError*>(&e);
    const QString details = storeError ? StoreHealth::userMessage(*storeError) + QStringLiteral("\n\n") +
                                             StoreHealth::technicalDetail(*storeError)
                                       : QString::fromUtf8(e.what());
    std::fprintf(stderr, "pagedchat: %s\n", qPrintable(details));
    QQmlApplicationEngine errorEngine;
    const QString headline = QCoreApplication::translate("main", "PagedChat could not open its chat data.");
    const QString hint = QCoreApplication::translate(
        "main", "Check that folder, or start PagedChat with --data-dir DIR to use another one.");
    if (loadErrorWindow(errorEngine, headline, details + QStringLiteral("\n\n") + hint)) QGuiApplication::exec();
    return 1;
  }
  controller->start();
  if (options.automation) new Automation(controller.get());  // a test drives the app (hidden option)

  QQmlApplicationEngine engine;
  if (!loadMainWindow(engine, controller.get())) return 1;
  return QGuiApplication::exec();
}
