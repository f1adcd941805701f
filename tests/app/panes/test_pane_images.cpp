// Pictures in a local pane, end to end without the window: gemma3-tiny with its projector found
// beside it (an mmproj*.gguf in the model's folder), a picture attached from a file, sent with a
// question, stored in SQLite with the message, read back on reopening and sent again by
// Regenerate (greedy: the same answer, which a question without the picture does not get), kept
// through JSON export and import. A model without a projector, and a file that is no picture,
// are refused with a message and nothing is attached.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include "app/engine/local_chat_backend.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app_test_util.h"

namespace {

const QString kVision = QStringLiteral(VISION_DIR);

QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

/// gemma3-tiny and its projector copied into `dir` (the projector under the name a hub
/// repository gives it), as a user's download folder holds them.
QString modelWithProjector(const QTemporaryDir& dir) {
  const QString model = dir.filePath(QStringLiteral("gemma3-tiny.gguf"));
  QFile::copy(testpaths::modelFile(QStringLiteral("arch/gemma3-tiny.gguf")), model);
  QFile::copy(kVision + QStringLiteral("/gemma3-tiny-mmproj.gguf"), dir.filePath(QStringLiteral("mmproj-F16.gguf")));
  return model;
}

pagedchat::EngineConfig configFor(const QString& model) {
  pagedchat::EngineConfig c;
  c.model = model.toStdString();
  c.num_threads = 2;
  c.max_model_len = 512;
  return c;
}

QString lastReply(PaneState& pane) {
  auto* m = static_cast<MessageListModel*>(pane.messageModel());
  return m->rowCount() > 0 ? m->at(m->rowCount() - 1).text : QString();
}

}  // namespace

