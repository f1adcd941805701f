// pagedchat: the desktop chat application.
#include <QCoreApplication>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QScreen>

#include <algorithm>
#include <memory>

#include "app/app_options.h"
#include "app/app_startup.h"
#include "app/controllers/app_controller.h"
#include "app/main_window.h"
#include "app/translator.h"
#include "app/unix_signal_quitter.h"

#ifdef PAGEDCHAT_APP_AUTOMATION
#include "app/automation.h"
#endif

namespace {
void setApplicationNames() {
  QCoreApplication::setApplicationName(QStringLiteral("PagedChat"));
  QCoreApplication::setApplicationVersion(QStringLiteral(PAGEDCHAT_VERSION));
}
}  // namespace

int main(int argc, char** argv) {
  AppOptions options;
#ifdef PAGEDCHAT_APP_AUTOMATION
  bool automation = false;
#endif
  {
    // The command line first, with no GUI: --help, --version and errors print (and exit) even
    // where no display can be opened.
    QCoreApplication parsing(argc, argv);
    setApplicationNames();
    QStringList arguments = QCoreApplication::arguments();
#ifdef PAGEDCHAT_APP_AUTOMATION
    // pagedchat-automation only (the tests' build of the app): --automation, taken out before the
    // parser, which knows no such option (pagedchat refuses it as unknown).
    automation = arguments.removeAll(QStringLiteral("--automation")) > 0;
#endif
    options = parseAppOptions(arguments);
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
#ifdef PAGEDCHAT_APP_AUTOMATION
  if (automation) new Automation(controller.get());  // a test drives the app (app/automation.h)
#endif

  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, controller.get());
  if (!window) return 1;
  // 1280x800, or the screen's free area where that is smaller (never below the window's minimum):
  // on a small screen the right end of the tool bar was off the screen.
  if (const QScreen* screen = window->screen()) {
    const QSize room = screen->availableSize();
    window->resize(std::max(window->minimumWidth(), std::min(window->width(), room.width())),
                   std::max(window->minimumHeight(), std::min(window->height(), room.height())));
  }
  return QGuiApplication::exec();
}
