// Translations: both .ts files are complete and in step (no unfinished, obsolete or vanished
// entries; every source in both), every user-visible string literal in the QML and the C++ goes
// through qsTr()/tr(), the embedded Korean .qm loads, the CJK font covers every Korean character,
// and switching the language at run time retranslates the window without a restart.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFontDatabase>
#include <QFontMetrics>
#include <QGuiApplication>
#include <QMap>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>
#include <QXmlStreamReader>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"
#include "app/main_window.h"
#include "app/translator.h"
#include "gui_test_util.h"
#include "test_paths.h"

namespace {

const QString kSourceDir = QStringLiteral(PAGEDCHAT_SOURCE_DIR);
const QString kKoreanFont = QStringLiteral("Noto Sans CJK KR");

struct TsMessage {
  QString context;
  QString source;
  QStringList translations;  // one, or the numerus forms
  QString type;              // the <translation type="..."> attribute
  bool numerus = false;
};

/// The messages of a .ts file, keyed by "context\x1fsource"; `error` set when it cannot be read.
QMap<QString, TsMessage> readTs(const QString& path, QString* error) {
  QMap<QString, TsMessage> messages;
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    *error = QStringLiteral("cannot open %1").arg(path);
    return messages;
  }
  QXmlStreamReader xml(&file);
  QString context;
  TsMessage current;
  while (!xml.atEnd()) {
    xml.readNext();
    if (xml.isStartElement()) {
      const auto name = xml.name();
      if (name == QLatin1String("name")) {
        context = xml.readElementText();
      } else if (name == QLatin1String("message")) {
        current = TsMessage{context, {}, {}, {}, xml.attributes().value("numerus") == QLatin1String("yes")};
      } else if (name == QLatin1String("source")) {
        current.source = xml.readElementText();
      } else if (name == QLatin1String("translation")) {
        current.type = xml.attributes().value("type").toString();
        if (!current.numerus) current.translations.append(xml.readElementText());
      } else if (name == QLatin1String("numerusform")) {
        current.translations.append(xml.readElementText());
      }
    } else if (xml.isEndElement() && xml.name() == QLatin1String("message")) {
      messages.insert(current.context + QChar(0x1f) + current.source, current);
    }
  }
  if (xml.hasError()) *error = QStringLiteral("%1: %2").arg(path, xml.errorString());
  return messages;
}

/// Problems of one .ts file on its own: unfinished, obsolete, vanished or empty translations.
QStringList tsProblems(const QString& name, const QMap<QString, TsMessage>& messages) {
  QStringList problems;
  for (const TsMessage& m : messages) {
    const QString where = QStringLiteral("%1: [%2] \"%3\"").arg(name, m.context, m.source);
    if (!m.type.isEmpty()) problems << QStringLiteral("%1 is %2").arg(where, m.type);
    if (m.translations.isEmpty()) problems << QStringLiteral("%1 has no translation").arg(where);
    for (const QString& t : m.translations)
      if (t.trimmed().isEmpty()) problems << QStringLiteral("%1 has an empty translation").arg(where);
  }
  return problems;
}

/// A string literal's text with \uXXXX, \n and \t escapes decoded.
QString unescape(QString literal) {
  static const QRegularExpression escape(QStringLiteral("\\\\u([0-9a-fA-F]{4})"));
  QRegularExpressionMatch m;
  while ((m = escape.match(literal)).hasMatch())
    literal.replace(m.capturedStart(), m.capturedLength(), QChar(m.captured(1).toUShort(nullptr, 16)));
  literal.replace(QLatin1String("\\n"), QLatin1String("\n"));
  literal.replace(QLatin1String("\\t"), QLatin1String("\t"));
  return literal;
}

bool hasLetters(const QString& text) {
  for (const QChar c : text)
    if (c.isLetter()) return true;
  return false;
}

