// pagedchat: the desktop chat application.
#include <QCoreApplication>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickWindow>

#include <memory>

#include "app/app_controller.h"
#include "app/app_options.h"
#include "app/app_startup.h"
#include "app/automation.h"
#include "app/main_window.h"
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

  // The chat data cannot be opened: the error window says why, with Try again when it may pass.
  const std::unique_ptr<AppController> controller = startAppController(
      options, &translator, [](const QString& headline, const QString& details, bool retryable) {
        QQmlApplicationEngine errorEngine;
        if (!loadErrorWindow(errorEngine, headline, details, retryable)) return false;
        return QGuiApplication::exec() == kErrorWindowRetryExitCode;
      });
  if (!controller) return 1;
  controller->start();
  if (options.automation) new Automation(controller.get());  // a test drives the app (hidden option)

  QQmlApplicationEngine engine;
  if (!loadMainWindow(engine, controller.get())) return 1;
  return QGuiApplication::exec();
}