class TestPaneImages : public QObject {
  Q_OBJECT
 private slots:
  void imageGoesWithTheMessage() {
    REQUIRE_MODEL_FILE(testpaths::modelFile(QStringLiteral("arch/gemma3-tiny.gguf")));
    QTemporaryDir models, data;
    QVERIFY(models.isValid() && data.isValid());
    ChatStore store(data.path());
    LocalChatBackend engine(configFor(modelWithProjector(models)), nullptr, QStringLiteral("gemma"));
    QVERIFY(apptest::startEngine(engine));
    QVERIFY2(engine.readsImages(), "the projector beside the model was not loaded");
    PaneState pane(&store, &engine);
    pane.settings()->setTemperature(0.0);
    pane.settings()->setMaxTokens(8);
    QVERIFY(pane.imagesAccepted());

    // Attach, remove, attach again: the pending list follows.
    const QString square = kVision + QStringLiteral("/square.png");
    QVERIFY2(pane.attachImageFile(QUrl::fromLocalFile(square)), qPrintable(pane.errorText()));
    QVERIFY(pane.attachImageFile(QUrl::fromLocalFile(kVision + QStringLiteral("/tall.jpg"))));
    QCOMPARE(pane.pendingImages().size(), 2);
    pane.removePendingImage(1);
    QCOMPARE(pane.pendingImages().size(), 1);
    QCOMPARE(pane.pendingImages()[0].toMap()[QStringLiteral("width")].toInt(), 32);

    pane.setInputText(QStringLiteral("What is it?"));
    QVERIFY(pane.send());
    QVERIFY(pane.pendingImages().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!pane.isBusy(), 60000);
    QVERIFY2(pane.errorText().isEmpty(), qPrintable(pane.errorText()));
    const QString answer = lastReply(pane);
    QVERIFY(!answer.isEmpty());

    // Stored with the message, and read back.
    const qint64 conversation = pane.conversationId();
    const QList<MessageRecord> stored = store.branch(conversation);
    QCOMPARE(stored.size(), 2);
    QCOMPARE(stored[0].attachments.size(), 1);
    QCOMPARE(stored[0].attachments[0].bytes, readFile(square));
    QCOMPARE(stored[0].attachments[0].mime, QStringLiteral("image/png"));
    QCOMPARE(stored[0].text, QStringLiteral("What is it?"));  // no marker in the stored text

    // Reopened in another pane and regenerated: the picture goes again, the answer is the same.
    PaneState again(&store, &engine);
    again.settings()->setTemperature(0.0);
    again.settings()->setMaxTokens(8);
    again.openConversation(conversation, QStringLiteral("What is it?"));
    QVERIFY(again.regenerate());
    QTRY_VERIFY_WITH_TIMEOUT(!again.isBusy(), 60000);
    QCOMPARE(lastReply(again), answer);

    // The same question without the picture is another prompt: another answer.
    PaneState textOnly(&store, &engine);
    textOnly.settings()->setTemperature(0.0);
    textOnly.settings()->setMaxTokens(8);
    textOnly.setInputText(QStringLiteral("What is it?"));
    QVERIFY(textOnly.send());
    QTRY_VERIFY_WITH_TIMEOUT(!textOnly.isBusy(), 60000);
    QVERIFY2(lastReply(textOnly) != answer, qPrintable(answer));

    // JSON export and import keep the picture.
    const qint64 imported = store.importJson(store.exportJson(conversation));
    const QList<MessageRecord> copy = store.branch(imported);
    QCOMPARE(copy.size(), store.branch(conversation).size());
    QCOMPARE(copy[0].attachments, stored[0].attachments);
    QVERIFY(store.exportMarkdown(conversation).contains(QStringLiteral("32 x 32")));

    // Send to all panes: the typing pane's picture goes to every pane.
    {
      PaneListModel panes(&store, &engine);
      PaneState* first = panes.paneAt(0);
      PaneState* second = panes.addPane();
      QVERIFY(first && second);
      for (PaneState* p : {first, second}) {
        p->settings()->setTemperature(0.0);
        p->settings()->setMaxTokens(4);
      }
      QVERIFY(first->attachImageFile(QUrl::fromLocalFile(square)));
      QCOMPARE(panes.sendToAll(QStringLiteral("Both?"), first), 2);
      QVERIFY(first->pendingImages().isEmpty());
      QTRY_VERIFY_WITH_TIMEOUT(!first->isBusy() && !second->isBusy(), 60000);
      for (PaneState* p : {first, second}) {
        const QList<MessageRecord> rows = store.branch(p->conversationId());
        QVERIFY(!rows.isEmpty());
        QCOMPARE(rows[0].attachments.size(), 1);
        QCOMPARE(rows[0].attachments[0].bytes, readFile(square));
      }
    }

    // Not a picture: refused, nothing attached; a file is named in the error.
    QVERIFY(!pane.attachImageData(QByteArray("not a picture at all")));
    QVERIFY(!pane.errorText().isEmpty());
    QVERIFY(pane.pendingImages().isEmpty());
    QTemporaryDir dir;
    const QString notPicture = dir.filePath(QStringLiteral("holiday.png"));
    QFile bad(notPicture);
    QVERIFY(bad.open(QIODevice::WriteOnly) && bad.write("\x89PNG but not really") > 0);
    bad.close();
    QVERIFY(!pane.attachImageFile(QUrl::fromLocalFile(notPicture)));
    QVERIFY2(pane.errorText().contains(QStringLiteral("holiday.png")), qPrintable(pane.errorText()));
    QVERIFY(pane.pendingImages().isEmpty());
  }