/// Literals with letters in `value` that are not the text argument of qsTr()/qsTranslate()/tr().
QStringList untranslatedLiterals(const QString& value) {
  static const QRegularExpression literal(QStringLiteral("\"((?:[^\"\\\\]|\\\\.)*)\""));
  static const QRegularExpression translated(QStringLiteral(
      "(?:\\bqsTr|\\bqsTrId|\\bqsTranslate|\\btr|\\btranslate)\\(\\s*$|\\bqsTranslate\\(\\s*\"[^\"]*\"\\s*,\\s*$|"
      "\\btranslate\\(\\s*\"[^\"]*\"\\s*,\\s*$"));
  QStringList found;
  for (auto it = literal.globalMatch(value); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    const QString text = unescape(m.captured(1));
    if (!hasLetters(text)) continue;  // symbols such as "\u2630" or "\u00d7"
    if (translated.match(value.left(m.capturedStart())).hasMatch()) continue;
    found << text;
  }
  return found;
}

/// "file:line: text" for each untranslated user-visible literal in QML `source`: the values of
/// text, placeholderText, title, Accessible.name/description and ToolTip.text.
QStringList scanQml(const QString& file, const QString& source) {
  static const QRegularExpression property(QStringLiteral(
      "^\\s*(text|placeholderText|title|Accessible\\.name|Accessible\\.description|ToolTip\\.text)\\s*:\\s*(.*)$"));
  QStringList problems;
  const QStringList lines = source.split(QLatin1Char('\n'));
  for (int i = 0; i < lines.size(); ++i) {
    const QRegularExpressionMatch m = property.match(lines[i]);
    if (!m.hasMatch()) continue;
    for (const QString& text : untranslatedLiterals(m.captured(2)))
      problems << QStringLiteral("%1:%2: %3: \"%4\"").arg(file).arg(i + 1).arg(m.captured(1), text);
  }
  return problems;
}

/// "file:line: text" for each literal handed untranslated to what the UI shows from C++: error
/// texts, load errors, rejected requests and the window headlines.
QStringList scanCpp(const QString& file, const QString& source) {
  static const QRegularExpression sink(
      QStringLiteral("\\b(setErrorText|failAllActive|requestRejected|setTitle|loadErrorWindow|(?:loadError_|errorText_|"
                     "headline|hint)\\s*=)\\s*\\(?(.*)$"));
  QStringList problems;
  const QStringList lines = source.split(QLatin1Char('\n'));
  for (int i = 0; i < lines.size(); ++i) {
    const QRegularExpressionMatch m = sink.match(lines[i]);
    if (!m.hasMatch()) continue;
    for (const QString& text : untranslatedLiterals(m.captured(2)))
      problems << QStringLiteral("%1:%2: %3: \"%4\"").arg(file).arg(i + 1).arg(m.captured(1), text);
  }
  return problems;
}

QString readText(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll());
}

}  // namespace

class TestTranslations : public QObject {
  Q_OBJECT

 private slots:
  void tsFilesCompleteAndInStep();
  void scannerFindsUntranslatedStrings();
  void everyUserVisibleStringIsTranslatable();
  void embeddedTranslationsLoad();
  void cjkFontCoversKorean();
  void switchesLanguageAtRunTime();
  void kvCacheTypesFitInKorean();
};

void TestTranslations::tsFilesCompleteAndInStep() {
  QString error;
  const auto en = readTs(kSourceDir + "/translations/pagedchat_en.ts", &error);
  QVERIFY2(error.isEmpty(), qPrintable(error));
  const auto ko = readTs(kSourceDir + "/translations/pagedchat_ko.ts", &error);
  QVERIFY2(error.isEmpty(), qPrintable(error));
  QVERIFY(en.size() > 50);

  QStringList problems = tsProblems(QStringLiteral("pagedchat_en.ts"), en) +
                         tsProblems(QStringLiteral("pagedchat_ko.ts"), ko);
  for (const TsMessage& m : en)
    if (!ko.contains(m.context + QChar(0x1f) + m.source))
      problems << QStringLiteral("[%1] \"%2\" is missing from pagedchat_ko.ts").arg(m.context, m.source);
  for (const TsMessage& m : ko)
    if (!en.contains(m.context + QChar(0x1f) + m.source))
      problems << QStringLiteral("[%1] \"%2\" is missing from pagedchat_en.ts").arg(m.context, m.source);
  for (const TsMessage& m : en)
    if (m.numerus && m.translations.size() != 2)
      problems << QStringLiteral("en [%1] \"%2\" needs 2 numerus forms").arg(m.context, m.source);
  for (const TsMessage& m : ko)
    if (m.numerus && m.translations.size() != 1)
      problems << QStringLiteral("ko [%1] \"%2\" needs 1 numerus form").arg(m.context, m.source);
  QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
}

