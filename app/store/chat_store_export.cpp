// ChatStore: a conversation exported to Markdown (for reading) and JSON (for import), and the
// JSON import.
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QSet>
#include <QStringDecoder>

#include "app/store/chat_store.h"
#include "engine/multimodal/image_decode.h"

#include <cmath>
#include "app/store/chat_store_sql.h"
#include "app/store/finish_reason_text.h"

using namespace chatstore;

namespace {

QString stamp(const QDateTime& t) { return t.isValid() ? t.toUTC().toString(Qt::ISODateWithMs) : QString(); }

[[noreturn]] void badImport(const QString& why) {
  throw StoreError(QStringLiteral("Cannot import: %1").arg(why).toStdString(), StoreError::Kind::kInvalidImport);
}

/// The JSON type of `v`, for messages ("a string", "a number", ...).
QString typeName(const QJsonValue& v) {
  switch (v.type()) {
    case QJsonValue::Null:
      return QStringLiteral("null");
    case QJsonValue::Bool:
      return QStringLiteral("a boolean");
    case QJsonValue::Double:
      return QStringLiteral("a number");
    case QJsonValue::String:
      return QStringLiteral("a string");
    case QJsonValue::Array:
      return QStringLiteral("a list");
    case QJsonValue::Object:
      return QStringLiteral("an object");
    case QJsonValue::Undefined:
      break;
  }
  return QStringLiteral("missing");
}

/// Refuses text that cannot be stored faithfully: NUL characters and unpaired UTF-16 surrogates
/// (a JSON "\ud800" escape parses to one).
void checkText(const QString& text, const QString& where, const QString& key) {
  for (qsizetype i = 0; i < text.size(); ++i) {
    const QChar c = text.at(i);
    if (c.isNull()) badImport(QStringLiteral("%1: \"%2\" contains a NUL character").arg(where, key));
    if (c.isHighSurrogate() && i + 1 < text.size() && text.at(i + 1).isLowSurrogate()) {
      ++i;
      continue;
    }
    if (c.isSurrogate())
      badImport(QStringLiteral("%1: \"%2\" contains invalid text (an unpaired UTF-16 surrogate)").arg(where, key));
  }
}

/// A required string member of `o` (`where` names the object in messages).
QString requireString(const QJsonObject& o, const QString& key, const QString& where) {
  const QJsonValue v = o.value(key);
  if (v.isUndefined()) badImport(QStringLiteral("%1 has no \"%2\" field").arg(where, key));
  if (!v.isString()) badImport(QStringLiteral("%1: \"%2\" must be a string, not %3").arg(where, key, typeName(v)));
  checkText(v.toString(), where, key);
  return v.toString();
}

/// An optional integer id member (null or missing = 0).
qint64 optionalId(const QJsonObject& o, const QString& key, const QString& where) {
  const QJsonValue v = o.value(key);
  if (v.isUndefined() || v.isNull()) return 0;
  if (!v.isDouble() || v.toDouble() != static_cast<double>(v.toInteger()) || v.toInteger() <= 0)
    badImport(QStringLiteral("%1: \"%2\" is not a positive whole number").arg(where, key));
  return v.toInteger();
}

/// An optional time stamp (missing, null or "" = none, i.e. an invalid QDateTime): otherwise an
/// ISO-8601 string, at most kImportFutureToleranceSecs after `now`.
QDateTime optionalStamp(const QJsonObject& o, const QString& key, const QString& where, const QDateTime& now) {
  const QJsonValue v = o.value(key);
  if (v.isUndefined() || v.isNull()) return {};
  if (!v.isString())
    badImport(QStringLiteral("%1: \"%2\" must be a string (an ISO-8601 date), not %3").arg(where, key, typeName(v)));
  if (v.toString().isEmpty()) return {};
  const QDateTime t = QDateTime::fromString(v.toString(), Qt::ISODateWithMs);
  if (!t.isValid())
    badImport(QStringLiteral("%1: \"%2\" is not a date (\"%3\"; expected ISO 8601, e.g. "
                             "2024-01-31T12:00:00.000Z)")
                  .arg(where, key, v.toString().left(40)));
  if (t.toUTC() > now.addSecs(ChatStore::kImportFutureToleranceSecs))
    badImport(QStringLiteral("%1: \"%2\" is in the future (%3)").arg(where, key, v.toString()));
  return t.toUTC();
}

}  // namespace

