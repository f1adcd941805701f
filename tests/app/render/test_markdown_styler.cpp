// MarkdownStyler on the real MessageContent component: links take the bubble's link colour (and
// follow the theme), tables get borders and cell padding, also for text that arrives later (a
// streaming reply); plain messages are left alone. Accepted draft text (speculative decoding)
// marked by draftmarks::insert() reads as the same Markdown, is tinted exactly where marked, in
// prose, code and reasoning, and leaves no mark behind.
#include <QtQml/qqmlextensionplugin.h>
#include <QClipboard>
#include <QGuiApplication>
#include <QQmlComponent>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickTextDocument>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>

#include <random>

#include "app/render/draft_marks.h"
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
  void draftMarksKeepMarkdown_data();
  void draftMarksKeepMarkdown();
  void draftMarkRules();
  void draftSpansFromUtf8();
  void draftTintInMessageContent();
};

namespace {

/// A 500 × 400 Item of the PagedChat module with `body` in it and setThemeMode(m), made in
/// `engine`; null (and `error` says why) when it does not load.
std::unique_ptr<QObject> makeRoot(QQmlEngine& engine, const char* body, QString* error) {
  engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
  QQmlComponent component(&engine);
  component.setData(QByteArray("import QtQuick\nimport PagedChat\nItem {\n  width: 500; height: 400\n"
                               "  function setThemeMode(m) { Theme.mode = m }\n") +
                        body + "\n}\n",
                    QUrl());
  std::unique_ptr<QObject> root(component.create());
  if (!root) *error = component.errorString();
  return root;
}

/// The characters of `doc` in `color`, in order.
QString charsIn(QTextDocument* doc, const QColor& color) {
  QString out;
  for (QTextBlock block = doc->begin(); block.isValid(); block = block.next())
    for (auto it = block.begin(); !it.atEnd(); ++it)
      if (it.fragment().charFormat().foreground().color() == color &&
          it.fragment().charFormat().hasProperty(QTextFormat::ForegroundBrush))
        out += it.fragment().text();
  return out;
}

/// The characters between marks in `marked`, in order.
QString markedChars(const QString& marked) {
  QString out;
  bool in = false;
  for (QChar c : marked) {
    if (c == draftmarks::kBegin || c == draftmarks::kEnd)
      in = c == draftmarks::kBegin;
    else if (in)
      out += c;
  }
  return out;
}

}  // namespace

void TestMarkdownStyler::linksAndTablesInMessageContent() {
  QQmlEngine engine;
  QString error;
  std::unique_ptr<QObject> root = makeRoot(engine, R"(
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
      })",
                                           &error);
  QVERIFY2(root, qPrintable(error));
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

// Markdown of the kinds replies hold, with random spans marked: read with the marks and then
// rid of them (tintDrafts with no colour), the document is the unmarked text's, format for
// format (its HTML); tinted, exactly the marked letters take the colour.
void TestMarkdownStyler::draftMarksKeepMarkdown_data() {
  QTest::addColumn<QString>("text");
  QTest::newRow("emphasis") << QStringLiteral("Some **bold** and *italic* and _under_ and ~~gone~~ words.");
  QTest::newRow("headings and lists") << QStringLiteral(
      "# Title here\n\nIntro text.\n\n1. first item\n2. second item\n   10) nested\n\n"
      "- bullet one\n- bullet *two*\n\n> quoted 3. text\n> 4. listed\n\nSetext\n======\n");
  QTest::newRow("links and addresses") << QStringLiteral(
      "See [the docs](https://example.org/a_b) or <https://x.example/y>, www.example.com, "
      "mail me@example.org, http://plain.example/path and [ref][r1] and [short].\n\n"
      "[r1]: https://ref.example\n[short]: https://short.example \"Title\"\n");
  QTest::newRow("code") << QStringLiteral(
      "Use `inline code` here.\n\n```python\ndef f(x):\n    return x * 2\n```\n\n"
      "    indented code block\n\nAfter ~~~ text.\n~~~\nmore code\n~~~\n");
  QTest::newRow("tables and html") << QStringLiteral(
      "| name | value |\n|:-----|------:|\n| alpha | 1.5 |\n| beta | **2** |\n\n"
      "Text with <b>bold tag</b> &amp; entity &copy; and a\\*literal star\\*.\n");
  QTest::newRow("korean and marks") << QStringLiteral(
      "안녕하세요, **반갑습니다**. 한국어 문장과 café naïve 1.2.3 snake_case_word x_y_z.\n");
}