void TestTranslations::scannerFindsUntranslatedStrings() {
  const QString qml = QStringLiteral(
      "Label {\n"
      "    text: \"Hello\"\n"
      "    placeholderText: qsTr(\"Fine\")\n"
      "    Accessible.name: busy ? qsTr(\"Busy\") : \"Idle\"\n"
      "    ToolTip.text: qsTr(\"%1 left\").arg(\"x\") + \"\\u00d7\"\n"
      "    title: qsTranslate(\"Ctx\", \"Also fine\")\n"
      "}\n");
  const QStringList found = scanQml(QStringLiteral("T.qml"), qml);
  QCOMPARE(found, QStringList({QStringLiteral("T.qml:2: text: \"Hello\""),
                               QStringLiteral("T.qml:4: Accessible.name: \"Idle\""),
                               QStringLiteral("T.qml:5: ToolTip.text: \"x\"")}));
  const QString cpp = QStringLiteral(
      "  setErrorText(QStringLiteral(\"Oops\"));\n"
      "  setErrorText(tr(\"Fine: %1\").arg(x));\n"
      "  loadError_ = tr(\"Fine\");\n"
      "  loadErrorWindow(engine, headline, details + QStringLiteral(\"\\n\\n\") + hint);\n");
  QCOMPARE(scanCpp(QStringLiteral("t.cpp"), cpp), QStringList({QStringLiteral("t.cpp:1: setErrorText: \"Oops\"")}));
}

void TestTranslations::everyUserVisibleStringIsTranslatable() {
  QStringList problems;
  // Every QML and C++ file of app/, in its folders (relative paths in the messages).
  const QDir sourceDir(kSourceDir);
  int qmlFiles = 0;
  for (QDirIterator it(kSourceDir + "/app/qml", {QStringLiteral("*.qml")}, QDir::Files, QDirIterator::Subdirectories);
       it.hasNext();) {
    const QString path = it.next();
    problems += scanQml(sourceDir.relativeFilePath(path), readText(path));
    ++qmlFiles;
  }
  QVERIFY(qmlFiles > 10);
  int cppFiles = 0;
  for (QDirIterator it(kSourceDir + "/app", {QStringLiteral("*.cpp")}, QDir::Files, QDirIterator::Subdirectories);
       it.hasNext();) {
    const QString path = it.next();
    if (path.contains(QStringLiteral("/bench/"))) continue;
    problems += scanCpp(sourceDir.relativeFilePath(path), readText(path));
    ++cppFiles;
  }
  QVERIFY(cppFiles > 30);
  QVERIFY2(problems.isEmpty(),
           qPrintable(QStringLiteral("user-visible strings not in qsTr()/tr():\n") + problems.join(QLatin1Char('\n'))));
}

void TestTranslations::embeddedTranslationsLoad() {
  QTranslator ko;
  QVERIFY2(ko.load(QStringLiteral(":/i18n/pagedchat_ko.qm")), "the Korean .qm is not embedded");
  QCOMPARE(ko.translate("ConversationList", "New chat"), QStringLiteral("새 대화"));
  QCOMPARE(ko.translate("StatusLine", "%n running", nullptr, 3), QStringLiteral("%n개 실행 중"));
  QTranslator en;
  QVERIFY2(en.load(QStringLiteral(":/i18n/pagedchat_en.qm")), "the English .qm is not embedded");
  QCOMPARE(Translator::languageFor(QLocale(QStringLiteral("ko_KR"))), QStringLiteral("ko"));
  QCOMPARE(Translator::languageFor(QLocale(QStringLiteral("de_DE"))), QStringLiteral("en"));
}

