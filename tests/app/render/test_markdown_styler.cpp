// MarkdownStyler on the real MessageContent component: links take the bubble's link colour (and
// follow the theme), tables get borders and cell padding, also for text that arrives later (a
// streaming reply); plain messages are left alone.
#include <QtQml/qqmlextensionplugin.h>
#include <QQmlComponent>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickTextDocument>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>

#include "app/render/markdown_styler.h"
#include "gui_test_util.h"

Q_IMPORT_QML_PLUGIN(PagedChatPlugin)

namespace {

/// The foreground colours of every link in `doc` (empty when it has none; invalid for a link
/// that is not underlined).
QList<QColor> linkColors(QTextDocument* doc) {
  QList<QColor> colors;
  for (QTextBlock block = doc->begin(); block.isValid(); block = block.next())
    for (auto it = block.begin(); !it.atEnd(); ++it)
      if (it.fragment().charFormat().isAnchor())  // an un-underlined link counts as unstyled
        colors.append(it.fragment().charFormat().fontUnderline() ? it.fragment().charFormat().foreground().color()
                                                                 : QColor());
  return colors;
}

/// Every table in `doc`.
QList<QTextTable*> tables(QTextDocument* doc) {
  QList<QTextTable*> found;
  QList<QTextFrame*> frames{doc->rootFrame()};
  while (!frames.isEmpty()) {
    QTextFrame* f = frames.takeLast();
    frames += f->childFrames();
    if (auto* t = qobject_cast<QTextTable*>(f)) found.append(t);
  }
  return found;
}

bool allEqual(const QList<QColor>& colors, const QColor& c) {
  return !colors.isEmpty() && std::all_of(colors.begin(), colors.end(), [&](const QColor& x) { return x == c; });
}

}  // namespace

class TestMarkdownStyler : public QObject {
  Q_OBJECT

 private slots:
  void linksAndTablesInMessageContent();
  void styleIsIdempotent();
};

void TestMarkdownStyler::linksAndTablesInMessageContent() {
  QQmlEngine engine;
  engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
  QQmlComponent component(&engine);
  component.setData(R"(
    import QtQuick
    import PagedChat
    Item {
      width: 500; height: 400
      function setThemeMode(m) { Theme.mode = m }
      property alias assistant: assistant
      property alias user: user
      MessageContent {
        id: assistant
        width: 480
        text: "See [the docs](https://example.org/docs).\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
      }
      MessageContent {
        id: user
        width: 480
        linkColor: Theme.userTextColor
        text: "Read [this](https://example.org/x) please"
      }
    })",
                    QUrl());
  std::unique_ptr<QObject> root(component.create());
  QVERIFY2(root, qPrintable(component.errorString()));
  QMetaObject::invokeMethod(root.get(), "setThemeMode", Q_ARG(QVariant, QStringLiteral("light")));
  auto docOf = [&](const char* which) -> QTextDocument* {
    auto* content = root->property(which).value<QQuickItem*>();
    QQuickItem* prose = content ? apptest::findItem(content, QStringLiteral("messageProse")) : nullptr;
    auto* qdoc = prose ? prose->property("textDocument").value<QQuickTextDocument*>() : nullptr;
    return qdoc ? qdoc->textDocument() : nullptr;
  };
  QTextDocument* assistant = docOf("assistant");
  QTextDocument* user = docOf("user");
  QVERIFY(assistant && user);

  const QColor lightLink(QStringLiteral("#303f9f")), darkLink(QStringLiteral("#82b1ff"));
  QTRY_VERIFY(allEqual(linkColors(assistant), lightLink));
  QTRY_VERIFY(allEqual(linkColors(user), QColor(Qt::white)));  // white on the indigo bubble
  QCOMPARE(tables(assistant).size(), 1);
  QTextTableFormat format = tables(assistant).constFirst()->format();
  QCOMPARE(format.cellPadding(), MarkdownStyler::kCellPadding);
  QCOMPARE(format.border(), 1.0);
  QCOMPARE(format.borderBrush().color(), QColor(QStringLiteral("#b0b6c4")));

  // The dark theme: existing links and table borders follow without re-parsing.
  QMetaObject::invokeMethod(root.get(), "setThemeMode", Q_ARG(QVariant, QStringLiteral("dark")));
  QTRY_VERIFY(allEqual(linkColors(assistant), darkLink));
  QTRY_COMPARE(tables(assistant).constFirst()->format().borderBrush().color(), QColor(QStringLiteral("#555b6e")));
  QVERIFY(allEqual(linkColors(user), QColor(Qt::white)));

  // New text (a streaming reply's next update): its links are styled too.
  auto* content = root->property("assistant").value<QQuickItem*>();
  content->setProperty("text", QStringLiteral("One [first](https://a.example) and [second](https://b.example)."));
  QTRY_COMPARE(linkColors(docOf("assistant")).size(), 2);
  QTRY_VERIFY(allEqual(linkColors(docOf("assistant")), darkLink));

  // Plain text (placeholders) is not Markdown: nothing is restyled, no link appears.
  content->setProperty("plain", true);
  content->setProperty("text", QStringLiteral("[not a link](https://c.example)"));
  QTRY_VERIFY(docOf("assistant") && docOf("assistant")->toPlainText().contains(QLatin1String("[not a link]")));
  QVERIFY(linkColors(docOf("assistant")).isEmpty());
}

void TestMarkdownStyler::styleIsIdempotent() {
  QTextDocument doc;
  doc.setMarkdown(QStringLiteral("[a](https://a.example) x [b](https://b.example)\n\n| h |\n|---|\n| c |\n"));
  const QColor link(Qt::red), border(Qt::blue);
  QCOMPARE(MarkdownStyler::style(&doc, link, border), 3);  // two links, one table
  QVERIFY(allEqual(linkColors(&doc), link));
  QCOMPARE(doc.toPlainText().count(QLatin1Char('a')), 1);        // text unchanged: "a", "x", "b", "h", "c"
  QCOMPARE(MarkdownStyler::style(&doc, link, border), 0);        // nothing left to change
  QCOMPARE(MarkdownStyler::style(&doc, QColor(), QColor()), 0);  // invalid colours: left as they are
}

QTEST_MAIN(TestMarkdownStyler)
#include "test_markdown_styler.moc"
