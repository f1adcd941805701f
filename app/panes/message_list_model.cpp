#include "app/panes/message_list_model.h"

#include "app/engine/reasoning.h"
#include "app/render/draft_marks.h"
#include "app/store/finish_reason_text.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <iterator>
#include <utility>

MessageListModel::MessageListModel(QObject* parent) : QAbstractListModel(parent) {
  textNotifyTimer_.setSingleShot(true);
  textNotifyTimer_.setInterval(kTextNotifyMs);
  connect(&textNotifyTimer_, &QTimer::timeout, this, &MessageListModel::flushTextChanges);
}

int MessageListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_.at(index.row());
  switch (role) {
    case MessageIdRole:
      return row.record.id;
    case RoleRole:
      return messageRoleText(row.record.role);
    case Qt::DisplayRole:
    case TextRole:
      return row.record.text;
    case FinishReasonRole:
      return finishReasonText(row.record.finishReason);
    case StreamingRole:
      return row.streaming;
    case SiblingIndexRole:
      return row.record.siblingIndex;
    case SiblingCountRole:
      return row.record.siblingCount;
    case IsLastRole:
      return index.row() == rows_.size() - 1;
    case ReasoningRole:
    case AnswerRole:
    case ThinkingRole: {
      if (row.record.role != MessageRole::kAssistant) return role == AnswerRole ? row.record.text : QVariant();
      const ReasoningSplit split = splitReasoning(row.record.text);
      if (role == ReasoningRole) return split.reasoning;
      if (role == AnswerRole) return split.answer;
      return split.open && row.streaming;
    }
    case ToolCallsRole: {
      QVariantList calls;
      if (row.record.fields.isEmpty()) return calls;
      const QJsonObject fields = QJsonDocument::fromJson(row.record.fields.toUtf8()).object();
      for (const QJsonValue& v : fields.value(QLatin1String("tool_calls")).toArray()) {
        const QJsonObject function = v.toObject().value(QLatin1String("function")).toObject();
        calls.append(QVariantMap{{QStringLiteral("id"), v.toObject().value(QLatin1String("id")).toString()},
                                 {QStringLiteral("name"), function.value(QLatin1String("name")).toString()},
                                 {QStringLiteral("arguments"), function.value(QLatin1String("arguments")).toString()}});
      }
      return calls;
    }
    case AttachmentsRole: {
      QVariantList out;
      for (const ImageAttachment& a : row.record.attachments) out.append(imageAttachmentMap(a));
      return out;
    }
    case MarkedReasoningRole:
    case MarkedAnswerRole: {
      if (row.record.role != MessageRole::kAssistant || row.draftSpans.isEmpty()) return QString();
      const QString marked = draftmarks::insert(row.record.text, row.draftSpans);
      if (marked.isEmpty()) return QString();
      const ReasoningSplit split = splitReasoning(marked);
      return role == MarkedReasoningRole ? split.reasoning : split.answer;
    }
    case ToolNameRole:
      if (row.record.role != MessageRole::kTool) return QString();
      return QJsonDocument::fromJson(row.record.fields.toUtf8()).object().value(QLatin1String("name")).toString();
    default:
      return {};
  }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
  return {{MessageIdRole, "messageId"},
          {RoleRole, "role"},
          {TextRole, "text"},
          {FinishReasonRole, "finishReason"},
          {StreamingRole, "streaming"},
          {SiblingIndexRole, "siblingIndex"},
          {SiblingCountRole, "siblingCount"},
          {IsLastRole, "isLast"},
          {ReasoningRole, "reasoning"},
          {AnswerRole, "answer"},
          {ThinkingRole, "thinking"},
          {ToolCallsRole, "toolCalls"},
          {ToolNameRole, "toolName"},
          {MarkedReasoningRole, "markedReasoning"},
          {MarkedAnswerRole, "markedAnswer"},
          {AttachmentsRole, "attachments"}};
}

void MessageListModel::setMessages(const QList<MessageRecord>& messages) {
  textChangedRows_.clear();
  beginResetModel();
  rows_.clear();
  rows_.reserve(messages.size());
  for (const MessageRecord& m : messages) rows_.append({m, false});
  endResetModel();
  emit countChanged();
}