void TestTranslations::cjkFontCoversKorean() {
  if (!QFontDatabase::families().contains(kKoreanFont)) {
    const QString why = kKoreanFont + QStringLiteral(" is not installed (Debian: fonts-noto-cjk)");
    if (testpaths::inCI()) QFAIL(qPrintable(why));
    QSKIP(qPrintable(why));
  }
  QString error;
  const auto ko = readTs(kSourceDir + "/translations/pagedchat_ko.ts", &error);
  QVERIFY2(error.isEmpty(), qPrintable(error));

  // The app's UI font, with the CJK font Qt falls back to for Hangul.
  QFont font = QGuiApplication::font();
  font.setFamilies({QGuiApplication::font().family(), kKoreanFont});
  const QFontMetrics uiMetrics(font);
  const QFontMetrics cjkMetrics{QFont(kKoreanFont)};
  QSet<char32_t> missing;
  int hangul = 0;
  for (const TsMessage& m : ko) {
    for (const QString& t : m.translations) {
      for (const char32_t c : t.toUcs4()) {
        if (QChar::isSpace(c) || c < 0x20) continue;
        if (c >= 0xAC00 && c <= 0xD7A3) ++hangul;
        if (!cjkMetrics.inFontUcs4(c) && !uiMetrics.inFontUcs4(c)) missing.insert(c);
      }
    }
  }
  QVERIFY(hangul > 100);
  QStringList list;
  for (char32_t c : missing) list << QStringLiteral("U+%1").arg(uint(c), 4, 16, QLatin1Char('0'));
  QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("characters without a glyph: ") + list.join(' ')));
}

namespace {
/// The main window of an app (not started: no model needed) whose saved language is `language`,
/// in a data folder of its own.
struct WindowInLanguage {
  explicit WindowInLanguage(const QString& language) {
    {
      QSettings settings(AppController::settingsFile(dir.path()), QSettings::IniFormat);
      settings.setValue(Translator::settingsKey(), language);
    }
    AppOptions options;
    options.modelPath = dir.filePath(QStringLiteral("no-model"));
    options.dataDir = dir.path();
    controller = std::make_unique<AppController>(options);
    window = loadMainWindow(engine, controller.get());
  }
  /// True once the window is shown.
  bool shown() const { return window && QTest::qWaitForWindowExposed(window); }

  QTemporaryDir dir;
  std::unique_ptr<AppController> controller;
  QQmlApplicationEngine engine;  // destroyed before the controller its QML uses
  QQuickWindow* window = nullptr;
};
}  // namespace

