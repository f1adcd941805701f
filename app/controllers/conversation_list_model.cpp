#include "app/controllers/conversation_list_model.h"

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
    case ConversationIdRole:
      return c.id;
    case Qt::DisplayRole:
    case TitleRole:
      return c.title;
    case UpdatedAtRole:
      return c.updatedAt.toLocalTime();
    case PinnedRole:
      return c.pinned;
    case SectionRole:
      return groupTitle(groupOf(c, now()));
    default:
      return {};
  }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
  return {{ConversationIdRole, "conversationId"},
          {TitleRole, "title"},
          {UpdatedAtRole, "updatedAt"},
          {PinnedRole, "pinned"},
          {SectionRole, "section"}};
}

bool ConversationListModel::canFetchMore(const QModelIndex& parent) const {
  return !parent.isValid() && rows_.size() < total_;
}

void ConversationListModel::fetchMore(const QModelIndex& parent) {
  if (!canFetchMore(parent)) return;
  QList<ConversationRecord> page;
  try {
    page = store_->conversations(static_cast<int>(rows_.size()), pageSize_);
  } catch (const StoreError& e) {
    qWarning("pagedchat: %s", e.what());
    total_ = static_cast<int>(rows_.size());  // stop asking
    return;
  }
  if (page.isEmpty()) {
    total_ = static_cast<int>(rows_.size());
    return;
  }
  const int first = static_cast<int>(rows_.size());
  beginInsertRows(QModelIndex(), first, first + static_cast<int>(page.size()) - 1);
  rows_.append(page);
  endInsertRows();
  emit countChanged();
}

void ConversationListModel::reload() {
  const int want = qMax(pageSize_, static_cast<int>(rows_.size()));
  QList<ConversationRecord> fresh = store_->conversations(0, want);
  const int total = store_->conversationCount();
  // Same rows in the same groups: their data changes in place. Otherwise a reset, as a row that
  // changes group (a pin, a reply to yesterday's chat) needs the views' headings read again.
  const QDateTime at = now();
  bool sameOrder = fresh.size() == rows_.size();
  for (qsizetype i = 0; sameOrder && i < fresh.size(); ++i)
    sameOrder = fresh[i].id == rows_[i].id && groupOf(fresh[i], at) == groupOf(rows_[i], at);
  if (sameOrder) {
    rows_ = std::move(fresh);
    if (!rows_.isEmpty()) emit dataChanged(index(0), index(static_cast<int>(rows_.size()) - 1));
    if (total != total_) {
      total_ = total;
      emit countChanged();
    }
    return;
  }
  beginResetModel();
  rows_ = std::move(fresh);
  total_ = total;
  endResetModel();
  emit countChanged();
}

int ConversationListModel::rowOf(qint64 id) const {
  for (qsizetype i = 0; i < rows_.size(); ++i)
    if (rows_[i].id == id) return static_cast<int>(i);
  return -1;
}

qint64 ConversationListModel::idAt(int row) const { return row >= 0 && row < rows_.size() ? rows_.at(row).id : 0; }

void ConversationListModel::setNow(const QDateTime& now) {
  now_ = now;
  renameSections();
}

void ConversationListModel::renameSections() {
  beginResetModel();
  endResetModel();
}

QDateTime ConversationListModel::now() const { return now_.isValid() ? now_ : QDateTime::currentDateTime(); }

ConversationListModel::Group ConversationListModel::groupOf(const ConversationRecord& c, const QDateTime& now) {
  if (c.pinned) return Group::Pinned;
  const qint64 days = c.updatedAt.toLocalTime().date().daysTo(now.toLocalTime().date());
  if (days <= 0) return Group::Today;  // (a clock set back: still "today")
  if (days == 1) return Group::Yesterday;
  if (days < 7) return Group::Previous7Days;
  return Group::Older;
}

QString ConversationListModel::groupTitle(Group group) {
  switch (group) {
    case Group::Pinned:
      return tr("Pinned");
    case Group::Today:
      return tr("Today");
    case Group::Yesterday:
      return tr("Yesterday");
    case Group::Previous7Days:
      return tr("Previous 7 days");
    case Group::Older:
      return tr("Older");
  }
  return {};
}
