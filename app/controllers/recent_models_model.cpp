#include "app/controllers/recent_models_model.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

namespace {
const QString kRecentKey = QStringLiteral("models/recent");
const QString kTemplatesGroup = QStringLiteral("modelTemplates");

// QSettings keys cannot hold '/' or '\\' as such: the path is hex-encoded.
QString templateKey(const QString& path) {
  return kTemplatesGroup + QLatin1Char('/') + QString::fromLatin1(path.toUtf8().toHex());
}
QString tokenizerKey(const QString& path) {
  return QStringLiteral("modelTokenizers/") + QString::fromLatin1(path.toUtf8().toHex());
}
}  // namespace

bool RecentModelsModel::modelExists(const QString& path) {
  return path.startsWith(QLatin1String("random:")) || QFileInfo::exists(path);
}

QString RecentModelsModel::tokenizerFor(const QString& path) const {
  return settings_->value(tokenizerKey(QDir::cleanPath(path))).toString();
}

void RecentModelsModel::setTokenizerFor(const QString& path, const QString& tokenizer) {
  const QString key = tokenizerKey(QDir::cleanPath(path));
  if (tokenizer.isEmpty())
    settings_->remove(key);
  else
    settings_->setValue(key, tokenizer);
}

RecentModelsModel::RecentModelsModel(QSettings* settings, QObject* parent)
    : QAbstractListModel(parent), settings_(settings) {
  for (const QString& p : settings_->value(kRecentKey).toStringList())
    if (!p.isEmpty() && !paths_.contains(p) && paths_.size() < kMaxRecent) paths_.append(p);
}

int RecentModelsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : count(); }

QVariant RecentModelsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= count()) return {};
  const QString& path = paths_.at(index.row());
  switch (role) {
    case Qt::DisplayRole:
    case NameRole: {
      const QFileInfo info(path);
      return info.fileName().isEmpty() ? path : info.fileName();
    }
    case PathRole:
      return QDir::toNativeSeparators(path);
    case ExistsRole:
      return modelExists(path);
    case IsFolderRole:
      return QFileInfo(path).isDir();
    default:
      return {};
  }
}

QHash<int, QByteArray> RecentModelsModel::roleNames() const {
  return {{PathRole, "path"}, {NameRole, "name"}, {ExistsRole, "exists"}, {IsFolderRole, "isFolder"}};
}

void RecentModelsModel::add(const QString& rawPath) {
  const QString path = QDir::cleanPath(rawPath);
  if (path.isEmpty() || path == QLatin1String(".")) return;
  if (!paths_.isEmpty() && paths_.first() == path) return;
  beginResetModel();
  paths_.removeAll(path);
  paths_.prepend(path);
  while (paths_.size() > kMaxRecent) paths_.removeLast();
  endResetModel();
  save();
  emit countChanged();
}

void RecentModelsModel::remove(const QString& rawPath) {
  const QString path = QDir::cleanPath(QDir::fromNativeSeparators(rawPath));
  const qsizetype row = paths_.indexOf(path);
  if (row < 0) return;
  beginRemoveRows({}, static_cast<int>(row), static_cast<int>(row));
  paths_.removeAt(row);
  endRemoveRows();
  save();
  emit countChanged();
}

int RecentModelsModel::removeMissing() {
  int removed = 0;
  for (qsizetype row = paths_.size() - 1; row >= 0; --row) {
    if (modelExists(paths_.at(row))) continue;
    beginRemoveRows({}, static_cast<int>(row), static_cast<int>(row));
    paths_.removeAt(row);
    endRemoveRows();
    ++removed;
  }
  if (removed > 0) {
    save();
    emit countChanged();
  }
  return removed;
}

void RecentModelsModel::refresh() {
  if (!paths_.isEmpty()) emit dataChanged(index(0), index(count() - 1), {ExistsRole, IsFolderRole});
}

QString RecentModelsModel::chatTemplateFor(const QString& path) const {
  return settings_->value(templateKey(QDir::cleanPath(path)), QStringLiteral("auto")).toString();
}

void RecentModelsModel::setChatTemplateFor(const QString& path, const QString& name) {
  const QString key = templateKey(QDir::cleanPath(path));
  if (name.isEmpty() || name == QLatin1String("auto"))
    settings_->remove(key);
  else
    settings_->setValue(key, name);
}

void RecentModelsModel::save() { settings_->setValue(kRecentKey, paths_); }
