// Screenshots of the real window with three panes of real conversations (stories260K), in the
// light and the dark theme, written to <build>/screenshots/light.png and dark.png (the README
// shows copies in docs/). CTest runs it under xvfb-run with the xcb platform when xvfb-run is
// installed: the offscreen platform's software renderer leaves out Material's shadowed parts
// (tool bar, highlighted buttons).
#include <QDir>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QTest>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"
#include "app/main_window.h"
#include "app/panes/pane_settings.h"
#include "app/panes/pane_state.h"
#include "app_test_util.h"
#include "gui_test_util.h"

using apptest::optionsFor;

class TestScreenshots : public QObject {
  Q_OBJECT

 private slots:
  void screenshots();
};

void TestScreenshots::screenshots() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppController controller(optionsFor(dir.path()));
  controller.appearance()->setTheme(QStringLiteral("light"));
  controller.start();
  PaneListModel* panes = controller.panes();
  QVERIFY(panes->addPane());
  QVERIFY(panes->addPane());
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  window->resize(1280, 800);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);

  // Real conversations: each pane its own settings, one prompt sent to all, then a second turn
  // with Markdown and code in pane 2 and Korean in pane 3.
  const QList<QVariantMap> settings = {{{"temperature", "0.2"}, {"maxTokens", "60"}, {"seed", "1"}},
                                       {{"temperature", "0.9"}, {"maxTokens", "50"}, {"seed", "7"}},
                                       {{"temperature", "1.2"}, {"maxTokens", "60"}, {"seed", "3"}}};
  for (int i = 0; i < 3; ++i) QVERIFY(panes->paneAt(i)->settings()->apply(settings[i]).isEmpty());
  QCOMPARE(panes->sendToAll(QStringLiteral("Once upon a time")), 3);
  QTRY_VERIFY_WITH_TIMEOUT(!panes->anyBusy(), 60000);
  QVERIFY(panes->paneAt(1)->sendText(
      QStringLiteral("Tell the story of **Lily** ([notes](https://example.org)):\n\n| who | has |\n|---|---|\n| Lily | "
                     "a dog |\n| Tom | a `red` ball |\n\n```python\nprint(\"The end\")\n```")));
  QVERIFY(panes->paneAt(2)->sendText(QStringLiteral("옛날 옛적에 작은 고양이가 살았어요. Tom saw the cat.")));
  QTRY_VERIFY_WITH_TIMEOUT(!panes->anyBusy(), 60000);
  panes->paneAt(0)->setInputText(QStringLiteral("The little dog"));
  panes->setCurrentIndex(0);

  const QString outDir = QStringLiteral(PAGEDCHAT_BUILD_DIR "/screenshots");
  QVERIFY(QDir().mkpath(outDir));
  for (const QString& theme : {QStringLiteral("light"), QStringLiteral("dark")}) {
    controller.appearance()->setTheme(theme);
    QVERIFY(apptest::waitForFrame(window));  // bindings and layouts settled
    const QImage image = window->grabWindow();
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1280, 800) * window->devicePixelRatio());
    // The theme shows: the window background is light or dark.
    const QColor corner = image.pixelColor(4, image.height() / 2);
    QVERIFY2(theme == QLatin1String("dark") ? corner.lightnessF() < 0.3 : corner.lightnessF() > 0.8,
             qPrintable(corner.name()));
    const QString file = outDir + QLatin1Char('/') + theme + QStringLiteral(".png");
    QVERIFY(image.save(file));
    qInfo("screenshot: %s (%s)", qPrintable(file), qPrintable(QGuiApplication::platformName()));
  }
}

QTEST_MAIN(TestScreenshots)
#include "test_screenshots.moc"