void MessageListModel::clear() { setMessages({}); }

int MessageListModel::append(const MessageRecord& message, bool streaming) {
  const int row = static_cast<int>(rows_.size());
  beginInsertRows(QModelIndex(), row, row);
  rows_.append({message, streaming});
  endInsertRows();
  if (row > 0) emit dataChanged(index(row - 1), index(row - 1), {IsLastRole});
  emit countChanged();
  return row;
}

void MessageListModel::appendText(int row, const QString& delta, const QList<int>& draftSpans) {
  if (row < 0 || row >= rows_.size() || delta.isEmpty()) return;
  draftmarks::append(rows_[row].draftSpans, draftSpans, int(rows_[row].record.text.size()));
  rows_[row].record.text += delta;
  textChangedRows_.insert(row);
  if (!textNotifyTimer_.isActive()) textNotifyTimer_.start();
}

void MessageListModel::flushTextChanges() {
  textNotifyTimer_.stop();
  const QSet<int> rows = std::exchange(textChangedRows_, {});
  for (int row : rows) {
    if (row >= rows_.size()) continue;
    const QModelIndex i = index(row);
    emit dataChanged(
        i, i,
        {TextRole, Qt::DisplayRole, ReasoningRole, AnswerRole, ThinkingRole, MarkedReasoningRole, MarkedAnswerRole});
  }
}

void MessageListModel::finish(int row, std::optional<pagedchat::FinishReason> finishReason) {
  if (row < 0 || row >= rows_.size()) return;
  flushTextChanges();
  rows_[row].record.finishReason = finishReason;
  rows_[row].streaming = false;
  const QModelIndex i = index(row);
  emit dataChanged(i, i, {FinishReasonRole, StreamingRole, ThinkingRole});
}

void MessageListModel::setMessageId(int row, qint64 id) {
  if (row < 0 || row >= rows_.size()) return;
  rows_[row].record.id = id;
  const QModelIndex i = index(row);
  emit dataChanged(i, i, {MessageIdRole});
}

void MessageListModel::removeFrom(int row) {
  if (row < 0 || row >= rows_.size()) return;
  for (auto it = textChangedRows_.begin(); it != textChangedRows_.end();)
    it = *it >= row ? textChangedRows_.erase(it) : std::next(it);
  beginRemoveRows(QModelIndex(), row, static_cast<int>(rows_.size()) - 1);
  rows_.resize(row);
  endRemoveRows();
  if (row > 0) emit dataChanged(index(row - 1), index(row - 1), {IsLastRole});
  emit countChanged();
}

QString MessageListModel::textAt(int row) const {
  return row >= 0 && row < rows_.size() ? rows_.at(row).record.text : QString();
}

QString MessageListModel::roleAt(int row) const {
  return row >= 0 && row < rows_.size() ? messageRoleText(rows_.at(row).record.role) : QString();
}

void MessageListModel::setSiblings(int row, int index, int count) {
  if (row < 0 || row >= rows_.size()) return;
  rows_[row].record.siblingIndex = index;
  rows_[row].record.siblingCount = count;
  const QModelIndex i = this->index(row);
  emit dataChanged(i, i, {SiblingIndexRole, SiblingCountRole});
}

void MessageListModel::setStreaming(int row, bool streaming) {
  if (row < 0 || row >= rows_.size()) return;
  rows_[row].streaming = streaming;
  const QModelIndex i = index(row);
  emit dataChanged(i, i, {StreamingRole, ThinkingRole});
}

void MessageListModel::setFields(int row, const QString& fields) {
  if (row < 0 || row >= rows_.size()) return;
  rows_[row].record.fields = fields;
  const QModelIndex i = index(row);
  emit dataChanged(i, i, {ToolCallsRole, ToolNameRole});
}

int MessageListModel::rowOfMessage(qint64 id) const {
  for (qsizetype i = 0; i < rows_.size(); ++i)
    if (rows_.at(i).record.id == id) return static_cast<int>(i);
  return -1;
}
