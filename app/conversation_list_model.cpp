#include "app/conversation_list_model.h"

ConversationListModel::ConversationListModel(ChatStore* store, QObject* parent)
    : QAbstractListModel(parent), store_(store) {
  reload();
}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const ConversationRecord& c = rows_.at(index.row());
  switch (role) {
    case ConversationIdRole: return c.id;
    case Qt::DisplayRole:
    case TitleRole: return c.title;
    case UpdatedAtRole: return c.updatedAt.toLocalTime();
    default: return {};
  }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
  return {{ConversationIdRole, "conversationId"}, {TitleRole, "title"}, {UpdatedAtRole, "updatedAt"}};
}

void ConversationListModel::reload() {
  QList<ConversationRecord> fresh = store_->conversations();
  bool sameOrder = fresh.size() == rows_.size();
  for (qsizetype i = 0; sameOrder && i < fresh.size(); ++i) sameOrder = fresh[i].id == rows_[i].id;
  if (sameOrder) {
    rows_ = std::move(fresh);
    if (!rows_.isEmpty()) emit dataChanged(index(0), index(static_cast<int>(rows_.size()) - 1));
    return;
  }
  beginResetModel();
  rows_ = std::move(fresh);
  endResetModel();
  emit countChanged();
}

int ConversationListModel::rowOf(qint64 id) const {
  for (qsizetype i = 0; i < rows_.size(); ++i)
    if (rows_[i].id == id) return static_cast<int>(i);
  return -1;
}

qint64 ConversationListModel::idAt(int row) const {
  return row >= 0 && row < rows_.size() ? rows_.at(row).id : 0;
}
