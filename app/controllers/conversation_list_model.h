// ConversationListModel: the saved conversations for the left-hand list, a page at a time.
#pragma once

#include <QAbstractListModel>
#include <QDateTime>
#include <QList>

#include "app/store/chat_store.h"

/// List model over ChatStore::conversations(): pinned first, then newest activity first; soft-
/// deleted conversations are left out. Rows are read from the store a page at a time
/// (canFetchMore()/fetchMore(), which a ListView calls as it scrolls), so thousands of
/// conversations cost one page at start. Roles: conversationId, title, updatedAt (local time),
/// pinned, section (the date group the view shows as section headers: "Pinned", "Today",
/// "Yesterday", "Previous 7 days", "Older"). Call reload() after the store changed.
class ConversationListModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
  /// Live conversations in the store (loaded or not).
  Q_PROPERTY(int totalCount READ totalCount NOTIFY countChanged)

 public:
  enum Roles { ConversationIdRole = Qt::UserRole + 1, TitleRole, UpdatedAtRole, PinnedRole, SectionRole };
  Q_ENUM(Roles)
  /// Date groups, in display order.
  enum class Group { Pinned, Today, Yesterday, Previous7Days, Older };
  static constexpr int kDefaultPageSize = 100;

  explicit ConversationListModel(ChatStore* store, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;
  bool canFetchMore(const QModelIndex& parent) const override;
  void fetchMore(const QModelIndex& parent) override;

  /// Re-reads the loaded rows (at least one page). Keeps the rows (only dataChanged) when the
  /// order of ids is unchanged.
  void reload();
  /// Row of conversation `id` among the loaded rows, or -1.
  Q_INVOKABLE int rowOf(qint64 id) const;
  /// Conversation id at `row`, or 0.
  Q_INVOKABLE qint64 idAt(int row) const;
  const QList<ConversationRecord>& conversations() const { return rows_; }
  int totalCount() const { return total_; }

  /// Rows read per fetchMore() (and at least by reload()).
  void setPageSize(int rows) { pageSize_ = qMax(1, rows); }
  /// "Now" for the date groups (tests); an invalid time means the clock.
  void setNow(const QDateTime& now);
  /// The section titles may read differently (the UI language changed, or the day): the model
  /// is reset, so that views read every row's section again (Qt 6.4's ListView does not redraw
  /// its headings on a dataChanged of the section role).
  void renameSections();
  /// The date group of a conversation, relative to `now` (local calendar days).
  static Group groupOf(const ConversationRecord& c, const QDateTime& now);
  /// The group's section title, translated.
  static QString groupTitle(Group group);

 signals:
  void countChanged();

 private:
  QDateTime now() const;

  ChatStore* store_;
  QList<ConversationRecord> rows_;
  int total_ = 0;
  int pageSize_ = kDefaultPageSize;
  QDateTime now_;
};
