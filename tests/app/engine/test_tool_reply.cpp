// A reply of a request that offered tools, as a pane gets it (ToolReplySplitter on the engine
// worker: the calls out of the text, reasoning untouched, whatever the pieces), and the messages
// of a conversation with tool calls and results as the chat template gets them.
#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <nlohmann/json.hpp>

#include "app/engine/chat_prompt.h"
#include "app/engine/engine_worker.h"
#include "app/engine/tool_reply.h"
#include "app_test_util.h"
#include "test_paths.h"

using pagedchat::openai::ToolCallFormat;
Q_DECLARE_METATYPE(ToolCallFormat)

namespace {

const nlohmann::json kTools = nlohmann::json::parse(
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\","
    " \"properties\": {\"city\": {\"type\": \"string\"}}}}}]");

struct Split {
  QString text;
  QJsonArray calls;
};

/// `reply` fed in pieces of `size` characters (0 = whole).
Split splitInPieces(ToolCallFormat format, const QString& reply, int size) {
  ToolReplySplitter splitter(format, kTools);
  Split out;
  const int step = size > 0 ? size : static_cast<int>(reply.size()) + 1;
  for (qsizetype i = 0; i < reply.size(); i += step) out.text += splitter.feed(reply.mid(i, step));
  out.text += splitter.finish();
  const QString calls = splitter.toolCallsJson();
  if (!calls.isEmpty()) out.calls = QJsonDocument::fromJson(calls.toUtf8()).array();
  return out;
}

/// A reply forced by `toolChoice`, fed in pieces of `size` characters.
Split forcedInPieces(const QString& toolChoice, const QString& reply, int size) {
  ToolReplySplitter splitter(toolChoice);
  Split out;
  for (qsizetype i = 0; i < reply.size(); i += size) out.text += splitter.feed(reply.mid(i, size));
  out.text += splitter.finish();
  const QString calls = splitter.toolCallsJson();
  if (!calls.isEmpty()) out.calls = QJsonDocument::fromJson(calls.toUtf8()).array();
  return out;
}

/// The calls without their ids (new random ones per split), each id checked.
QJsonArray withoutIds(QJsonArray calls) {
  for (qsizetype i = 0; i < calls.size(); ++i) {
    QJsonObject c = calls.at(i).toObject();
    if (!c.value("id").toString().startsWith("call_")) return {};
    c.remove("id");
    calls.replace(i, c);
  }
  return calls;
}

MessageRecord record(MessageRole role, const QString& text, const QString& fields = {}) {
  MessageRecord r;
  r.role = role;
  r.text = text;
  r.fields = fields;
  return r;
}

}  // namespace

class TestToolReply : public QObject {
  Q_OBJECT

