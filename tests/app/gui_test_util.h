// Helpers shared by the app tests that drive the real QML window (offscreen or under xvfb-run):
// finding items by objectName, clicking them, saving screenshots, and collecting the Qt
// warnings (QML errors, binding loops) printed meanwhile so that a test can require none.
#pragma once

#include <algorithm>

#include <QDir>
#include <QList>
#include <QObject>
#include <QPointF>
#include <QQuickItem>
#include <QQuickWindow>
#include <QRectF>
#include <QSignalSpy>
#include <QStringList>
#include <QTest>

#include "app_test_util.h"

namespace apptest {

/// Waits on a condition, not for a fixed time, until `window` has rendered a frame after
/// everything queued so far: posted events delivered, bindings and Loaders run, layouts polished
/// (the render loop polishes before it syncs). False when no frame came within `timeoutMs`.
[[nodiscard]] inline bool waitForFrame(QQuickWindow* window, int timeoutMs = 10000) {
  QCoreApplication::sendPostedEvents();
  QSignalSpy swapped(window, &QQuickWindow::frameSwapped);
  window->update();
  return swapped.wait(timeoutMs);
}

/// Waits until `window` (nullptr: false) is shown and has the keyboard focus: what keyboard
/// shortcut tests need first.
[[nodiscard]] inline bool shownAndActive(QQuickWindow* window) {
  if (!window || !QTest::qWaitForWindowExposed(window)) return false;
  window->requestActivate();
  return QTest::qWaitForWindowActive(window);
}

/// Finds a visual descendant of `root` (or `root` itself) by objectName, visible or not;
/// nullptr when there is none. Walks child items, since delegates are not always QObject children.
inline QQuickItem* findItem(QQuickItem* root, const QString& name) {
  if (!root) return nullptr;
  if (root->objectName() == name) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findItem(child, name)) return found;
  return nullptr;
}

/// The first visible visual descendant of `root` named `name` (below visible parents only).
inline QQuickItem* findVisibleItem(QQuickItem* root, const QString& name) {
  if (!root || !root->isVisible()) return nullptr;
  if (root->objectName() == name) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findVisibleItem(child, name)) return found;
  return nullptr;
}

/// Every visible visual descendant of `root` named `name`, in tree order.
inline QList<QQuickItem*> findVisibleItems(QQuickItem* root, const QString& name) {
  QList<QQuickItem*> found;
  if (!root || !root->isVisible()) return found;
  if (root->objectName() == name) found.append(root);
  for (QQuickItem* child : root->childItems()) found += findVisibleItems(child, name);
  return found;
}

/// `root` or its first QObject descendant named `name` (dialogs and windows, which are not items).
inline QObject* findObject(QObject* root, const QString& name) {
  return root->objectName() == name ? root : root->findChild<QObject*>(name);
}

/// `item`'s rectangle in window coordinates.
inline QRectF windowRect(QQuickItem* item) { return item->mapRectToScene(QRectF(0, 0, item->width(), item->height())); }

/// Scrolls every Flickable (ListView, ScrollView's content, ...) above `item` so that `item` is
/// inside its viewport, as a user would scroll before clicking.
inline void scrollIntoView(QQuickItem* item) {
  for (QQuickItem* a = item ? item->parentItem() : nullptr; a; a = a->parentItem()) {
    if (!a->inherits("QQuickFlickable")) continue;
    const QRectF r = item->mapRectToItem(a, QRectF(0, 0, item->width(), item->height()));
    qreal delta = 0;
    if (r.bottom() > a->height()) delta = r.bottom() - a->height();
    if (r.top() - delta < 0) delta = r.top();
    if (delta == 0) continue;
    const qreal maxY = std::max<qreal>(0, a->property("contentHeight").toReal() - a->height());
    a->setProperty("contentY", std::clamp<qreal>(a->property("contentY").toReal() + delta, 0, maxY));
  }
}

