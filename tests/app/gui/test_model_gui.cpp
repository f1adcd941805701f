// The model and engine UI in the real main window (offscreen): Ctrl+O opens the model picker with
// the recent models, its Unload button unloads (panes say so, sending is disabled), a recent
// model loads again with progress; Ctrl+, opens the settings dialog whose engine page refuses a
// bad value with a message and applies good ones by a reload; the engine view window shows two
// panes' requests and blocks while they generate. Screenshots go to the build folder
// (screenshots/model-picker.png, engine-settings.png, engine-view.png).
#include <QDir>
#include <QFile>

#include <atomic>

#include <QColor>
#include <QFileInfo>
#include <QFont>
#include <QLocale>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"
#include "app/controllers/engine_monitor.h"
#include "app/controllers/model_controller.h"
#include "app/controllers/recent_models_model.h"
#include "app/engine/engine_worker.h"
#include "app/main_window.h"
#include "app/panes/pane_state.h"
#include "gui_test_util.h"

using apptest::click;
using apptest::findItem;
using apptest::findObject;
using apptest::waitForFrame;

class TestModelGui : public QObject {
  Q_OBJECT

 private slots:
  void pickerSettingsAndEngineView();
  void pickerDetailsAndFolders();
};

void TestModelGui::pickerDetailsAndFolders() {
  // Each recent model says what it is (from its headers: arch/README.md's and stories260K's
  // facts); the picker keeps its place while an entry is added; a Hugging Face folder opens
  // through its config.json; the file dialogs start in the last model's folder.
  const QString hfFolder = testpaths::modelFile(QStringLiteral("arch/llama3-tiny-hf"));
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  REQUIRE_MODEL_FILE(hfFolder);
  QTemporaryDir data;
  AppController controller(apptest::optionsFor(data.path()));
  controller.start();
  apptest::installWarningCollector({QStringLiteral("does not support raise()")});
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  LocalChatBackend* client = controller.engine();
  QTRY_VERIFY_WITH_TIMEOUT(client->isReady(), 60000);
  QObject* picker = findObject(window, QStringLiteral("modelPicker"));
  QVERIFY(picker);
  QMetaObject::invokeMethod(picker, "open");
  QTRY_VERIFY(picker->property("opened").toBool());
  QQuickItem* overlay = window->contentItem();
  const QLocale locale;
  const QString stories = testpaths::stories260K();
  // The details line of the recent entry for `path` (its delegate's `path`).
  auto detailsFor = [&](const QString& path) {
    for (QQuickItem* item : apptest::findVisibleItems(overlay, QStringLiteral("recentModelDetails")))
      for (QQuickItem* a = item; a; a = a->parentItem())
        if (a->property("path").isValid() && a->property("details").isValid())
          if (a->property("path").toString() == QDir::toNativeSeparators(QDir::cleanPath(path)))
            return item->property("text").toString();
    return QString();
  };
  // stories260K: 260 032 float32 parameters, 512 positions, no template.
  QTRY_VERIFY2(detailsFor(stories).contains(QStringLiteral("%1 K parameters").arg(locale.toString(260.032, 'f', 0))),
               qPrintable(detailsFor(stories)));
  QVERIFY2(detailsFor(stories).contains(QStringLiteral("context 512")) &&
               detailsFor(stories).contains(QLatin1String("F32")) &&
               detailsFor(stories).contains(QLatin1String("no chat template")),
           qPrintable(detailsFor(stories)));

  // The Hugging Face folder, opened as the file dialog gives it (its config.json), while the
  // picker is open: it loads the folder, lists the folder, and the picker has not moved.
  auto* pickerItem = picker->property("contentItem").value<QQuickItem*>()->parentItem();
  QVERIFY(pickerItem);
  QVERIFY(waitForFrame(window));
  const QRectF before = apptest::windowRect(pickerItem);
  controller.models()->openModel(hfFolder + QStringLiteral("/config.json"));
  QTRY_VERIFY_WITH_TIMEOUT(client->isReady() && client->modelPath() == QDir::cleanPath(hfFolder), 60000);
  QCOMPARE(controller.models()->recentModels()->count(), 2);
  QCOMPARE(controller.models()->recentModels()->lastModel(), QDir::cleanPath(hfFolder));
  QCOMPARE(controller.models()->recentModels()->lastFolder(), QUrl::fromLocalFile(QFileInfo(hfFolder).absolutePath()));
  QTRY_VERIFY2(detailsFor(hfFolder).contains(QLatin1String("BF16")), qPrintable(detailsFor(hfFolder)));
  QVERIFY2(detailsFor(hfFolder).contains(QStringLiteral("context %1").arg(locale.toString(131072))) &&
               detailsFor(hfFolder).contains(QLatin1String("chat template llama3")) &&
               detailsFor(hfFolder).contains(QStringLiteral("%1 M parameters").arg(locale.toString(8.307008, 'f', 1))),
           qPrintable(detailsFor(hfFolder)));
  QVERIFY(picker->property("visible").toBool());  // not chosen in the picker: it stays open
  QVERIFY(waitForFrame(window));
  QCOMPARE(apptest::windowRect(pickerItem), before);

  // A model chosen in the picker (as its file dialog hands it over) closes it once loaded.
  QVERIFY(QMetaObject::invokeMethod(picker, "loadUrl", Q_ARG(QVariant, QUrl::fromLocalFile(testpaths::stories260K()))));
  QTRY_VERIFY_WITH_TIMEOUT(client->isReady() && client->modelPath() == QDir::cleanPath(testpaths::stories260K()),
                           60000);
  QTRY_VERIFY(!picker->property("visible").toBool());
  // The file dialogs start in the folder the last model came from.
  QObject* fileDialog = picker->findChild<QObject*>(QStringLiteral("modelFileDialog"));
  QVERIFY(fileDialog);
  QCOMPARE(fileDialog->property("currentFolder").toUrl(),
           QUrl::fromLocalFile(QFileInfo(testpaths::stories260K()).absolutePath()));
}

