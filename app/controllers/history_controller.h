// HistoryController: the conversation history's actions (the sidebar, the search panel, export
// and import), handed to QML as `app.history`.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QUrl>
#include <QVariantList>

class AppErrors;
class ChatStore;
class ConversationListModel;
class PaneListModel;
class QTimer;

/// Creates, opens, renames, pins, deletes (with undo), searches, exports and imports
/// conversations, in the store and in the panes. A failed store call goes to AppErrors (in plain
/// language; writes wait there and are retried).
class HistoryController : public QObject {
  Q_OBJECT
  /// The conversation the current pane shows (0 = none).
  Q_PROPERTY(qint64 currentConversationId READ currentConversationId NOTIFY currentConversationChanged)
  /// Title of the conversation deleteConversation() hid last; empty when there is nothing to undo.
  Q_PROPERTY(QString undoDeleteTitle READ undoDeleteTitle NOTIFY undoDeleteChanged)
  /// How many deletions can still be undone (each until its own undo time runs out).
  Q_PROPERTY(int undoDeleteCount READ undoDeleteCount NOTIFY undoDeleteChanged)

 public:
  /// How long a deleted conversation can be brought back (ms).
  static constexpr int undoTimeoutMs = 8000;

  /// `store`, `list`, `panes` and `errors` must outlive this object.
  HistoryController(ChatStore* store, ConversationListModel* list, PaneListModel* panes, AppErrors* errors,
                    QObject* parent = nullptr);
  /// Deletes the pending conversations for good (commitDelete()).
  ~HistoryController() override;

  /// Creates an empty conversation and shows it in the current pane.
  Q_INVOKABLE void newConversation();
  /// Shows conversation `id`: focuses the pane that already shows it, else opens it in the current pane.
  Q_INVOKABLE void openConversation(qint64 id);
  /// Deletes conversation `id`: hidden at once (panes showing it become empty), deleted for good
  /// when its undo time (undoTimeoutMs) has passed, or on the next start. Several deletions can
  /// be pending at once; undoDelete() brings back the most recent one until then.
  Q_INVOKABLE void deleteConversation(qint64 id);
  /// Restores the conversation deleteConversation() hid last (the others stay pending). It shows
  /// in the list; it opens in the current pane only when that pane is empty.
  Q_INVOKABLE void undoDelete();
  /// Deletes every pending conversation for good now (the undo banner was dismissed).
  Q_INVOKABLE void commitDelete();
  /// Renames conversation `id` (the title is simplified; an empty one is ignored).
  Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
  Q_INVOKABLE void setPinned(qint64 id, bool pinned);
  /// Full-text search (ChatStore::search): a list of {messageId, conversationId, title, role,
  /// snippet (rich text, matches in bold)}.
  Q_INVOKABLE QVariantList search(const QString& text) const;
  /// Opens a search result: the conversation in the current pane, scrolled to the message.
  Q_INVOKABLE void openSearchResult(qint64 conversationId, qint64 messageId);
  /// Writes conversation `id` to `file` (a path or file: URL) as "markdown" or "json". Returns
  /// false and shows the reason in AppErrors when it cannot.
  Q_INVOKABLE bool exportConversation(qint64 id, const QUrl& file, const QString& format);
  /// Imports a JSON file written by exportConversation() and opens it; returns the new
  /// conversation's id, or 0 (AppErrors says why). Only a regular file of at most 512 MB is
  /// read, on a thread while the window keeps painting; a device or a FIFO is refused.
  Q_INVOKABLE qint64 importConversation(const QUrl& file);
  /// The local path a file dialog's URL names: an absolute path typed into the name field (which
  /// the dialog appends to its folder, "/folder//typed/path") wins; cleaned.
  static QString localPathOf(const QUrl& file);
  /// The folder file dialogs start in: the Documents folder if it exists, else the home folder.
  Q_INVOKABLE QUrl documentsFolder() const;

  qint64 currentConversationId() const;
  QString undoDeleteTitle() const;
  int undoDeleteCount() const { return static_cast<int>(pendingDeletes_.size()); }
  /// Changes the undo time of later deletions (tests).
  void setUndoTimeout(int ms) { undoTimeoutMs_ = ms; }

  /// Something was written (a reply, a title): retries waiting writes, reloads the list and the
  /// panes' titles.
  void refresh();
  /// The title of conversation `id` ("" if there is none).
  QString titleOf(qint64 id) const;
  /// Conversation `id` exists and is not deleted.
  bool conversationExists(qint64 id) const;

 signals:
  void currentConversationChanged();
  void undoDeleteChanged();

 private:
  /// Deletes pending conversation `id` for good (its undo time ran out).
  void commitDeleteOf(qint64 id);

  /// A soft-deleted conversation waiting for undo or purge.
  struct PendingDelete {
    qint64 id = 0;
    QString title;
    QTimer* timer = nullptr;  ///< single shot: commitDeleteOf(id)
  };

  ChatStore* store_;
  ConversationListModel* list_;
  PaneListModel* panes_;
  AppErrors* errors_;
  QList<PendingDelete> pendingDeletes_;  ///< oldest first
  bool importing_ = false;               ///< importConversation() is reading a file
  int undoTimeoutMs_ = undoTimeoutMs;
};
