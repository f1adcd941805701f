// ConversationListModel: the saved conversations, newest first, for the left-hand list.
#pragma once

#include <QAbstractListModel>
#include <QList>

#include "app/chat_store.h"

/// List model over ChatStore::conversations() (newest activity first). Roles: conversationId,
/// title, updatedAt (local time). Call reload() after the store changed.
class ConversationListModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum Roles { ConversationIdRole = Qt::UserRole + 1, TitleRole, UpdatedAtRole };
  Q_ENUM(Roles)

  explicit ConversationListModel(ChatStore* store, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

  /// Re-reads the store. Keeps the rows (only dataChanged) when the order of ids is unchanged.
  void reload();
  /// Row of conversation `id`, or -1.
  Q_INVOKABLE int rowOf(qint64 id) const;
  /// Conversation id at `row`, or 0.
  Q_INVOKABLE qint64 idAt(int row) const;
  const QList<ConversationRecord>& conversations() const { return rows_; }

 signals:
  void countChanged();

 private:
  ChatStore* store_;
  QList<ConversationRecord> rows_;
};