void TestModelGui::pickerSettingsAndEngineView() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir data;
  // The long-context shape, so that a KV cache of the settings' smallest size (1 MiB) is too
  // small for one sequence in the app's 16-bit cache (see the failed reload below).
  AppController controller(apptest::longContextOptions(data.path()));
  controller.start();
  // The offscreen platform cannot raise windows; that is not the app's fault.
  apptest::installWarningCollector({QStringLiteral("does not support raise()")});
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  LocalChatBackend* client = controller.engine();
  QTRY_VERIFY_WITH_TIMEOUT(client->isReady(), 60000);
  QTRY_COMPARE(controller.models()->recentModels()->count(), 1);

  // Ctrl+O: the model picker, listing the loaded model.
  window->requestActivate();
  QTest::keyClick(window, Qt::Key_O, Qt::ControlModifier);
  QObject* picker = findObject(window, QStringLiteral("modelPicker"));
  QVERIFY(picker);
  QTRY_VERIFY(picker->property("opened").toBool());
  QQuickItem* overlay = window->contentItem();  // the root item: popups live in its overlay
  QTRY_VERIFY(findItem(overlay, QStringLiteral("recentModels")));
  QTRY_COMPARE(findItem(overlay, QStringLiteral("recentModels"))->property("count").toInt(), 1);
  QVERIFY(waitForFrame(window));  // opened: its enter transition is over
  apptest::saveScreenshot(window, QStringLiteral("model-picker.png"));

  // Open file… and Open folder… open their dialogs (cancelled here).
  for (const auto& [button, dialogName] :
       {std::pair{"openModelFile", "modelFileDialog"}, std::pair{"openModelFolder", "modelFolderDialog"}}) {
    QQuickItem* b = findItem(overlay, QString::fromLatin1(button));
    QVERIFY(b);
    QVERIFY(click(window, b));
    QObject* dialog = picker->findChild<QObject*>(QString::fromLatin1(dialogName));
    QVERIFY(dialog);
    QTRY_VERIFY(dialog->property("visible").toBool());
    QMetaObject::invokeMethod(dialog, "reject");
    QTRY_VERIFY(!dialog->property("visible").toBool());
  }
  QVERIFY(client->isReady());  // nothing changed

  // Unload: the panes say that no model is loaded, and Send is disabled.
  QQuickItem* unload = findItem(overlay, QStringLiteral("unloadModel"));
  QVERIFY(unload);
  QVERIFY(click(window, unload));
  QTRY_VERIFY(!client->isLoaded());
  QQuickItem* noModel = findItem(window->contentItem(), QStringLiteral("paneNoModel"));
  QVERIFY(noModel);
  QTRY_VERIFY(noModel->isVisible());
  controller.panes()->paneAt(0)->setInputText(QStringLiteral("Hello"));
  QQuickItem* send = findItem(window->contentItem(), QStringLiteral("sendButton"));
  QVERIFY(send);
  QVERIFY(!send->isEnabled());
  QCOMPARE(controller.panes()->paneAt(0)->contextLimit(), 0);  // no model, no context shown

  // Load it again from the recent list: a click on its row.
  QQuickItem* list = findItem(overlay, QStringLiteral("recentModels"));
  auto* row = list->property("contentItem").value<QQuickItem*>()->childItems().value(0);
  QVERIFY(row);
  QVERIFY(click(window, row));
  QTRY_VERIFY_WITH_TIMEOUT(client->isReady(), 60000);
  QTRY_VERIFY(!noModel->isVisible());
  QTRY_VERIFY(send->isEnabled());
  // A model chosen in the picker closes it once loaded.
  QTRY_VERIFY(!picker->property("visible").toBool());
  QTest::keyClick(window, Qt::Key_O, Qt::ControlModifier);
  QTRY_VERIFY(picker->property("opened").toBool());

  // A file that is not a model: the picker says why, and the model loaded before is back.
  const QString notAModel = data.filePath(QStringLiteral("notes.gguf"));
  {
    QFile f(notAModel);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("these are not weights");
  }
  const QString good = client->modelPath();
  controller.models()->openModel(notAModel);
  QQuickItem* loadError = findItem(overlay, QStringLiteral("modelLoadError"));
  QVERIFY(loadError);
  QTRY_VERIFY_WITH_TIMEOUT(loadError->isVisible() && client->isReady(), 60000);
  QVERIFY2(loadError->property("text").toString().contains(QLatin1String("notes.gguf")),
           qPrintable(loadError->property("text").toString()));
  QCOMPARE(client->modelPath(), good);
  QCOMPARE(findItem(overlay, QStringLiteral("modelState"))->property("text").toString(),
           QStringLiteral("Loaded: %1").arg(good));
  QVERIFY(send->isEnabled());
  controller.errors()->clear();
  QMetaObject::invokeMethod(picker, "close");
  QTRY_VERIFY(!picker->property("visible").toBool());

  // Ctrl+,: the settings dialog's engine page.
  QTest::keyClick(window, Qt::Key_Comma, Qt::ControlModifier);
  QObject* settings = findObject(window, QStringLiteral("settingsDialog"));
  QVERIFY(settings);
  QTRY_VERIFY(settings->property("opened").toBool());
  QQuickItem* page = findItem(overlay, QStringLiteral("engineSettingsPage"));
  QVERIFY(page);
  QQuickItem* tabs = findItem(overlay, QStringLiteral("settingsTabs"));  // Appearance comes first
  QVERIFY(tabs);
  tabs->setProperty("currentIndex", 1);
  QTRY_VERIFY(page->isVisible());
  findItem(page, QStringLiteral("blockSizeField"))->setProperty("value", 0);
  QMetaObject::invokeMethod(page, "apply");
  QVERIFY2(page->property("errorText").toString().contains(QLatin1String("block size")),
           qPrintable(page->property("errorText").toString()));
  QVERIFY(client->isReady());  // nothing reloaded
  findItem(page, QStringLiteral("blockSizeField"))->setProperty("value", 16);
  // A draft model that does not exist is refused by name (nothing reloads); a file is taken
  // (stories260K: whether it fits this model or not, the model loads; the window says why not).
  QQuickItem* draftField = findItem(page, QStringLiteral("draftModelField"));
  QVERIFY(draftField);
  draftField->setProperty("text", QStringLiteral("/nowhere/draft.gguf"));
  QMetaObject::invokeMethod(page, "apply");
  QVERIFY2(page->property("errorText").toString().contains(QLatin1String("/nowhere/draft.gguf")),
           qPrintable(page->property("errorText").toString()));
  const QString draft = testpaths::stories260K();
  draftField->setProperty("text", draft);
  findItem(page, QStringLiteral("kvCacheField"))->setProperty("value", 2);
  QSignalSpy loaded(client, &LocalChatBackend::modelLoadFinished);
  QVERIFY(click(window, findItem(page, QStringLiteral("applyEngineSettings"))));
  // The click applied the values (the reload may even have finished while the click's events
  // were processed, so the spy's count is checked, not only waited on).
  QVERIFY2(page->property("appliedOk").toBool(), qPrintable(page->property("errorText").toString()));
  QTRY_VERIFY_WITH_TIMEOUT(loaded.count() > 0, 60000);
  QVERIFY(loaded.at(0).at(0).toBool());
  QCOMPARE(page->property("errorText").toString(), QString());
  QCOMPARE(controller.models()->engineSettings()->kvCacheMiB(), 2);
  QCOMPARE(controller.models()->engineSettings()->draftModel(), draft);
  QVERIFY(waitForFrame(window));
  apptest::saveScreenshot(window, QStringLiteral("engine-settings.png"));
  // Values that pass the checks but fail the reload (1 MiB holds one 1024-token block of 640 KiB,
  // a 2048-position sequence needs two): the page puts the saved values back and says why, not
  // "Applied".
  findItem(page, QStringLiteral("kvCacheField"))->setProperty("value", 1);
  findItem(page, QStringLiteral("blockSizeField"))->setProperty("value", 1024);
  loaded.clear();
  QVERIFY(click(window, findItem(page, QStringLiteral("applyEngineSettings"))));
  QTRY_VERIFY_WITH_TIMEOUT(loaded.count() >= 2, 60000);  // the failed load, then the saved settings again
  QVERIFY(!loaded.at(0).at(0).toBool());
  QVERIFY(loaded.at(1).at(0).toBool());
  QVERIFY2(page->property("errorText").toString().contains(QLatin1String("too small")),
           qPrintable(page->property("errorText").toString()));
  QVERIFY(!page->property("appliedOk").toBool());
  QCOMPARE(findItem(page, QStringLiteral("kvCacheField"))->property("value").toInt(), 2);
  QCOMPARE(findItem(page, QStringLiteral("blockSizeField"))->property("value").toInt(), 16);
  QCOMPARE(controller.models()->engineSettings()->blockSize(), 16);
  QVERIFY(controller.errors()->text().contains(QLatin1String("not applied")));  // the banner says so too
  // Values that work: applied, and the banner's message about the failed attempt goes.
  findItem(page, QStringLiteral("kvCacheField"))->setProperty("value", 3);
  loaded.clear();
  QVERIFY(click(window, findItem(page, QStringLiteral("applyEngineSettings"))));
  QTRY_VERIFY_WITH_TIMEOUT(loaded.count() >= 1, 60000);
  QVERIFY(loaded.at(0).at(0).toBool());
  QCOMPARE(controller.models()->engineSettings()->kvCacheMiB(), 3);
  QCOMPARE(controller.errors()->text(), QString());
  QCOMPARE(page->property("errorText").toString(), QString());
  QMetaObject::invokeMethod(settings, "close");
  QTRY_VERIFY(!settings->property("visible").toBool());

  // Ctrl+Shift+E: the engine view, while two panes generate (a snapshot after every step).
  controller.monitor()->setSnapshotInterval(0);
  QTest::keyClick(window, Qt::Key_E, Qt::ControlModifier | Qt::ShiftModifier);
  QQuickWindow* engineWindow = nullptr;
  for (QObject* o : engine.rootObjects().constFirst()->findChildren<QQuickWindow*>())
    if (o->objectName() == QLatin1String("engineWindow")) engineWindow = qobject_cast<QQuickWindow*>(o);
  QVERIFY(engineWindow);
  QTRY_VERIFY(engineWindow->isVisible());
  QVERIFY(QTest::qWaitForWindowExposed(engineWindow));
  EngineMonitor* monitor = controller.monitor();
  QTRY_VERIFY(monitor->isActive());
  PaneState* one = controller.panes()->paneAt(0);
  PaneState* two = controller.panes()->addPane();
  QVERIFY(two);
  const QString prompt = QStringLiteral(
      "Once upon a time, there was a little girl named Lily. She loved to play "
      "outside in the park with her friends.");
  {
    // A chat without a pane leaves the prompt in the prefix cache: both panes then share it.
    PaneState warm(controller.store(), client);
    warm.setMaxTokens(2);
    warm.setInputText(prompt);
    QSignalSpy warmDone(&warm, &PaneState::replyFinished);
    QVERIFY(warm.send());
    QVERIFY(warmDone.wait(30000));
  }
  apptest::WorkerGate gate(client->worker());
  bool sent = true;
  for (PaneState* s : {one, two}) {
    s->setTemperature(0.0);
    s->setMaxTokens(400);
    s->setInputText(prompt);
    sent = s->send() && sent;
  }
  // Hold the worker (on its own thread) right after it sent a snapshot with both requests
  // running, so that the view is captured mid-generation.
  QSemaphore hold;
  std::atomic<bool> held{false};
  apptest::ReleaseOnExit releaseHold{hold, {}};  // whatever fails, the worker is let go
  releaseHold.connection = connect(
      client->worker(), &EngineWorker::snapshotReady, this,
      [&](const EngineSnapshot& snap) {
        if (snap.numRunning == 2 && !held.exchange(true)) hold.acquire();
      },
      Qt::DirectConnection);
  gate.open();
  QVERIFY(sent);
  QTRY_VERIFY_WITH_TIMEOUT(monitor->numRunning() == 2 && monitor->usedBlocks() > 0, 30000);
  auto* summary = findItem(engineWindow->contentItem(), QStringLiteral("engineSummary"));
  QVERIFY(summary);
  QTRY_VERIFY2(summary->property("text").toString().startsWith(QLatin1String("2 running")),
               qPrintable(summary->property("text").toString()));
  QVERIFY(monitor->sharedBlocks() > 0);
  apptest::saveScreenshot(engineWindow, QStringLiteral("engine-view.png"));
  hold.release();
  QTRY_VERIFY_WITH_TIMEOUT(!one->isBusy() && !two->isBusy(), 60000);
  // The engine view follows the theme and the font size, like the main window.
  controller.appearance()->setTheme(QStringLiteral("dark"));
  controller.appearance()->setFontSize(20);
  QTRY_COMPARE(summary->property("font").value<QFont>().pixelSize(), 19);  // Theme.uiFontSize at 20
  QVERIFY2(summary->property("color").value<QColor>().lightnessF() > 0.6,
           qPrintable(summary->property("color").value<QColor>().name()));  // light text on dark
  QVERIFY(engineWindow->color().lightnessF() < 0.4);
  controller.appearance()->setTheme(QStringLiteral("light"));
  controller.appearance()->setFontSize(Appearance::kDefaultFontSize);
  QTRY_VERIFY(summary->property("color").value<QColor>().lightnessF() < 0.4);
  engineWindow->close();
  QTRY_VERIFY(!monitor->isActive());
  apptest::removeWarningCollector();
  APPTEST_VERIFY_NO_WARNINGS();
}

QTEST_MAIN(TestModelGui)
#include "test_model_gui.moc"
