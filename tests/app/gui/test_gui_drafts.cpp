// Draft tokens in the window: a pane's proposer and its acceptance in the header, the tint of the
// accepted draft text, what a choice the engine cannot serve says, and the header's row of speed,
// drafts and context side by side as panes come and go (stories260K, n-gram drafts).
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickTextDocument>
#include <QQuickWindow>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"
#include "app/main_window.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_settings.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "gui_test_util.h"

using apptest::findItem;
using apptest::findVisibleItem;
using apptest::optionsFor;

class TestGuiDrafts : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { apptest::installWarningCollector(); }
  void init() { apptest::warnings().clear(); }
  void speculativeSetting();
  void cleanupTestCase() { apptest::removeWarningCollector(); }
};

void TestGuiDrafts::speculativeSetting() {
  // The app's engine speculates ("auto": n-gram lookup on a model without MTP layers): a reply
  // that repeats its prompt shows the drafts accepted in the pane header; the pane's settings
  // turn it off (kept in the ini), and the next reply, the same text, has no drafts line.
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppOptions options = optionsFor(dir.path());
  AppController controller(options);
  controller.start();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QTRY_VERIFY2_WITH_TIMEOUT(controller.engine()->isReady(), qPrintable(controller.engine()->loadError()), 60000);
  QQuickItem* root = window->contentItem();
  QQuickItem* pane = findItem(root, QStringLiteral("chatPane0"));
  PaneState* session = controller.panes()->paneAt(0);
  QCOMPARE(session->settings()->drafts(), QStringLiteral("auto"));
  QVERIFY(session->settings()->apply({{"maxTokens", "60"}, {"temperature", "0"}, {"tintDrafts", true}}).isEmpty());
  const QString prompt = QStringLiteral("The cat sat on the mat. The cat sat on the mat. The cat sat on the mat.");
  session->setInputText(prompt);
  QVERIFY(session->send());
  QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), 60000);
  QCOMPARE(session->errorText(), QString());
  QVERIFY(session->draftAcceptance() > 0.0);
  QVERIFY(session->meanAcceptedLength() > 1.0);
  QCOMPARE(session->draftMethod(), QStringLiteral("ngram"));  // (stories260K has no MTP layers)
  QQuickItem* drafts = nullptr;
  QTRY_VERIFY((drafts = findVisibleItem(pane, QStringLiteral("paneDrafts"))) != nullptr);
  QVERIFY2(drafts->property("text").toString().contains(QStringLiteral("%")),
           qPrintable(drafts->property("text").toString()));
  const QString withDrafts = controller.store()->messages(session->conversationId()).at(1).text;
  // Tinted: the reply's accepted draft text is in the draft colour, each tinted run a part of
  // the reply, and no mark is left in the text shown or stored.
  const auto tintedRuns = [&]() {
    QStringList runs;
    const QList<QQuickItem*> proses = apptest::findVisibleItems(pane, QStringLiteral("messageProse"));
    if (proses.isEmpty()) return runs;
    QObject* styler = apptest::findObject(proses.last(), QStringLiteral("markdownStyler"));
    auto* qdoc = proses.last()->property("textDocument").value<QQuickTextDocument*>();
    if (!styler || !qdoc) return runs;
    const QColor draft = styler->property("draftColor").value<QColor>();
    for (QTextBlock block = qdoc->textDocument()->begin(); block.isValid(); block = block.next())
      for (auto it = block.begin(); !it.atEnd(); ++it)
        if (it.fragment().charFormat().hasProperty(QTextFormat::ForegroundBrush) &&
            it.fragment().charFormat().foreground().color() == draft)
          runs << it.fragment().text();
    if (qdoc->textDocument()->toPlainText().contains(QChar(0xF8F0))) runs << QStringLiteral("(a mark is left)");
    return runs;
  };
  const auto tintProblem = [&]() -> QString {
    const QStringList runs = tintedRuns();
    if (runs.isEmpty()) return QStringLiteral("nothing tinted");
    for (const QString& run : runs)
      if (!withDrafts.contains(run)) return run;
    return QString();
  };
  QTRY_COMPARE(tintProblem(), QString());  // (the marks go once the styler has run, before a frame)
  QVERIFY(!withDrafts.contains(QChar(0xF8F0)) && !withDrafts.contains(QChar(0xF8F1)));
  // A pane added beside it and sent the same: each header's speed, drafts and context side by
  // side, none over another (a new pane's row once laid them all out at its start).
  PaneState* second = controller.panes()->addPane();
  QVERIFY(second);
  QVERIFY(second->settings()->apply({{"maxTokens", "60"}, {"temperature", "0"}}).isEmpty());
  second->setInputText(prompt);
  QVERIFY(second->send());
  QTRY_VERIFY_WITH_TIMEOUT(!second->isBusy(), 60000);
  QQuickItem* secondPane = nullptr;
  QTRY_VERIFY((secondPane = findItem(root, QStringLiteral("chatPane1"))) != nullptr);
  const auto overlapping = [&](QQuickItem* p) -> QString {
    QList<QQuickItem*> labels;
    for (const char* name : {"paneRate", "paneDrafts", "paneContext"})
      if (QQuickItem* item = findVisibleItem(p, QString::fromLatin1(name))) labels << item;
    if (labels.size() < 2) return QStringLiteral("only %1 labels shown").arg(labels.size());
    for (qsizetype i = 1; i < labels.size(); ++i) {
      const QRectF a = labels[i - 1]->mapRectToScene(QRectF(0, 0, labels[i - 1]->width(), labels[i - 1]->height()));
      const QRectF b = labels[i]->mapRectToScene(QRectF(0, 0, labels[i]->width(), labels[i]->height()));
      if (a.right() > b.left() + 0.5)
        return labels[i - 1]->objectName() + QStringLiteral(" over ") + labels[i]->objectName();
    }
    return QString();
  };
  QTRY_COMPARE(overlapping(pane), QString());
  QTRY_COMPARE(overlapping(secondPane), QString());
  // Three panes, then one closed: the others widen, their rows still side by side.
  PaneState* third = controller.panes()->addPane();
  QVERIFY(third);
  QVERIFY(third->settings()->apply({{"maxTokens", "60"}, {"temperature", "0"}}).isEmpty());
  third->setInputText(prompt);
  QVERIFY(third->send());
  QTRY_VERIFY_WITH_TIMEOUT(!third->isBusy(), 60000);
  QTRY_VERIFY(findItem(root, QStringLiteral("chatPane2")) != nullptr);
  controller.panes()->closePane(2);
  QTRY_VERIFY(findItem(root, QStringLiteral("chatPane2")) == nullptr);
  QTRY_COMPARE(overlapping(pane), QString());
  QTRY_COMPARE(overlapping(findItem(root, QStringLiteral("chatPane1"))), QString());
  controller.panes()->closePane(1);

  QVERIFY(QMetaObject::invokeMethod(pane, "openSettings"));
  QTRY_VERIFY(findVisibleItem(root, QStringLiteral("applySettingsButton")));
  QQuickItem* box = findVisibleItem(root, QStringLiteral("setting_drafts"));
  QVERIFY(box);
  QCOMPARE(box->property("currentIndex").toInt(), 0);  // Automatic
  const QStringList values = box->property("values").toStringList();
  QCOMPARE(values.size(), 5);
  // A choice the engine cannot serve says what proposes instead (stories260K has no MTP layers).
  QVERIFY(!findVisibleItem(root, QStringLiteral("draftsNote")));
  box->setProperty("currentIndex", int(values.indexOf(QStringLiteral("mtp"))));
  QQuickItem* note = nullptr;
  QTRY_VERIFY((note = findVisibleItem(root, QStringLiteral("draftsNote"))) != nullptr);
  QVERIFY2(note->property("text").toString().contains(QStringLiteral("MTP")),
           qPrintable(note->property("text").toString()));
  box->setProperty("currentIndex", int(values.indexOf(QStringLiteral("ngram"))));
  QTRY_VERIFY(!findVisibleItem(root, QStringLiteral("draftsNote")));
  QQuickItem* tint = findVisibleItem(root, QStringLiteral("setting_tintDrafts"));
  QVERIFY(tint);
  QCOMPARE(tint->property("checked").toBool(), true);
  QVERIFY(tint->property("enabled").toBool());
  box->setProperty("currentIndex", int(values.indexOf(QStringLiteral("off"))));
  QTRY_VERIFY(!tint->property("enabled").toBool());  // nothing to tint without drafts
  QVERIFY(QMetaObject::invokeMethod(findItem(root, QStringLiteral("applySettingsButton")), "clicked"));
  QTRY_VERIFY(!findVisibleItem(root, QStringLiteral("applySettingsButton")));
  QCOMPARE(session->settings()->drafts(), QStringLiteral("off"));
  QCOMPARE(QSettings(AppController::settingsFile(dir.path()), QSettings::IniFormat)
               .value(QStringLiteral("panes/1/drafts"))
               .toString(),
           QStringLiteral("off"));

  QVERIFY(session->regenerate());  // the same context again, greedy: the same reply
  QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), 60000);
  QCOMPARE(session->draftAcceptance(), -1.0);
  QTRY_VERIFY(!findVisibleItem(pane, QStringLiteral("paneDrafts")));
  const auto messages = controller.store()->messages(session->conversationId());
  QCOMPARE(messages.size(), 3);  // the prompt and both replies
  QCOMPARE(messages.last().text, withDrafts);
  QTRY_VERIFY(tintedRuns().isEmpty());  // the new reply had no drafts
  APPTEST_VERIFY_NO_WARNINGS();
}

QTEST_MAIN(TestGuiDrafts)
#include "test_gui_drafts.moc"