QString ChatStore::exportMarkdown(qint64 conversationId) const {
  const ConversationRecord c = conversation(conversationId);
  QString md = QStringLiteral("# %1\n").arg(c.title);
  for (const MessageRecord& m : branch(conversationId)) {
    const QString heading = m.role == MessageRole::kUser        ? tr("User")
                            : m.role == MessageRole::kAssistant ? tr("Assistant")
                            : m.role == MessageRole::kTool      ? tr("Tool result")
                                                                : tr("System");
    // An answer's leading whitespace (a story model continues the prompt: " there was a ...")
    // is left out, as in the window.
    QString text = m.text;
    if (m.role == MessageRole::kAssistant) {
      qsizetype start = 0;
      while (start < text.size() && text.at(start).isSpace()) ++start;
      text.remove(0, start);
    }
    md += QStringLiteral("\n## %1\n\n%2\n").arg(heading, text);
    for (const ImageAttachment& a : m.attachments)
      md += QStringLiteral("\n*%1*\n").arg(tr("[image: %1 x %2, %3]").arg(a.width).arg(a.height).arg(a.mime));
    // A reply's tool calls: the tool's name, its arguments in a fenced block (one longer than any
    // run of backticks in them).
    const QJsonArray calls =
        QJsonDocument::fromJson(m.fields.toUtf8()).object().value(QStringLiteral("tool_calls")).toArray();
    for (const QJsonValue& call : calls) {
      const QJsonObject f = call.toObject().value(QStringLiteral("function")).toObject();
      const QString args = f.value(QStringLiteral("arguments")).toString();
      qsizetype longest = 0, run = 0;
      for (QChar ch : args) longest = qMax(longest, run = ch == QLatin1Char('`') ? run + 1 : 0);
      const QString fence(qMax<qsizetype>(3, longest + 1), QLatin1Char('`'));
      md += QStringLiteral("\n%1 %2\n\n%3json\n%4\n%3\n")
                .arg(tr("Tool call:"), f.value(QStringLiteral("name")).toString(), fence, args);
    }
    if (m.role == MessageRole::kAssistant &&
        (m.finishReason == pagedchat::FinishReason::kLength || m.finishReason == pagedchat::FinishReason::kAbort))
      md += QStringLiteral("\n*%1*\n").arg(tr("(cut off)"));
  }
  return md;
}

