#include "app/controllers/recent_models_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QPointer>
#include <QSettings>
#include <QThreadPool>

#include <exception>

#include "engine/loader/model_summary.h"

namespace {
const QString kRecentKey = QStringLiteral("models/recent");
const QString kTemplatesGroup = QStringLiteral("modelTemplates");
const QString kLastFolderKey = QStringLiteral("models/lastFolder");

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
    case DetailsRole:
    case SupportedRole: {
      requestDetails(path);
      const Details& d = details_.value(path);
      return role == DetailsRole ? QVariant(d.text) : QVariant(d.supported);
    }
    default:
      return {};
  }
}

QHash<int, QByteArray> RecentModelsModel::roleNames() const {
  return {{PathRole, "path"},         {NameRole, "name"},       {ExistsRole, "exists"},
          {IsFolderRole, "isFolder"}, {DetailsRole, "details"}, {SupportedRole, "supported"}};
}

void RecentModelsModel::add(const QString& rawPath) {
  const QString path = QDir::cleanPath(rawPath);
  if (path.isEmpty() || path == QLatin1String(".")) return;
  if (!paths_.isEmpty() && paths_.first() == path) return;
  // Row moves and inserts, not a reset: an open picker keeps its rows and scroll position.
  if (const qsizetype row = paths_.indexOf(path); row > 0) {
    beginMoveRows({}, static_cast<int>(row), static_cast<int>(row), {}, 0);
    paths_.move(row, 0);
    endMoveRows();
  } else {
    beginInsertRows({}, 0, 0);
    paths_.prepend(path);
    endInsertRows();
    if (paths_.size() > kMaxRecent) {
      beginRemoveRows({}, kMaxRecent, static_cast<int>(paths_.size()) - 1);
      paths_.resize(kMaxRecent);
      endRemoveRows();
    }
  }
  save();
  emit countChanged();
}

void RecentModelsModel::setLastFolderFrom(const QString& path) {
  if (path.isEmpty() || path.startsWith(QLatin1String("random:"))) return;
  const QFileInfo info(path);
  // A model folder (Hugging Face, llama2.c) is opened from its parent, as a file from its own.
  const QString folder = info.absolutePath();
  if (folder.isEmpty() || !QFileInfo(folder).isDir() || settings_->value(kLastFolderKey).toString() == folder) return;
  settings_->setValue(kLastFolderKey, folder);
  emit lastFolderChanged();
}

QUrl RecentModelsModel::lastFolder() const {
  const QString folder = settings_->value(kLastFolderKey).toString();
  return folder.isEmpty() || !QFileInfo(folder).isDir() ? QUrl() : QUrl::fromLocalFile(folder);
}

QString RecentModelsModel::describeModel(const QString& path, bool* supported) {
  if (supported) *supported = true;
  if (path.startsWith(QLatin1String("random:"))) return tr("random weights: %1").arg(path.mid(7));
  pagedchat::ModelSummary s;
  try {
    s = pagedchat::summarize_model(path.toStdString());
  } catch (const std::exception& e) {
    if (supported) *supported = false;
    return tr("cannot be read: %1").arg(QString::fromUtf8(e.what()));
  }
  const QLocale locale;
  QStringList parts;
  if (!s.supported) {
    if (supported) *supported = false;
    parts << tr("not supported: %1").arg(QString::fromStdString(s.architecture));
  }
  if (s.size_bytes > 0) parts << locale.formattedDataSize(qint64(s.size_bytes), 1);
  if (!s.quantization.empty()) parts << QString::fromStdString(s.quantization);
  if (s.n_params >= 1000000000ull)
    parts << tr("%1 B parameters").arg(locale.toString(double(s.n_params) / 1e9, 'f', 1));
  else if (s.n_params >= 1000000ull)
    parts << tr("%1 M parameters").arg(locale.toString(double(s.n_params) / 1e6, 'f', 1));
  else if (s.n_params > 0)
    parts << tr("%1 K parameters").arg(locale.toString(double(s.n_params) / 1e3, 'f', 0));
  if (s.context_length > 0) parts << tr("context %1").arg(locale.toString(qint64(s.context_length)));
  parts << (s.chat_template.empty()       ? tr("no chat template")
            : s.chat_template == "custom" ? tr("its own chat template")
                                          : tr("chat template %1").arg(QString::fromStdString(s.chat_template)));
  return parts.join(QStringLiteral(" · "));
}

void RecentModelsModel::requestDetails(const QString& path) const {
  const QDateTime modified = QFileInfo(path).lastModified();
  Details& d = details_[path];
  if (d.pending || (!d.text.isEmpty() && d.modified == modified && !d.stale)) return;
  d.pending = true;
  d.stale = false;
  d.modified = modified;
  QPointer<RecentModelsModel> self(const_cast<RecentModelsModel*>(this));
  // The language is the one of now; a language switch re-reads (refresh()).
  QThreadPool::globalInstance()->start([self, path] {
    bool supported = true;
    const QString text = describeModel(path, &supported);
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [self, path, text, supported] {
          if (!self) return;
          Details& entry = self->details_[path];
          entry.pending = false;
          entry.text = text;
          entry.supported = supported;
          const qsizetype row = self->paths_.indexOf(path);
          if (row >= 0)
            emit self->dataChanged(self->index(int(row)), self->index(int(row)), {DetailsRole, SupportedRole});
        },
        Qt::QueuedConnection);
  });
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
  // Details are read again (the files may have changed, or the language); the old text stays
  // shown meanwhile.
  for (auto it = details_.begin(); it != details_.end(); ++it) it->stale = true;
  if (!paths_.isEmpty())
    emit dataChanged(index(0), index(count() - 1), {ExistsRole, IsFolderRole, DetailsRole, SupportedRole});
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
