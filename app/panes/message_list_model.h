// MessageListModel: the messages of the conversation one chat pane shows.
#pragma once

#include <QAbstractListModel>
#include <QList>
#include <QSet>
#include <QTimer>

#include "app/store/chat_store.h"

/// List model of the shown branch of one conversation (root first) for a pane's ListView. Roles:
/// messageId, role ("user"/"assistant"/"system"), text, finishReason (as text: "stop", "length",
/// "abort", or "" for none), streaming (true while the
/// assistant reply is still being generated), siblingIndex / siblingCount (this message's
/// position among the alternatives with the same parent: "2/3"), isLast (the last row), and for a
/// reasoning model's reply reasoning / answer / thinking (app/engine/reasoning.h), with its accepted
/// draft text marked as markedReasoning / markedAnswer (draft_marks.h). A loaded assistant message with an
/// empty finish reason was cut off by a crash (the app died while it streamed): the view shows it as "interrupted".
class MessageListModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum Roles {
    MessageIdRole = Qt::UserRole + 1,
    RoleRole,
    TextRole,
    FinishReasonRole,
    StreamingRole,
    SiblingIndexRole,
    SiblingCountRole,
    IsLastRole,
    ReasoningRole,  ///< an assistant reply's <think> part (splitReasoning), "" when none
    AnswerRole,     ///< the reply without it (the whole text for other messages)
    ThinkingRole,   ///< the reply is streaming inside an open <think>
    /// A reply's tool calls (MessageRecord::fields' tool_calls): a list of {id, name, arguments}
    /// maps, arguments a JSON object's text; empty for none.
    ToolCallsRole,
    ToolNameRole,  ///< a tool result's tool (fields' "name"), "" for other messages
    /// An assistant reply's reasoning and answer with its accepted draft text marked
    /// (draftmarks::insert(): for display, never stored); "" when nothing is marked.
    MarkedReasoningRole,
    MarkedAnswerRole,
    AttachmentsRole  ///< the message's pictures: a list of {bytes, mime, width, height}
  };
  Q_ENUM(Roles)

  explicit MessageListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

  /// Replaces every row.
  void setMessages(const QList<MessageRecord>& messages);
  void clear();
  /// Appends a row; returns its row number.
  int append(const MessageRecord& message, bool streaming = false);
  /// Appends `delta` to the text of `row`. The text (data(), textAt()) changes at once; views
  /// are told (dataChanged) at most every kTextNotifyMs, so a reply streaming many tokens a second
  /// is re-laid out at most ten times a second (finish() and flushTextChanges() tell at once).
  /// `draftSpans`: the delta's accepted draft text (RequestDelta::draftSpans), kept for the row
  /// while it is shown.
  void appendText(int row, const QString& delta, const QList<int>& draftSpans = {});
  /// Emits the pending dataChanged() of appendText() now.
  void flushTextChanges();
  static constexpr int kTextNotifyMs = 100;
  /// Marks `row` done with `finishReason`.
  void finish(int row, std::optional<pagedchat::FinishReason> finishReason);
  /// Sets the store id of `row` (a message written to the store after it was shown).
  void setMessageId(int row, qint64 id);
  /// Removes `row` and every row after it.
  void removeFrom(int row);
  /// Sets the sibling position of `row` ("index + 1 / count" in the view).
  void setSiblings(int row, int index, int count);
  /// Marks `row` as streaming again (a continued reply).
  void setStreaming(int row, bool streaming);
  /// Sets the fields of the message at `row` (MessageRecord::fields: its tool calls).
  void setFields(int row, const QString& fields);
  /// Row of message `id`, or -1.
  Q_INVOKABLE int rowOfMessage(qint64 id) const;

  const MessageRecord& at(int row) const { return rows_.at(row).record; }
  /// Text of the row's message (tests and the QML side use the roles instead).
  Q_INVOKABLE QString textAt(int row) const;
  Q_INVOKABLE QString roleAt(int row) const;

 signals:
  void countChanged();

 private:
  struct Row {
    MessageRecord record;
    bool streaming = false;
    QList<int> draftSpans{};  ///< accepted draft text of record.text ([begin, end) pairs, UTF-16)
  };
  QList<Row> rows_;
  QSet<int> textChangedRows_;  ///< rows whose text changed since the last dataChanged()
  QTimer textNotifyTimer_;
};