QByteArray ChatStore::exportJson(qint64 conversationId) const {
  const ConversationRecord c = conversation(conversationId);
  QJsonArray messages;
  // Ids local to the file: 1, 2, ... in the database's order (parents first).
  QHash<qint64, qint64> fileIds;
  const auto fileId = [&fileIds](qint64 id) { return id == 0 ? QJsonValue() : QJsonValue(fileIds.value(id)); };
  for (const MessageRecord& m : this->messages(conversationId)) {  // by id: parents first
    fileIds.insert(m.id, fileIds.size() + 1);
    QJsonObject o;
    o.insert(QStringLiteral("id"), fileIds.value(m.id));
    o.insert(QStringLiteral("parentId"), fileId(m.parentId));
    o.insert(QStringLiteral("role"), messageRoleText(m.role));
    o.insert(QStringLiteral("text"), m.text);
    o.insert(QStringLiteral("finishReason"), finishReasonText(m.finishReason));
    if (!m.backend.isEmpty()) o.insert(QStringLiteral("backend"), m.backend);
    if (!m.fields.isEmpty()) o.insert(QStringLiteral("fields"), QJsonDocument::fromJson(m.fields.toUtf8()).object());
    if (!m.attachments.isEmpty()) {
      QJsonArray list;
      for (const ImageAttachment& a : m.attachments)
        list.append(QJsonObject{{QStringLiteral("mime"), a.mime},
                                {QStringLiteral("width"), a.width},
                                {QStringLiteral("height"), a.height},
                                {QStringLiteral("data"), QString::fromLatin1(a.bytes.toBase64())}});
      o.insert(QStringLiteral("attachments"), list);
    }
    o.insert(QStringLiteral("createdAt"), stamp(m.createdAt));
    messages.append(o);
  }
  QJsonObject root;
  root.insert(QStringLiteral("format"), QString::fromLatin1(kJsonFormat));
  root.insert(QStringLiteral("version"), kJsonFormatVersion);
  root.insert(QStringLiteral("title"), c.title);
  root.insert(QStringLiteral("createdAt"), stamp(c.createdAt));
  root.insert(QStringLiteral("updatedAt"), stamp(c.updatedAt));
  root.insert(QStringLiteral("pinned"), c.pinned);
  root.insert(QStringLiteral("currentLeafId"),
              fileIds.contains(c.currentLeafId) ? fileId(c.currentLeafId) : QJsonValue());
  root.insert(QStringLiteral("messages"), messages);
  return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

qint64 ChatStore::importJson(const QByteArray& json) {
  // Everything is checked before anything is written.
  // Bytes that are not UTF-8 would be stored damaged (Qt's JSON parser may replace them).
  QStringDecoder utf8(QStringDecoder::Utf8);
  (void)QString(utf8.decode(json));
  if (utf8.hasError()) badImport(QStringLiteral("the file is not valid UTF-8 text"));
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
  if (parseError.error != QJsonParseError::NoError)
    badImport(QStringLiteral("the file is not valid JSON (%1 at byte %2)")
                  .arg(parseError.errorString())
                  .arg(parseError.offset));
  if (!doc.isObject()) badImport(QStringLiteral("the file is not a PagedChat conversation (no JSON object)"));
  const QJsonObject root = doc.object();
  const QString top = QStringLiteral("the conversation");
  const QDateTime nowUtc = QDateTime::currentDateTimeUtc();
  const QJsonValue format = root.value(QStringLiteral("format"));
  if (!format.isUndefined() && !format.isString())
    badImport(QStringLiteral("the file is not a PagedChat conversation (\"format\" must be a string, not %1)")
                  .arg(typeName(format)));
  if (format.toString() != QLatin1String(kJsonFormat))
    badImport(QStringLiteral("the file is not a PagedChat conversation (format is %1, expected \"%2\")")
                  .arg(format.isUndefined() ? QStringLiteral("missing")
                                            : QStringLiteral("\"%1\"").arg(format.toString().left(80)),
                       QLatin1String(kJsonFormat)));
  const QJsonValue version = root.value(QStringLiteral("version"));
  if (version.isUndefined()) badImport(QStringLiteral("the conversation has no \"version\" field"));
  if (!version.isDouble()) badImport(QStringLiteral("\"version\" must be a number, not %1").arg(typeName(version)));
  if (version.toDouble() != static_cast<double>(kJsonFormatVersion))
    badImport(QStringLiteral("unsupported format version %1 (this PagedChat reads version %2)")
                  .arg(version.toDouble())
                  .arg(kJsonFormatVersion));
  const QJsonValue pinned = root.value(QStringLiteral("pinned"));
  if (!pinned.isUndefined() && !pinned.isNull() && !pinned.isBool())
    badImport(QStringLiteral("\"pinned\" must be true or false, not %1").arg(typeName(pinned)));
  const QString title = requireString(root, QStringLiteral("title"), top);
  if (title.trimmed().isEmpty()) badImport(QStringLiteral("the conversation's \"title\" is empty"));
  const QJsonValue list = root.value(QStringLiteral("messages"));
  if (!list.isArray()) badImport(QStringLiteral("the conversation has no \"messages\" list"));

  struct Row {
    qint64 fileId, fileParent;
    MessageRole role = MessageRole::kUser;
    QString text, backend, fields;
    std::optional<pagedchat::FinishReason> finishReason;
    QDateTime createdAt;
    QList<ImageAttachment> attachments;
  };
  QList<Row> rows;
  QSet<qint64> seen;
  const QJsonArray array = list.toArray();
  for (qsizetype i = 0; i < array.size(); ++i) {
    const QString where = QStringLiteral("message %1").arg(i + 1);
    if (!array.at(i).isObject()) badImport(QStringLiteral("%1 is not an object").arg(where));
    const QJsonObject o = array.at(i).toObject();
    Row r;
    r.fileId = optionalId(o, QStringLiteral("id"), where);
    if (r.fileId == 0) badImport(QStringLiteral("%1 has no \"id\" field").arg(where));
    if (seen.contains(r.fileId)) badImport(QStringLiteral("%1: id %2 is used twice").arg(where).arg(r.fileId));
    r.fileParent = optionalId(o, QStringLiteral("parentId"), where);
    if (r.fileParent != 0 && !seen.contains(r.fileParent))
      badImport(QStringLiteral("%1: parent %2 is not an earlier message").arg(where).arg(r.fileParent));
    const QString roleText = requireString(o, QStringLiteral("role"), where);
    const std::optional<MessageRole> role = parseMessageRole(roleText);
    if (!role) badImport(QStringLiteral("%1: unknown role \"%2\"").arg(where, roleText.left(40)));
    r.role = *role;
    r.text = requireString(o, QStringLiteral("text"), where);
    const QJsonValue finish = o.value(QStringLiteral("finishReason"));
    if (!finish.isUndefined() && !finish.isNull()) {
      if (!finish.isString())
        badImport(QStringLiteral("%1: \"finishReason\" must be a string, not %2").arg(where, typeName(finish)));
      const QString text = finish.toString();
      r.finishReason = parseFinishReasonText(text);
      if (!r.finishReason && !text.isEmpty())
        badImport(QStringLiteral("%1: unknown \"finishReason\" \"%2\" (expected \"\", \"stop\", "
                                 "\"length\" or \"abort\")")
                      .arg(where, text.left(40)));
      if (r.finishReason && r.role != MessageRole::kAssistant)
        badImport(QStringLiteral("%1: \"finishReason\" is set on a %2 message (only answers have one)")
                      .arg(where, messageRoleText(r.role)));
    }
    const QJsonValue backend = o.value(QStringLiteral("backend"));
    if (!backend.isUndefined() && !backend.isNull()) {
      if (!backend.isString())
        badImport(QStringLiteral("%1: \"backend\" must be a string, not %2").arg(where, typeName(backend)));
      r.backend = backend.toString();
    }
    const QJsonValue fields = o.value(QStringLiteral("fields"));
    if (!fields.isUndefined() && !fields.isNull()) {
      if (!fields.isObject())
        badImport(QStringLiteral("%1: \"fields\" must be an object, not %2").arg(where, typeName(fields)));
      if (!fields.toObject().isEmpty())
        r.fields = QString::fromUtf8(QJsonDocument(fields.toObject()).toJson(QJsonDocument::Compact));
    }
    const QJsonValue attachments = o.value(QStringLiteral("attachments"));
    if (!attachments.isUndefined() && !attachments.isNull()) {
      if (!attachments.isArray())
        badImport(QStringLiteral("%1: \"attachments\" must be a list, not %2").arg(where, typeName(attachments)));
      const QJsonArray pictures = attachments.toArray();
      for (qsizetype k = 0; k < pictures.size(); ++k) {
        const QString at = QStringLiteral("%1, attachment %2").arg(where).arg(k + 1);
        if (!pictures.at(k).isObject()) badImport(QStringLiteral("%1 is not an object").arg(at));
        const QJsonObject a = pictures.at(k).toObject();
        ImageAttachment img;
        img.mime = requireString(a, QStringLiteral("mime"), at);
        if (img.mime != QLatin1String("image/png") && img.mime != QLatin1String("image/jpeg") &&
            img.mime != QLatin1String("image/webp"))
          badImport(QStringLiteral("%1: \"mime\" \"%2\" is not image/png, image/jpeg or image/webp")
                        .arg(at, img.mime.left(40)));
        const auto decoded = QByteArray::fromBase64Encoding(requireString(a, QStringLiteral("data"), at).toLatin1(),
                                                            QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded || decoded.decoded.isEmpty())
          badImport(QStringLiteral("%1: \"data\" is not base64 image data").arg(at));
        img.bytes = decoded.decoded;
        // The picture itself: it must decode, and be the size the file says.
        try {
          const pagedchat::RgbImage picture = pagedchat::decode_image(
              {reinterpret_cast<const uint8_t*>(img.bytes.constData()), static_cast<std::size_t>(img.bytes.size())});
          img.width = picture.width;
          img.height = picture.height;
        } catch (const pagedchat::ImageError& e) {
          badImport(QStringLiteral("%1: the picture cannot be read: %2").arg(at, QString::fromStdString(e.what())));
        }
        for (const char* key : {"width", "height"}) {
          const QJsonValue v = a.value(QLatin1String(key));
          const int actual = key[0] == 'w' ? img.width : img.height;
          if (!v.isDouble() || v.toDouble() != actual)
            badImport(QStringLiteral("%1: \"%2\" must be the picture's %2 in pixels (%3)")
                          .arg(at, QLatin1String(key))
                          .arg(actual));
        }
        r.attachments.append(img);
      }
    }
    r.createdAt = optionalStamp(o, QStringLiteral("createdAt"), where, nowUtc);
    seen.insert(r.fileId);
    rows.append(r);
  }
  const QDateTime created = optionalStamp(root, QStringLiteral("createdAt"), top, nowUtc);
  const QDateTime updated = optionalStamp(root, QStringLiteral("updatedAt"), top, nowUtc);
  const qint64 fileLeaf = optionalId(root, QStringLiteral("currentLeafId"), top);
  if (fileLeaf != 0 && !seen.contains(fileLeaf))
    badImport(QStringLiteral("\"currentLeafId\" %1 is not one of the messages").arg(fileLeaf));

  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString now = nextTimestamp();
  WriteTransaction tx(db, m_path);
  QSqlQuery c = exec(db, m_path,
                     QStringLiteral("INSERT INTO conversations(title, created_at, updated_at, pinned)"
                                    " VALUES(?, ?, ?, ?)"),
                     {textValue(title), created.isValid() ? stamp(created) : now,
                      updated.isValid() ? stamp(updated) : now, pinned.toBool() ? 1 : 0});
  const qint64 conversationId = c.lastInsertId().toLongLong();
  c.finish();
  QHash<qint64, qint64> newIds;  // file id -> store id
  QSqlQuery insert(db);
  const QString sql = QStringLiteral(
      "INSERT INTO messages(conversation_id, parent_id, role, text, finish_reason, created_at, backend,"
      " fields) VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert.prepare(sql)) failQuery(m_path, sql, insert.lastError());
  for (const Row& r : rows) {
    insert.addBindValue(conversationId);
    insert.addBindValue(idOrNull(newIds.value(r.fileParent)));
    insert.addBindValue(messageRoleText(r.role));
    insert.addBindValue(textValue(r.text));
    insert.addBindValue(textValue(finishReasonText(r.finishReason)));
    insert.addBindValue(r.createdAt.isValid() ? stamp(r.createdAt) : now);
    insert.addBindValue(textValue(r.backend));
    insert.addBindValue(textValue(r.fields));
    if (!insert.exec()) failQuery(m_path, sql, insert.lastError());
    const qint64 id = insert.lastInsertId().toLongLong();
    newIds.insert(r.fileId, id);
    for (int k = 0; k < r.attachments.size(); ++k) {
      const ImageAttachment& a = r.attachments[k];
      exec(db, m_path,
           QStringLiteral(
               "INSERT INTO attachments(message_id, idx, mime, bytes, width, height) VALUES(?, ?, ?, ?, ?, ?)"),
           {id, k, a.mime, a.bytes, a.width, a.height});
    }
  }
  insert.finish();
  // No leaf given: the newest message (the whole conversation, when it is a list).
  const qint64 leaf = fileLeaf != 0 ? newIds.value(fileLeaf)
                                    : (rows.isEmpty() ? 0 : newIds.value(rows.constLast().fileId));
  exec(db, m_path, QStringLiteral("UPDATE conversations SET current_leaf_id = ? WHERE id = ?"),
       {idOrNull(leaf), conversationId});
  tx.commit();
  return conversationId;
}
