// Every dialog and pane fits: the real window with three panes (one of them remote, one with a
// conversation), at 1280x800 and at its 720x480 minimum, in English and in Korean. At each size
// and language the test checks the window, then opens every popup the window holds (dialogs,
// the pane settings, menus), each page of a dialog with tabs, and the engine view window at its
// own sizes, with the rules of layout_check.h: no control or text cut or outside its parent, no
// button whose middle is covered. Screenshots of each state go to <build>/screenshots/layout/.
#include <QDir>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QTest>

#include "app/app_options.h"
#include "app/appearance.h"
#include "app/controllers/app_controller.h"
#include "app/main_window.h"
#include "app/panes/pane_endpoints.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_state.h"
#include "gui_test_util.h"
#include "layout_check.h"

using apptest::LayoutCheck;
using apptest::waitForFrame;

class TestLayout : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void everyDialogFits_data();
  void everyDialogFits();
  void cleanupTestCase();

 private:
  QStringList checkWindow(QQuickWindow* window, const QString& state);
  QStringList checkPopups(QQuickWindow* window, const QString& state);
  QStringList checkItem(QQuickWindow* window, QQuickItem* root, const QString& state);

  QTemporaryDir dir_;
  std::unique_ptr<AppController> controller_;
  QQmlApplicationEngine engine_;
  QQuickWindow* window_ = nullptr;
  QList<QRegularExpression> ui_;
};

void TestLayout::initTestCase() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  ui_ = apptest::uiStringPatterns({QStringLiteral(PAGEDCHAT_SOURCE_DIR "/translations/pagedchat_en.ts"),
                                   QStringLiteral(PAGEDCHAT_SOURCE_DIR "/translations/pagedchat_ko.ts")});
  QVERIFY2(ui_.size() > 100, "the translation files were not read");
  controller_ = std::make_unique<AppController>(apptest::optionsFor(dir_.path()));
  controller_->start();
  PaneListModel* panes = controller_->panes();
  QVERIFY(panes->addPane());
  QVERIFY(panes->addPane());
  // Pane 3 talks to a server (nothing listens there: the pane shows its address and model).
  QCOMPARE(controller_->endpoints()->useRemote(2, QStringLiteral("http://127.0.0.1:9/v1"),
                                               QStringLiteral("qwen3-30b-a3b-instruct-2507-q4_k_m"), QString(), false),
           QString());
  window_ = loadMainWindow(engine_, controller_.get());
  QVERIFY(window_);
  window_->resize(1280, 800);
  QVERIFY(QTest::qWaitForWindowExposed(window_));
  QTRY_VERIFY_WITH_TIMEOUT(controller_->engine()->isReady(), 60000);
  // A conversation in pane 1: messages, their action buttons, the reply's statistics.
  QVERIFY(panes->paneAt(0)->sendText(QStringLiteral("Once upon a time")));
  QTRY_VERIFY_WITH_TIMEOUT(!panes->anyBusy(), 60000);
  QVERIFY(QDir().mkpath(QStringLiteral("screenshots/layout")));
}

void TestLayout::cleanupTestCase() {
  engine_.clearComponentCache();
  controller_->appearance()->setLanguage(QStringLiteral("en"));
}

void TestLayout::everyDialogFits_data() {
  QTest::addColumn<QString>("language");
  QTest::addColumn<QSize>("size");
  for (const char* language : {"en", "ko"}) {
    QTest::addRow("%s 1280x800", language) << QString::fromLatin1(language) << QSize(1280, 800);
    QTest::addRow("%s 720x480", language) << QString::fromLatin1(language) << QSize(720, 480);
  }
}

QStringList TestLayout::checkItem(QQuickWindow* window, QQuickItem* root, const QString& state) {
  if (!waitForFrame(window)) return {state + QStringLiteral(": no frame")};
  LayoutCheck check(window->contentItem(), QRectF(0, 0, window->width(), window->height()), ui_);
  QStringList problems = check.run(root);
  QString file = state;
  file.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9]+")), QStringLiteral("-"));
  window->grabWindow().save(QStringLiteral("screenshots/layout/%1.png").arg(file));
  for (QString& p : problems) p.prepend(state + QStringLiteral(": "));
  return problems;
}

QStringList TestLayout::checkWindow(QQuickWindow* window, const QString& state) {
  return checkItem(window, window->contentItem(), state);
}