void TestMarkdownStyler::draftMarksKeepMarkdown() {
  QFETCH(QString, text);
  QTextDocument clean;
  clean.setMarkdown(text, QTextDocument::MarkdownDialectGitHub);
  std::mt19937 rng(7);
  int tintedRuns = 0;
  for (int round = 0; round < 40; ++round) {
    QList<int> spans;
    for (int at = 0; at < text.size();) {
      const int gap = int(rng() % 6), len = 1 + int(rng() % 9);
      if (at + gap >= text.size()) break;
      spans << at + gap << std::min<int>(int(text.size()), at + gap + len);
      at += gap + len;
    }
    if (round == 0) spans = {0, int(text.size())};  // all of it
    const QString marked = draftmarks::insert(text, spans);
    if (marked.isEmpty()) continue;
    QCOMPARE(draftmarks::remove(marked), text);
    QTextDocument plain;
    plain.setMarkdown(marked, QTextDocument::MarkdownDialectGitHub);
    QVERIFY(MarkdownStyler::tintDrafts(&plain, QColor()) > 0);
    QCOMPARE(plain.toHtml(), clean.toHtml());
    QTextDocument tinted;
    tinted.setMarkdown(marked, QTextDocument::MarkdownDialectGitHub);
    const QColor color(0x12, 0x34, 0x56);
    MarkdownStyler::tintDrafts(&tinted, color);
    QCOMPARE(tinted.toPlainText(), clean.toPlainText());
    QCOMPARE(charsIn(&tinted, color), markedChars(marked));
    ++tintedRuns;
  }
  QVERIFY(tintedRuns > 30);
}

// Where marks go and where they never do.
void TestMarkdownStyler::draftMarkRules() {
  using draftmarks::insert;
  const QChar b = draftmarks::kBegin, e = draftmarks::kEnd;
  const QString all = QStringLiteral("quick fox, 2 dogs");
  QCOMPARE(insert(all, {0, int(all.size())}),
           QString(b) + "quick" + e + " " + b + "fox" + e + ", " + b + "2" + e + " " + b + "dogs" + e);
  QCOMPARE(insert(all, {2, 4}), QString("qu") + b + "ic" + e + "k fox, 2 dogs");  // within a word
  QCOMPARE(insert(all, {}), QString());
  QCOMPARE(insert(all, {5, 6}), QString());  // a space only: nothing to mark
  const QString url = QStringLiteral("go https://a.example/x now");
  QCOMPARE(insert(url, {0, int(url.size())}), QString(b) + "go" + e + " https://a.example/x " + b + "now" + e);
  const QString list = QStringLiteral("1. one\n12) two");
  QCOMPARE(insert(list, {0, int(list.size())}), QString("1. ") + b + "one" + e + "\n12) " + b + "two" + e);
  const QString fence = QStringLiteral("```python\nx = 1\n```");
  QCOMPARE(insert(fence, {0, int(fence.size())}), QString("```python\n") + b + "x" + e + " = " + b + "1" + e + "\n```");
  const QString ref = QStringLiteral("[a b] c\n\n[a b]: https://x.example");
  QCOMPARE(insert(ref, {0, 7}), QString("[a b] ") + b + "c" + e + "\n\n[a b]: https://x.example");
  QCOMPARE(insert(QStringLiteral("<b>bold</b> x"), {0, 13}), QString("<b>bold</b> ") + b + "x" + e);
  QCOMPARE(insert(QString("has ") + b + " mark", {0, 4}), QString());  // the model's own: left alone
  QCOMPARE(insert(QStringLiteral("\U0001D400x"), {0, 3}), QString("\U0001D400") + b + "x" + e);  // not split
  QCOMPARE(insert(QStringLiteral("ab"), {-5, 99}), QString(b) + "ab" + e);                       // clamped
}