 private slots:
  void split_data() {
    QTest::addColumn<ToolCallFormat>("format");
    QTest::addColumn<QString>("reply");
    QTest::addColumn<QString>("textStart");  // what the shown text starts with
    QTest::addColumn<QString>("textEnd");    // and ends with (trimmed)
    QTest::addColumn<int>("numCalls");
    QTest::addColumn<QString>("city");  // the first call's argument
    QTest::newRow("hermes after text")
        << ToolCallFormat::kHermes
        << "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Seoul\"}}\n</tool_call>"
        << "Let me check."
        << "Let me check." << 1 << "Seoul";
    QTest::newRow("hermes after reasoning")
        << ToolCallFormat::kHermes
        << "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", "
           "\"arguments\": {\"city\": \"서울\"}}\n</tool_call>"
        << "<think>\nThe user wants the weather.\n</think>"
        << "</think>" << 1 << "서울";
    QTest::newRow("a call only thought about is not run")
        << ToolCallFormat::kHermes
        << "<think>\nMaybe <tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>?\n</think>\n\nNo "
           "tool is needed."
        << "<think>\nMaybe <tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>?\n</think>"
        << "No tool is needed." << 0 << "";
    QTest::newRow("qwen xml")
        << ToolCallFormat::kQwenXml
        << "<tool_call>\n<function=get_weather>\n<parameter=city>\nBusan\n</parameter>\n</function>\n</tool_call>"
        << ""
        << "" << 1 << "Busan";
    QTest::newRow("two calls")
        << ToolCallFormat::kHermes
        << "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Seoul\"}}\n</tool_call>\n"
           "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Jeju\"}}\n</tool_call>"
        << ""
        << "" << 2 << "Seoul";
    QTest::newRow("plain answer") << ToolCallFormat::kHermes << "안녕하세요! 무엇을 도와드릴까요?"
                                  << "안녕하세요!"
                                  << "무엇을 도와드릴까요?" << 0 << "";
    QTest::newRow("cut off in the tag") << ToolCallFormat::kHermes << "  <thi"
                                        << "  <thi"
                                        << "<thi" << 0 << "";
    QTest::newRow("no format") << ToolCallFormat::kNone
                               << "<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>"
                               << "<tool_call>"
                               << "</tool_call>" << 0 << "";
  }
  void split() {
    QFETCH(ToolCallFormat, format);
    QFETCH(QString, reply);
    QFETCH(QString, textStart);
    QFETCH(QString, textEnd);
    QFETCH(int, numCalls);
    QFETCH(QString, city);
    const Split whole = splitInPieces(format, reply, 0);
    QVERIFY2(whole.text.startsWith(textStart), qPrintable(whole.text));
    QVERIFY2(whole.text.trimmed().endsWith(textEnd), qPrintable(whole.text));
    QVERIFY2(!whole.text.contains("<tool_call>") || numCalls == 0, qPrintable(whole.text));
    QCOMPARE(whole.calls.size(), numCalls);
    if (numCalls > 0) {
      const QJsonObject first = whole.calls.first().toObject();
      QCOMPARE(first.value("type").toString(), QStringLiteral("function"));
      const QJsonObject function = first.value("function").toObject();
      QCOMPARE(function.value("name").toString(), QStringLiteral("get_weather"));
      // arguments: a JSON object's text, as OpenAI sends it
      const QJsonObject args = QJsonDocument::fromJson(function.value("arguments").toString().toUtf8()).object();
      QCOMPARE(args.value("city").toString(), city);
    }
    // The same whatever the pieces: a tag or "</think>" split between two deltas included.
    for (int size : {1, 2, 3, 5, 8, 13}) {
      const Split pieces = splitInPieces(format, reply, size);
      QCOMPARE(pieces.text, whole.text);
      QCOMPARE(withoutIds(pieces.calls), withoutIds(whole.calls));
    }
  }

  // A reply that tool_choice forced: the JSON is the calls, never text; a reasoning block before it
  // is shown as it is; one cut short (no whole call) stays text, so that nothing is lost.
  void forcedReplies_data() {
    QTest::addColumn<QString>("toolChoice");
    QTest::addColumn<QString>("reply");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("calls");  // [name, arguments object] pairs, compact JSON
    QTest::newRow("named") << "get_weather"
                           << "{\"city\": \"Seoul\"}"
                           << ""
                           << R"([["get_weather",{"city":"Seoul"}]])";
    QTest::newRow("named, white space") << "get_weather"
                                        << "  {\t}\n"
                                        << ""
                                        << R"([["get_weather",{}]])";
    QTest::newRow("required, two") << "required"
                                   << R"([{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {}}])"
                                   << ""
                                   << R"([["a",{"x":1}],["b",{}]])";
    QTest::newRow("reasoning first") << "get_weather"
                                     << "<think>\nWhich city?\n</think>\n\n{\"city\": \"부산\"}"
                                     << "<think>\nWhich city?\n</think>"
                                     << R"([["get_weather",{"city":"부산"}]])";
    QTest::newRow("cut short") << "get_weather"
                               << "{\"city\": \"Seo"
                               << "{\"city\": \"Seo"
                               << "[]";
    QTest::newRow("required, cut before an item") << "required"
                                                  << "[{\"name\": \"a\", \"param"
                                                  << "[{\"name\": \"a\", \"param"
                                                  << "[]";
    QTest::newRow("cut while reasoning") << "required"
                                         << "<think>\nhmm"
                                         << "<think>\nhmm"
                                         << "[]";
  }
  void forcedReplies() {
    QFETCH(QString, toolChoice);
    QFETCH(QString, reply);
    QFETCH(QString, text);
    QFETCH(QString, calls);
    for (int size : {1, 3, 7, 1000}) {
      const Split out = forcedInPieces(toolChoice, reply, size);
      QCOMPARE(out.text.trimmed(), text);
      QJsonArray got;
      for (const QJsonValue& c : out.calls) {
        const QJsonObject fn = c.toObject().value("function").toObject();
        QVERIFY(c.toObject().value("id").toString().startsWith("call_"));
        got.append(
            QJsonArray{fn.value("name"), QJsonDocument::fromJson(fn.value("arguments").toString().toUtf8()).object()});
      }
      QCOMPARE(got, QJsonDocument::fromJson(calls.toUtf8()).array());
    }
  }

