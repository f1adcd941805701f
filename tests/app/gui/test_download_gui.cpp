// A fresh install in the real window (offscreen), against a stand-in Hugging Face hub
// (tests/js/fake_hub.mjs): with no model on the machine the panes welcome the user (no load
// error) with Download and Open; Download opens the dialog; a search lists the hub's GGUF
// repositories, a pasted repository its files with the recommended one chosen; the download
// shows progress, lands in the models folder with the hub's bytes, and "Load it" loads it, after
// which the pane invites a message (the model has a chat format, so no story-model hint). The
// downloaded model is then listed under "On this computer". Screenshots: welcome.png,
// download-dialog.png.
#include <QCryptographicHash>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QTest>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"
#include "app/controllers/download_controller.h"
#include "app/main_window.h"
#include "fake_hub.h"
#include "gui_test_util.h"

using apptest::click;
using apptest::findItem;
using apptest::findObject;
using apptest::findVisibleItem;
using apptest::waitForFrame;
using testhub::sha256;

class TestDownloadGui : public QObject {
  Q_OBJECT

 private slots:
  void welcomeDownloadAndLoad();
};

void TestDownloadGui::welcomeDownloadAndLoad() {
  const QString tiny = testpaths::modelFile("arch/qwen3-tiny.gguf");
  REQUIRE_MODEL_FILE(tiny);
  testhub::FakeHub hub;
  QVERIFY(hub.addFile("acme/tiny-GGUF", "tiny-Q4_K_M.gguf", tiny));
  QVERIFY(hub.addFile("acme/tiny-GGUF", "tiny-Q8_0.gguf", {}, 400000));
  QVERIFY(hub.addFile("acme/other-GGUF", "other-Q4_0.gguf", {}, 1000));
  QVERIFY(hub.setSettings(R"({"downloads": {"acme/tiny-GGUF": 10, "acme/other-GGUF": 5}})"));
  const QString why = hub.start();
  if (!why.isEmpty()) {
    if (testpaths::inCI()) QFAIL(qPrintable(why));
    QSKIP(qPrintable(why));
  }
  QTemporaryDir data, xdg;
  qputenv("HF_ENDPOINT", hub.endpoint().toUtf8());
  qunsetenv("HF_TOKEN");
  qputenv("HF_HOME", (xdg.path() + "/hf").toUtf8());
  qputenv("XDG_DATA_HOME", xdg.path().toUtf8());

  // A packaged first start: the compiled-in default model is not on this machine.
  AppOptions options;
  options.dataDir = data.path();
  options.modelPath = data.path() + "/no-such-default-model";
  options.modelGiven = false;
  AppController controller(options);
  controller.start();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QQuickItem* root = window->contentItem();
  QTRY_VERIFY(findVisibleItem(root, QStringLiteral("paneWelcome")));
  QVERIFY(controller.engine()->loadError().isEmpty());  // nothing was tried: no "could not be loaded"
  QVERIFY(!controller.engine()->isLoading());
  QVERIFY(!findVisibleItem(root, QStringLiteral("emptyPaneHint")));
  QVERIFY(waitForFrame(window));
  apptest::saveScreenshot(window, QStringLiteral("welcome.png"));

  // Download a model…: the dialog.
  QVERIFY(click(window, findVisibleItem(root, QStringLiteral("welcomeDownload"))));
  QObject* dialog = findObject(window, QStringLiteral("downloadDialog"));
  QVERIFY(dialog);
  QTRY_VERIFY(dialog->property("opened").toBool());
  DownloadController* downloads = controller.downloads();
  QCOMPARE(downloads->modelsFolder(), xdg.path() + "/PagedChat/models");

  // A search: the hub's GGUF repositories, most downloaded first.
  QQuickItem* query = findVisibleItem(root, QStringLiteral("downloadQuery"));
  QVERIFY(query);
  QVERIFY(click(window, query));
  query->setProperty("text", QStringLiteral("GGUF"));
  QTest::keyClick(window, Qt::Key_Return);
  QTRY_COMPARE_WITH_TIMEOUT(downloads->results().size(), 2, 20000);
  QCOMPARE(downloads->results().at(0).toMap().value("id").toString(), QStringLiteral("acme/tiny-GGUF"));
  QTRY_VERIFY(findVisibleItem(root, QStringLiteral("downloadResults")));

  // A pasted repository address: its files, the recommended one chosen.
  query->setProperty("text", QStringLiteral("https://huggingface.co/acme/tiny-GGUF"));
  QVERIFY(click(window, findVisibleItem(root, QStringLiteral("downloadSearchButton"))));
  QTRY_COMPARE_WITH_TIMEOUT(downloads->files().size(), 2, 20000);
  QCOMPARE(downloads->repo(), QStringLiteral("acme/tiny-GGUF"));
  const int recommended = downloads->recommendedIndex();
  QVERIFY(recommended >= 0);
  QCOMPARE(downloads->files().at(recommended).toMap().value("label").toString(), QStringLiteral("Q4_K_M"));
  QTRY_COMPARE(dialog->property("chosen").toInt(), recommended);
  QVERIFY(waitForFrame(window));
  apptest::saveScreenshot(window, QStringLiteral("download-dialog.png"));

  // Download: progress, then the checked file in the models folder.
  QVERIFY(click(window, findVisibleItem(root, QStringLiteral("downloadButton"))));
  QTRY_VERIFY_WITH_TIMEOUT(!downloads->downloadedPath().isEmpty(), 60000);
  QCOMPARE(downloads->errorText(), QString());
  const QString path = xdg.path() + "/PagedChat/models/acme/tiny-GGUF/tiny-Q4_K_M.gguf";
  QCOMPARE(downloads->downloadedPath(), path);
  QCOMPARE(sha256(path), sha256(tiny));
  QCOMPARE(downloads->localModels().size(), 1);
  QCOMPARE(downloads->localModels().at(0).toMap().value("path").toString(), path);
  // ... and the dialog shows it (a list sized by its rows: one of height 0 would make none).
  QQuickItem* local = findVisibleItem(root, QStringLiteral("localModels"));
  QVERIFY(local);
  QTRY_COMPARE(local->property("count").toInt(), 1);
  QVERIFY(local->height() > 20);

  // Load it: the model loads, the welcome goes, the pane invites a message.
  QTRY_VERIFY(findVisibleItem(root, QStringLiteral("loadDownloadedButton")));
  QVERIFY(click(window, findVisibleItem(root, QStringLiteral("loadDownloadedButton"))));
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);
  QCOMPARE(controller.engine()->modelPath(), path);
  QTRY_VERIFY(!dialog->property("visible").toBool());
  QTRY_VERIFY(!findVisibleItem(root, QStringLiteral("paneWelcome")));
  QQuickItem* hint = findVisibleItem(root, QStringLiteral("emptyPaneHint"));
  QVERIFY(hint);
  QVERIFY2(!hint->property("text").toString().contains("continues"), qPrintable(hint->property("text").toString()));
  QVERIFY(!controller.engine()->continuesText());

  // A story model (no chat format): the hint says it continues the text.
  controller.models()->openModel(testpaths::stories260K());
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady() && controller.engine()->continuesText(), 60000);
  QTRY_VERIFY(
      findVisibleItem(root, QStringLiteral("emptyPaneHint"))->property("text").toString().contains("continues"));
}

QTEST_MAIN(TestDownloadGui)
#include "test_download_gui.moc"