  // A tool result's pictures (an MCP tool's "image" blocks, stored with the tool message) are read
  // by a model that reads images, where they stand in the conversation: the answer to the result
  // differs from the answer to the same result without its picture; on a text model they are left
  // out without a warning (the result's text names them).
  void toolResultPicturesReachTheModel() {
    REQUIRE_MODEL_FILE(testpaths::modelFile(QStringLiteral("arch/gemma3-tiny.gguf")));
    // A real template that renders tool results (Gemma 3's own takes only user and model turns).
    const QString kToolTemplate = testpaths::modelFile(QStringLiteral("chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja"));
    REQUIRE_MODEL_FILE(kToolTemplate);
    QTemporaryDir models, data;
    ChatStore store(data.path());
    const std::optional<ImageAttachment> picture = readImageAttachment(readFile(kVision + QStringLiteral("/wide.png")));
    QVERIFY(picture);
    QCOMPARE(picture->width, 45);
    // user -> a reply that called the tool -> its result -> an answer (regenerated below).
    auto conversationWith = [&](const QList<ImageAttachment>& pictures) {
      const qint64 c = store.createConversation(QStringLiteral("tool picture"));
      const qint64 user = store.addMessage(c, MessageRole::kUser, QStringLiteral("Show me the picture."));
      const QJsonObject call{{"id", "call_0"},
                             {"type", "function"},
                             {"function", QJsonObject{{"name", "get-tiny-image"}, {"arguments", "{}"}}}};
      const qint64 reply = store.addMessage(
          c, MessageRole::kAssistant, QString(), pagedchat::FinishReason::kStop, user, QString(),
          QString::fromUtf8(
              QJsonDocument(QJsonObject{{"tool_calls", QJsonArray{call}}}).toJson(QJsonDocument::Compact)));
      const qint64 result = store.addMessage(
          c, MessageRole::kTool, QStringLiteral("[image: image/png, 191 bytes]"), std::nullopt, reply, QString(),
          QStringLiteral("{\"tool_call_id\":\"call_0\",\"name\":\"get-tiny-image\"}"), pictures);
      store.addMessage(c, MessageRole::kAssistant, QStringLiteral("?"), pagedchat::FinishReason::kStop, result);
      return c;
    };
    const qint64 withPicture = conversationWith({*picture}), without = conversationWith({});
    QCOMPARE(store.branch(withPicture)[2].attachments, QList<ImageAttachment>{*picture});

    auto answerTo = [&](LocalChatBackend& engine, qint64 conversation) {
      PaneState pane(&store, &engine);
      pane.settings()->setTemperature(0.0);
      pane.settings()->setMaxTokens(8);
      pane.openConversation(conversation, QString());
      if (!pane.regenerate()) return QStringLiteral("(not regenerated: %1)").arg(pane.errorText());
      if (!QTest::qWaitFor([&] { return !pane.isBusy(); }, 60000)) return QStringLiteral("(timed out)");
      return pane.errorText().isEmpty() ? lastReply(pane) : QStringLiteral("(error: %1)").arg(pane.errorText());
    };
    {
      LocalChatBackend vision(configFor(modelWithProjector(models)), nullptr, kToolTemplate);
      QVERIFY(apptest::startEngine(vision));
      QVERIFY(vision.readsImages());
      const QString seen = answerTo(vision, withPicture), unseen = answerTo(vision, without);
      QVERIFY2(!seen.startsWith('(') && !unseen.startsWith('('), qPrintable(seen + " / " + unseen));
      QVERIFY2(seen != unseen, qPrintable(seen));
      QCOMPARE(answerTo(vision, withPicture), seen);  // greedy: the picture read the same way again
    }
    QTemporaryDir bare;
    const QString model = bare.filePath(QStringLiteral("gemma3-tiny.gguf"));
    QVERIFY(QFile::copy(testpaths::modelFile(QStringLiteral("arch/gemma3-tiny.gguf")), model));
    LocalChatBackend text(configFor(model), nullptr, kToolTemplate);
    QSignalSpy warnings(&text, &LocalChatBackend::engineWarning);
    QVERIFY(apptest::startEngine(text));
    QVERIFY(!text.readsImages());
    // The text model reads the result's text alone: as if the picture were not there.
    QCOMPARE(answerTo(text, withPicture), answerTo(text, without));
    for (const QList<QVariant>& w : std::as_const(warnings))
      QVERIFY2(!w.at(0).toString().contains(QStringLiteral("left out")), qPrintable(w.at(0).toString()));
  }