  void toolMessagesGoToTheTemplate() {
    // A turn that called two tools: the reply with its calls, one result per call (never joined:
    // each answers its own call), then the answer; the next question comes after.
    const QString calls = QStringLiteral(
        "{\"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"get_weather\","
        " \"arguments\": \"{\\\"city\\\": \\\"Seoul\\\"}\"}}, {\"id\": \"call_2\", \"type\": \"function\","
        " \"function\": {\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Jeju\\\"}\"}}]}");
    const QString result1 = QStringLiteral("{\"tool_call_id\": \"call_1\", \"name\": \"get_weather\"}");
    const QString result2 = QStringLiteral("{\"tool_call_id\": \"call_2\", \"name\": \"get_weather\"}");
    const QList<MessageRecord> history = {
        record(MessageRole::kUser, "Weather in Seoul and Jeju?"),
        record(MessageRole::kAssistant, "Checking both.", calls),
        record(MessageRole::kTool, "sunny", result1),
        record(MessageRole::kTool, "rainy", result2),
        record(MessageRole::kAssistant, "Seoul is sunny, Jeju rainy."),
    };
    const QList<PromptMessage> m = buildChatMessages(QStringLiteral("Be brief."), history, QStringLiteral("Thanks"));
    QList<MessageRole> roles;
    for (const PromptMessage& p : m) roles.append(p.role);
    QVERIFY(roles ==
            (QList<MessageRole>{MessageRole::kSystem, MessageRole::kUser, MessageRole::kAssistant, MessageRole::kTool,
                                MessageRole::kTool, MessageRole::kAssistant, MessageRole::kUser}));
    QCOMPARE(m[2].fields, calls);
    QCOMPARE(m[3].text, QStringLiteral("sunny"));
    QCOMPARE(m[3].fields, result1);
    QCOMPARE(m[4].fields, result2);
    QVERIFY(m[5].fields.isEmpty());
    QCOMPARE(m[3].firstRow, 2);
    const std::vector<pagedchat::ChatMessage> chat = toChatMessages(m);
    QCOMPARE(chat[3].role, std::string("tool"));
    QCOMPARE(QString::fromStdString(chat[2].fields_json), calls);
    QCOMPARE(QString::fromStdString(chat[4].fields_json), result2);

    // A reply stored in two pieces, the second with the calls: joined, the calls kept.
    const QList<MessageRecord> split = {
        record(MessageRole::kUser, "Weather?"),
        record(MessageRole::kAssistant, "Let me see."),
        record(MessageRole::kAssistant, "", calls),
        record(MessageRole::kTool, "sunny", result1),
    };
    const QList<PromptMessage> joined = buildConversationMessages(QString(), split);
    QCOMPARE(joined.size(), 3);
    QCOMPARE(joined[1].fields, calls);
    QCOMPARE(joined[1].lastRow, 2);
    // A result with no call before it (its reply was deleted) answers nothing at the start.
    const QList<PromptMessage> orphan = buildConversationMessages(QString(),
                                                                  {record(MessageRole::kTool, "sunny", result1)});
    QVERIFY(orphan.isEmpty());
  }
  void workerRendersTools() {
    // The worker gives the tools to the template's `tools` variable and the calls and results to
    // its messages (a template that prints them, with Hermes' tag so the format is known); a
    // tools text that is no JSON array is refused.
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    QTemporaryDir dir;
    const QString jinja = dir.filePath(QStringLiteral("tools.jinja"));
    {
      QFile f(jinja);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(
          "{% if tools %}You may call: {% for t in tools %}{{ t.function.name }} {% endfor %}"
          "as <tool_call>json</tool_call>\n{% endif %}"
          "{% for m in messages %}{{ m.role }}: {{ m.content }}"
          "{% if m.tool_calls %} [calls {{ m.tool_calls[0].function.name }}]{% endif %}"
          "{% if m.tool_call_id %} [for {{ m.tool_call_id }}]{% endif %}\n{% endfor %}");
    }
    auto* worker = new EngineWorker(apptest::storiesConfig(), jinja);
    QThread thread;
    worker->moveToThread(&thread);
    connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
    thread.start();
    QSignalSpy loaded(worker, &EngineWorker::modelLoaded);
    QSignalSpy rejected(worker, &EngineWorker::requestRejected);
    QHash<QString, RequestDelta> last;
    connect(
        worker, &EngineWorker::stepFinished, this,
        [&](const QList<RequestDelta>& deltas) {
          for (const RequestDelta& d : deltas)
            if (d.finished) last.insert(d.requestId, d);
        },
        Qt::QueuedConnection);
    QMetaObject::invokeMethod(worker, &EngineWorker::loadModel, Qt::QueuedConnection);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
    pagedchat::SamplingParams p;
    p.temperature = 0;
    p.max_tokens = 4;
    const QString tools = QString::fromStdString(kTools.dump());
    const QString calls = QStringLiteral(
        "{\"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": "
        "\"get_weather\", \"arguments\": \"{}\"}}]}");
    const QList<PromptMessage> plain = {{MessageRole::kUser, QStringLiteral("Weather?")}};
    const QList<PromptMessage> withResult = {
        {MessageRole::kUser, QStringLiteral("Weather?")},
        {MessageRole::kAssistant, QString(), -1, -1, calls},
        {MessageRole::kTool, QStringLiteral("sunny"), -1, -1, QStringLiteral("{\"tool_call_id\": \"call_1\"}")}};
    auto submit = [&](const QString& id, const QList<PromptMessage>& m, const QString& t) {
      QMetaObject::invokeMethod(
          worker, [worker, id, m, p, t] { worker->submit(id, m, p, false, QString(), t); }, Qt::QueuedConnection);
    };
    submit(QStringLiteral("plain"), plain, QString());
    submit(QStringLiteral("tools"), plain, tools);
    submit(QStringLiteral("result"), withResult, tools);
    submit(QStringLiteral("bad"), plain, QStringLiteral("{\"not\": \"an array\"}"));
    QTRY_VERIFY_WITH_TIMEOUT(last.size() == 3 && rejected.count() == 1, 30000);
    thread.quit();
    thread.wait();
    QCOMPARE(rejected.at(0).at(0).toString(), QStringLiteral("bad"));
    QVERIFY2(rejected.at(0).at(1).toString().contains(QStringLiteral("tools")),
             qPrintable(rejected.at(0).at(1).toString()));
    // "You may call: get_weather as <tool_call>json</tool_call>" and the two messages' marks add tokens.
    const int base = last.value("plain").numPromptTokens;
    QVERIFY(base > 0);
    QVERIFY2(last.value("tools").numPromptTokens > base + 8,
             qPrintable(QStringLiteral("%1 vs %2").arg(last.value("tools").numPromptTokens).arg(base)));
    QVERIFY(last.value("result").numPromptTokens > last.value("tools").numPromptTokens + 8);
    // A story model makes no call: its text comes through, no calls.
    QVERIFY(last.value("tools").toolCalls.isEmpty());
    QVERIFY(last.value("plain").toolCalls.isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestToolReply)
#include "test_tool_reply.moc"