/// Why a click on `item` would not reach it ("" when it would): not visible, disabled, its middle
/// outside the window or outside a clipping ancestor (a scrolled-away part of a list or page).
inline QString clickProblem(QQuickWindow* window, QQuickItem* item) {
  if (!item) return QStringLiteral("no item");
  const QString name = item->objectName().isEmpty() ? QString::fromLatin1(item->metaObject()->className())
                                                    : item->objectName();
  if (!item->isVisible()) return name + QStringLiteral(" is not visible");
  if (!item->isEnabled()) return name + QStringLiteral(" is disabled");
  const QPointF c = item->mapToScene(QPointF(item->width() / 2, item->height() / 2));
  if (!QRectF(0, 0, window->width(), window->height()).contains(c))
    return QStringLiteral("%1's middle (%2, %3) is outside the %4x%5 window")
        .arg(name)
        .arg(c.x())
        .arg(c.y())
        .arg(window->width())
        .arg(window->height());
  for (QQuickItem* a = item->parentItem(); a; a = a->parentItem()) {
    if (!a->clip()) continue;
    const QPointF p = a->mapFromScene(c);
    if (!QRectF(0, 0, a->width(), a->height()).contains(p))
      return QStringLiteral("%1's middle is clipped away by %2 (%3)")
          .arg(name, QString::fromLatin1(a->metaObject()->className()), a->objectName());
  }
  return {};
}

/// Clicks the middle of `item` with the left mouse button, as a user would: first scrolls it
/// into view and waits until its place in the window has settled (layouts and transitions run
/// on later frames). Returns false, with the reason printed, when the click could not reach it.
[[nodiscard]] inline bool click(QQuickWindow* window, QQuickItem* item) {
  if (!item) {
    qWarning("click: no item");
    return false;
  }
  scrollIntoView(item);
  QPointF last(-1e9, -1e9);
  for (int i = 0; i < 100; ++i) {  // settled: the same place over two looks 50 ms apart (<= 5 s)
    QTest::qWait(50);
    const QPointF now = item->mapToScene(QPointF(item->width() / 2, item->height() / 2));
    if (now == last) break;
    last = now;
    scrollIntoView(item);
  }
  const QString problem = clickProblem(window, item);
  if (!problem.isEmpty()) {
    qWarning("click: %s", qPrintable(problem));
    return false;
  }
  QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, last.toPoint());
  return true;
}

/// Saves a grab of `window` as screenshots/`name` below the current folder (the build folder
/// under CTest), creating the folder; returns false when the image could not be written.
inline bool saveScreenshot(QQuickWindow* window, const QString& name) {
  QDir().mkpath(QStringLiteral("screenshots"));
  return window->grabWindow().save(QStringLiteral("screenshots/") + name);
}

namespace detail {
struct WarningState {
  QStringList messages;
  QStringList ignored;
  QtMessageHandler previous = nullptr;
  bool installed = false;
};
inline WarningState& warningState() {
  static WarningState state;
  return state;
}
inline void collectWarning(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  WarningState& s = warningState();
  if (type == QtWarningMsg || type == QtCriticalMsg || type == QtFatalMsg) {
    bool ignore = false;
    for (const QString& part : s.ignored) ignore = ignore || message.contains(part);
    if (!ignore) s.messages.append(message);
  }
  if (s.previous) s.previous(type, context, message);
}
}  // namespace detail

/// Starts collecting the warnings, criticals and fatals Qt prints (they are still passed on to
/// the previous handler); messages containing any of `ignored` are not collected.
inline void installWarningCollector(const QStringList& ignored = {}) {
  detail::WarningState& s = detail::warningState();
  s.ignored = ignored;
  if (s.installed) return;
  s.previous = qInstallMessageHandler(detail::collectWarning);
  s.installed = true;
}

/// Stops collecting and puts the previous message handler back; the collected list stays.
inline void removeWarningCollector() {
  detail::WarningState& s = detail::warningState();
  if (!s.installed) return;
  qInstallMessageHandler(s.previous);
  s.previous = nullptr;
  s.installed = false;
}

/// The warnings collected so far; clear() it before the part of a test that must print none.
inline QStringList& warnings() { return detail::warningState().messages; }

}  // namespace apptest

/// Fails the test, listing them, when any warning was collected (see apptest::warnings()).
#define APPTEST_VERIFY_NO_WARNINGS() \
  QVERIFY2(apptest::warnings().isEmpty(), qPrintable(apptest::warnings().join(QLatin1Char('\n'))))
