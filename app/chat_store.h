// ChatStore: conversations and messages in one SQLite file (Qt SQL, QSQLITE driver).
// WAL journal, foreign keys on, schema versioned with PRAGMA user_version.
#pragma once

#include <QDateTime>
#include <QJsonArray>
#include <QList>
#include <QObject>
#include <QString>

/// One conversation row.
struct ConversationRecord {
  qint64 id = 0;
  QString title;
  QDateTime createdAt;   ///< UTC
  QDateTime updatedAt;   ///< UTC; bumped on every new message or text update
};

/// One message row. role is "system", "user" or "assistant".
struct MessageRecord {
  qint64 id = 0;
  qint64 conversationId = 0;
  QString role;
  QString text;
  QString finishReason;  ///< "", "stop", "length", "abort" (empty while streaming / for user messages)
  QDateTime createdAt;   ///< UTC
};

/// All methods run on the calling (GUI) thread and are short single statements or transactions.
/// Errors (locked, corrupt or unwritable database) throw StoreError with SQLite's message and the
/// file path; nothing already committed is lost.
class ChatStore : public QObject {
  Q_OBJECT
 public:
  /// Opens (creating when missing) `<dataDir>/pagedchat.sqlite3`. Throws StoreError.
  explicit ChatStore(const QString& dataDir, QObject* parent = nullptr);
  ~ChatStore() override;

  QString databasePath() const;
  /// Closes the connection (further calls throw). Safe to call twice.
  void close();

  qint64 createConversation(const QString& title);
  void renameConversation(qint64 id, const QString& title);
  void deleteConversation(qint64 id);                 ///< deletes its messages too
  QList<ConversationRecord> conversations() const;    ///< newest updatedAt first

  /// Inserts and commits a message; returns its id.
  qint64 addMessage(qint64 conversationId, const QString& role, const QString& text,
                    const QString& finishReason = QString());
  /// Replaces the text (and finish reason) of a message; committed on return.
  void updateMessage(qint64 messageId, const QString& text, const QString& finishReason = QString());
  /// Deletes one message (a turn the engine refused); unknown ids are ignored.
  void deleteMessage(qint64 messageId);
  QList<MessageRecord> messages(qint64 conversationId) const;  ///< oldest first

  /// Stores a blind-compare vote (app/chat_store_votes.cpp): the prompt sent to all panes, the
  /// winning pane's index (-1 = tie) and per pane {conversationId, messageId, label, settings{...},
  /// text}. Returns the vote's id. Throws StoreError (also for winnerPane out of range).
  qint64 addCompareVote(const QString& prompt, int winnerPane, const QJsonArray& panes);
  /// Every stored vote, oldest first: {id, createdAt (ISO UTC), prompt, winnerPane, panes}.
  QJsonArray compareVotes() const;

 private:
  void openDatabase(const QString& dataDir);
  void migrate();
  void ensureVotesTable() const;  ///< compare_votes, created on first use (chat_store_votes.cpp)
  QString nextTimestamp();  ///< ISO-8601 UTC with ms, strictly increasing within this instance

  QString m_path;            ///< <dataDir>/pagedchat.sqlite3
  QString m_connectionName;  ///< unique QSqlDatabase connection name; empty once closed
  QDateTime m_lastStamp;     ///< last timestamp handed out by nextTimestamp()
};

#include <stdexcept>
/// Error from the store; what() holds SQLite's message and the database path.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