  // A conversation with pictures goes on with a text model: the pictures are left out of what it
  // reads (and the window says so) rather than every message being refused.
  void textModelContinuesImageConversation() {
    REQUIRE_MODEL_FILE(testpaths::modelFile(QStringLiteral("arch/gemma3-tiny.gguf")));
    QTemporaryDir models, data;
    ChatStore store(data.path());
    qint64 conversation = 0;
    {
      LocalChatBackend vision(configFor(modelWithProjector(models)), nullptr, QStringLiteral("gemma"));
      QVERIFY(apptest::startEngine(vision));
      PaneState pane(&store, &vision);
      pane.settings()->setMaxTokens(4);
      QVERIFY(pane.attachImageFile(QUrl::fromLocalFile(kVision + QStringLiteral("/square.png"))));
      pane.setInputText(QStringLiteral("Look"));
      QVERIFY(pane.send());
      QTRY_VERIFY_WITH_TIMEOUT(!pane.isBusy(), 60000);
      conversation = pane.conversationId();
    }
    // The same model without its projector (a folder without the mmproj).
    QTemporaryDir bare;
    const QString model = bare.filePath(QStringLiteral("gemma3-tiny.gguf"));
    QVERIFY(QFile::copy(testpaths::modelFile(QStringLiteral("arch/gemma3-tiny.gguf")), model));
    LocalChatBackend text(configFor(model), nullptr, QStringLiteral("gemma"));
    QSignalSpy warnings(&text, &LocalChatBackend::engineWarning);
    QVERIFY(apptest::startEngine(text));
    QVERIFY(!text.readsImages());
    PaneState pane(&store, &text);
    pane.settings()->setMaxTokens(4);
    pane.openConversation(conversation, QStringLiteral("Look"));
    pane.setInputText(QStringLiteral("And now?"));
    QVERIFY(pane.send());
    QTRY_VERIFY_WITH_TIMEOUT(!pane.isBusy(), 60000);
    QVERIFY2(pane.errorText().isEmpty(), qPrintable(pane.errorText()));
    QTRY_VERIFY_WITH_TIMEOUT(!warnings.isEmpty(), 10000);
    QVERIFY(warnings.constLast().at(0).toString().contains(QStringLiteral("left out")));
  }

  void textModelRefusesImages() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    QTemporaryDir data;
    ChatStore store(data.path());
    LocalChatBackend engine(apptest::storiesConfig());
    QVERIFY(apptest::startEngine(engine));
    QVERIFY(!engine.readsImages());
    PaneState pane(&store, &engine);
    QVERIFY(!pane.imagesAccepted());
    QVERIFY(!pane.attachImageFile(QUrl::fromLocalFile(kVision + QStringLiteral("/square.png"))));
    QVERIFY2(pane.errorText().contains(QStringLiteral("cannot read images")), qPrintable(pane.errorText()));
    QVERIFY(pane.pendingImages().isEmpty());
  }

  // Import refuses a damaged attachment by saying which.
  void importChecksAttachments() {
    QTemporaryDir data;
    ChatStore store(data.path());
    const QByteArray json = R"({"format": "pagedchat-conversation", "version": 1, "title": "t", "messages": [
      {"id": 1, "role": "user", "text": "hi", "attachments": [{"mime": "image/gif", "width": 1, "height": 1,
       "data": "AAAA"}]}]})";
    try {
      store.importJson(json);
      QFAIL("a GIF attachment was imported");
    } catch (const StoreError& e) {
      QVERIFY2(QString::fromStdString(e.what()).contains(QStringLiteral("attachment 1")), e.what());
    }
    // Base64 of something that is not a picture; a picture whose stated size is not its own.
    const QByteArray png = readFile(kVision + QStringLiteral("/square.png")).toBase64();
    for (const auto& [payload, size, what] :
         {std::tuple{QByteArray("aGVsbG8gbm90IGFuIGltYWdl"), 32, "cannot be read"},
          std::tuple{png, 10, "\"width\" must be the picture's width in pixels (32)"}}) {
      const QJsonObject attachment{{QStringLiteral("mime"), QStringLiteral("image/png")},
                                   {QStringLiteral("width"), size},
                                   {QStringLiteral("height"), 32},
                                   {QStringLiteral("data"), QString::fromLatin1(payload)}};
      const QJsonObject message{{QStringLiteral("id"), 1},
                                {QStringLiteral("role"), QStringLiteral("user")},
                                {QStringLiteral("text"), QStringLiteral("hi")},
                                {QStringLiteral("attachments"), QJsonArray{attachment}}};
      const QByteArray bad = QJsonDocument(
                                 QJsonObject{{QStringLiteral("format"), QStringLiteral("pagedchat-conversation")},
                                             {QStringLiteral("version"), 1},
                                             {QStringLiteral("title"), QStringLiteral("t")},
                                             {QStringLiteral("messages"), QJsonArray{message}}})
                                 .toJson();
      try {
        store.importJson(bad);
        QFAIL(what);
      } catch (const StoreError& e) {
        QVERIFY2(QString::fromStdString(e.what()).contains(QLatin1String(what)), e.what());
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestPaneImages)
#include "test_pane_images.moc"