// Byte offsets of the engine's UTF-8 text become UTF-16 offsets of the same characters.
void TestMarkdownStyler::draftSpansFromUtf8() {
  const QString text = QStringLiteral("a한\U0001F600b글c");
  const std::string utf8 = text.toStdString();  // a(1) 한(3) 😀(4) b(1) 글(3) c(1)
  const std::vector<std::pair<std::size_t, std::size_t>> spans = {{1, 4}, {4, 9}, {9, 13}};
  const QList<int> got = draftmarks::fromUtf8Spans(utf8, spans);
  QCOMPARE(got, (QList<int>{1, 2, 2, 5, 5, 7}));
  QCOMPARE(text.mid(got[2], got[3] - got[2]), QStringLiteral("\U0001F600b"));
  QCOMPARE(text.mid(got[4], got[5] - got[4]), QStringLiteral("글c"));
  QVERIFY(draftmarks::fromUtf8Spans(utf8, {}).isEmpty());
  QList<int> joined{0, 2};
  draftmarks::append(joined, {0, 3, 5, 6}, 2);  // touching the last: one span
  QCOMPARE(joined, (QList<int>{0, 5, 7, 8}));
}

// The bubble's content with marked text: prose and code tinted in Theme.draftTextColor, no mark
// left in either, and the code's Copy text unmarked.
void TestMarkdownStyler::draftTintInMessageContent() {
  QQmlEngine engine;
  QString error;
  std::unique_ptr<QObject> root = makeRoot(engine, R"(
      property alias content: content
      MessageContent { id: content; width: 480 })",
                                           &error);
  QVERIFY2(root, qPrintable(error));
  QMetaObject::invokeMethod(root.get(), "setThemeMode", Q_ARG(QVariant, QStringLiteral("light")));
  const QString text = QStringLiteral("The **quick** fox said:\n\n```js\nlet jumps = over;\n```\n");
  const QList<int> spans = {4, 13, 26, 40};  // "**quick** " and "``js\nlet jumps" (not the fence)
  const QString marked = draftmarks::insert(text, spans);
  QVERIFY(!marked.isEmpty());
  auto* content = root->property("content").value<QQuickItem*>();
  content->setProperty("text", text);
  content->setProperty("markedText", marked);
  auto docOf = [&](const QString& name) -> QTextDocument* {
    QQuickItem* edit = apptest::findItem(content, name);
    auto* qdoc = edit ? edit->property("textDocument").value<QQuickTextDocument*>() : nullptr;
    return qdoc ? qdoc->textDocument() : nullptr;
  };
  const QColor draft(QStringLiteral("#00796b"));
  QTRY_VERIFY(docOf(QStringLiteral("messageProse")) && docOf(QStringLiteral("codeText")));
  QTRY_COMPARE(charsIn(docOf(QStringLiteral("messageProse")), draft), QStringLiteral("quick"));
  QTRY_COMPARE(charsIn(docOf(QStringLiteral("codeText")), draft), QStringLiteral("letjumps"));
  QCOMPARE(docOf(QStringLiteral("messageProse"))->toPlainText(), QStringLiteral("The quick fox said:"));
  QCOMPARE(docOf(QStringLiteral("codeText"))->toPlainText(), QStringLiteral("let jumps = over;"));
  QQuickItem* copy = apptest::findItem(content, QStringLiteral("copyCodeButton"));
  QVERIFY(copy);
  QVERIFY(QMetaObject::invokeMethod(copy, "clicked"));
  QTRY_COMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("let jumps = over;"));
  // The dark theme: the tint follows, the text is not read again.
  QMetaObject::invokeMethod(root.get(), "setThemeMode", Q_ARG(QVariant, QStringLiteral("dark")));
  const QColor darkDraft(QStringLiteral("#80cbc4"));
  QTRY_COMPARE(charsIn(docOf(QStringLiteral("messageProse")), darkDraft), QStringLiteral("quick"));
  QTRY_COMPARE(charsIn(docOf(QStringLiteral("codeText")), darkDraft), QStringLiteral("letjumps"));
  // Without marked text (tinting off): the same words, nothing tinted.
  content->setProperty("markedText", QString());
  QTRY_COMPARE(charsIn(docOf(QStringLiteral("messageProse")), darkDraft), QString());
  QTRY_COMPARE(charsIn(docOf(QStringLiteral("codeText")), darkDraft), QString());
  QCOMPARE(docOf(QStringLiteral("codeText"))->toPlainText(), QStringLiteral("let jumps = over;"));
}

QTEST_MAIN(TestMarkdownStyler)
#include "test_markdown_styler.moc"