QStringList TestLayout::checkPopups(QQuickWindow* window, const QString& state) {
  QStringList problems;
  // Every popup the window holds (QML objects below the root; delegates' popups are found when
  // their delegate exists), opened as a user would open it.
  QList<QObject*> popups, all;
  // QObject children, and the items' (a Repeater's delegates have no QObject parent).
  QList<QObject*> pending{window, window->contentItem()};
  while (!pending.isEmpty()) {
    QObject* o = pending.takeLast();
    if (all.contains(o)) continue;
    all.append(o);
    for (QObject* child : o->children()) pending.append(child);
    if (auto* item = qobject_cast<QQuickItem*>(o))
      for (QQuickItem* child : item->childItems()) pending.append(child);
  }
  for (QObject* o : std::as_const(all)) {
    if (!o->inherits("QQuickPopup")) continue;
    // A ComboBox's list opens from its box: checked when the box is visible (and a user could).
    auto* parent = o->property("parent").value<QQuickItem*>();
    if (parent && parent->inherits("QQuickComboBox")) continue;
    if (parent && !parent->isVisible() && !parent->inherits("QQuickOverlay")) continue;
    popups.append(o);
  }
  if (popups.size() < 5) problems.append(state + QStringLiteral(": only %1 popups found").arg(popups.size()));
  for (qsizetype i = 0; i < popups.size(); ++i) {
    QObject* popup = popups.at(i);
    const QString name = QStringLiteral("%1 %2").arg(i + 1).arg(
        popup->objectName().isEmpty()
            ? QString::fromLatin1(popup->metaObject()->className()).section(QLatin1Char('_'), 0, 0)
            : popup->objectName());
    qInfo("%s: %s", qPrintable(state), qPrintable(name));
    if (!QMetaObject::invokeMethod(popup, "open")) {
      problems.append(state + QStringLiteral(": %1 does not open").arg(name));
      continue;
    }
    if (!QTest::qWaitFor([popup] { return popup->property("opened").toBool(); }, 5000)) {
      problems.append(state + QStringLiteral(": %1 did not open").arg(name));
      QMetaObject::invokeMethod(popup, "close");
      continue;
    }
    auto* content = popup->property("contentItem").value<QQuickItem*>();
    QQuickItem* popupItem = content ? content->parentItem() : nullptr;
    if (!popupItem) {
      problems.append(state + QStringLiteral(": %1 has no item").arg(name));
    } else {
      // A dialog with tabs: each page.
      QQuickItem* tabs = nullptr;
      QList<QQuickItem*> todo{popupItem};
      while (!todo.isEmpty() && !tabs) {
        QQuickItem* it = todo.takeFirst();
        if (it->inherits("QQuickTabBar")) tabs = it;
        todo += it->childItems();
      }
      const int pages = tabs ? tabs->property("count").toInt() : 1;
      for (int page = 0; page < pages; ++page) {
        if (tabs) tabs->setProperty("currentIndex", page);
        problems += checkItem(window, popupItem, QStringLiteral("%1 %2 page %3").arg(state, name).arg(page + 1));
      }
      if (tabs) tabs->setProperty("currentIndex", 0);
    }
    QMetaObject::invokeMethod(popup, "close");
    if (!QTest::qWaitFor([popup] { return !popup->property("visible").toBool(); }, 5000))
      problems.append(state + QStringLiteral(": %1 did not close").arg(name));
  }
  return problems;
}

void TestLayout::everyDialogFits() {
  QFETCH(QString, language);
  QFETCH(QSize, size);
  QVERIFY(window_);
  controller_->appearance()->setLanguage(language);
  window_->resize(size);
  QTRY_COMPARE(window_->size(), size);
  const QString state = QStringLiteral("%1 %2x%3").arg(language).arg(size.width()).arg(size.height());

  QStringList problems = checkWindow(window_, state + QStringLiteral(" window"));
  problems += checkPopups(window_, state);

  // The engine view window, at its default and its minimum size.
  auto* engineWindow = qobject_cast<QQuickWindow*>(apptest::findObject(window_, QStringLiteral("engineWindow")));
  QVERIFY(engineWindow);
  engineWindow->show();
  QVERIFY(QTest::qWaitForWindowExposed(engineWindow));
  for (const QSize engineSize : {QSize(900, 640), QSize(480, 360)}) {
    engineWindow->resize(engineSize);
    QTRY_COMPARE(engineWindow->size(), engineSize);
    problems += checkWindow(
        engineWindow,
        QStringLiteral("%1 engine view %2x%3").arg(state).arg(engineSize.width()).arg(engineSize.height()));
  }
  engineWindow->hide();
  for (const QString& problem : std::as_const(problems)) qWarning("%s", qPrintable(problem));
  QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("%1 layout problems (above); screenshots in %2")
                                              .arg(problems.size())
                                              .arg(QDir::current().filePath(QStringLiteral("screenshots/layout")))));
}

QTEST_MAIN(TestLayout)
#include "test_layout.moc"