void TestTranslations::switchesLanguageAtRunTime() {
  WindowInLanguage app(QStringLiteral("en"));
  QVERIFY(app.dir.isValid());
  AppController& controller = *app.controller;
  QCOMPARE(controller.appearance()->language(), QStringLiteral("en"));
  QVERIFY(app.shown());
  QQuickWindow* window = app.window;
  QQuickItem* newButton = apptest::findItem(window->contentItem(), QStringLiteral("newConversationButton"));
  QQuickItem* languageButton = apptest::findItem(window->contentItem(), QStringLiteral("languageButton"));
  QVERIFY(newButton && languageButton);
  QCOMPARE(newButton->property("text").toString(), QStringLiteral("New chat"));
  QCOMPARE(languageButton->property("text").toString(), QStringLiteral("Language: English"));

  // The status line's model summary, worded when the model loaded, follows the language too.
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  controller.models()->openModel(testpaths::stories260K());
  QQuickItem* details = apptest::findItem(window->contentItem(), QStringLiteral("modelDetails"));
  QVERIFY(details);
  QTRY_VERIFY_WITH_TIMEOUT(details->property("fullText").toString().contains(QLatin1String(" layers")), 60000);

  QSignalSpy changed(controller.appearance(), &Appearance::languageChanged);
  QVERIFY(controller.appearance()->setProperty("language", QStringLiteral("ko")));  // as QML does
  QCOMPARE(changed.count(), 1);
  QTRY_COMPARE(newButton->property("text").toString(), QStringLiteral("새 대화"));
  QTRY_VERIFY2(details->property("fullText").toString().contains(QStringLiteral("레이어")),
               qPrintable(details->property("fullText").toString()));
  QCOMPARE(languageButton->property("text").toString(), QStringLiteral("언어: 한국어"));
  QCOMPARE(window->title(), QStringLiteral("PagedChat"));

  // Saved: the next start (a new Translator on the same file) comes up in Korean.
  {
    Translator next(AppController::settingsFile(app.dir.path()));
    QCOMPARE(next.language(), QStringLiteral("ko"));
    QCOMPARE(next.effectiveLanguage(), QStringLiteral("ko"));
  }
  controller.appearance()->setLanguage(QStringLiteral("xx"));  // unknown: ignored
  QCOMPARE(controller.appearance()->language(), QStringLiteral("ko"));

  controller.appearance()->setLanguage(QStringLiteral("en"));
  QTRY_COMPARE(newButton->property("text").toString(), QStringLiteral("New chat"));
}

void TestTranslations::kvCacheTypesFitInKorean() {
  // Korean text is wider than English: every entry of the engine page's KV cache type list shows
  // whole (none cut off with "…") when the list is open.
  WindowInLanguage app(QStringLiteral("ko"));
  QVERIFY(app.dir.isValid());
  QVERIFY(app.shown());
  QQuickWindow* window = app.window;
  QQuickItem* root = window->contentItem();
  QVERIFY(QMetaObject::invokeMethod(window, "openSettings"));
  QTRY_VERIFY(apptest::findVisibleItem(root, QStringLiteral("settingsTabs")));
  QQuickItem* tabs = apptest::findItem(root, QStringLiteral("settingsTabs"));
  int engineTab = -1;  // the tab whose page is the engine page
  for (int i = 0; i < 8 && engineTab < 0; ++i) {
    tabs->setProperty("currentIndex", i);
    if (QTest::qWaitFor([&] { return apptest::findVisibleItem(root, QStringLiteral("kvCacheDtypeField")); }, 500))
      engineTab = i;
  }
  QVERIFY(engineTab >= 0);
  QQuickItem* combo = apptest::findVisibleItem(root, QStringLiteral("kvCacheDtypeField"));
  QObject* popup = combo->property("popup").value<QObject*>();
  QVERIFY(popup);
  QVERIFY(QMetaObject::invokeMethod(popup, "open"));
  QTRY_VERIFY(popup->property("opened").toBool());
  const int count = combo->property("count").toInt();
  QCOMPARE(count, 5);
  const qreal listWidth = popup->property("width").toReal();
  QQuickItem* listContent = popup->property("contentItem").value<QQuickItem*>();
  QVERIFY(listContent);
  QStringList cut;
  for (int i = 0; i < count; ++i) {
    QString text;
    QVERIFY(QMetaObject::invokeMethod(combo, "textAt", Q_RETURN_ARG(QString, text), Q_ARG(int, i)));
    QVERIFY2(!text.isEmpty() && !text.contains(QLatin1String("bytes per value")), qPrintable(text));  // Korean
    // The width one line of this text needs in the list's font, with the delegate's padding.
    QFontMetricsF metrics(combo->property("font").value<QFont>());
    const qreal needed = metrics.horizontalAdvance(text) + combo->property("leftPadding").toReal() +
                         combo->property("rightPadding").toReal();
    if (needed > listWidth + 0.5) cut << QStringLiteral("%1 (%2 > %3)").arg(text).arg(needed).arg(listWidth);
  }
  QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1String("; "))));
}

QTEST_MAIN(TestTranslations)
#include "test_translations.moc"
