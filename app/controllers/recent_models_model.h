// RecentModelsModel: the model picker's list of recently loaded models.
#pragma once

#include <QAbstractListModel>
#include <QDateTime>
#include <QHash>
#include <QStringList>
#include <QUrl>

class QSettings;

/// The models loaded before, newest first (at most kMaxRecent), kept in pagedchat.ini under
/// "models/recent"; the newest is also the one to load on the next start (lastModel). Each row
/// tells whether the file or folder still exists (role "exists"), so that the picker can show a
/// missing one as such; remove() and removeMissing() take rows out. Each row's "details" say
/// what the model is (size, quantization, parameters, context, chat template: summarize_model(),
/// read from the headers on a pool thread the first time a row is shown, again when the file
/// changes). lastFolder is where the file dialogs start: the folder of the model opened last.
/// Runs on the GUI thread.
class RecentModelsModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ count NOTIFY countChanged)
  Q_PROPERTY(QString lastModel READ lastModel NOTIFY countChanged)
  Q_PROPERTY(QUrl lastFolder READ lastFolder NOTIFY lastFolderChanged)

 public:
  enum Roles { PathRole = Qt::UserRole + 1, NameRole, ExistsRole, IsFolderRole, DetailsRole, SupportedRole };
  static constexpr int kMaxRecent = 10;

  /// Reads the list from `settings` (which must outlive the model).
  explicit RecentModelsModel(QSettings* settings, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

  /// Puts `path` at the top (moving it when listed) and saves; drops the oldest beyond kMaxRecent.
  Q_INVOKABLE void add(const QString& path);
  /// Takes `path` out of the list and saves.
  Q_INVOKABLE void remove(const QString& path);
  /// Takes every model whose file or folder is gone out of the list; returns how many.
  Q_INVOKABLE int removeMissing();
  /// Checks again which files exist (the picker calls it when it opens).
  Q_INVOKABLE void refresh();
  /// The chat template remembered for `path` ("auto" when none).
  Q_INVOKABLE QString chatTemplateFor(const QString& path) const;
  /// Remembers `name` as `path`'s chat template ("auto" forgets it).
  void setChatTemplateFor(const QString& path, const QString& name);
  /// The tokenizer file given with `path` (--tokenizer), or "" for the model's own.
  QString tokenizerFor(const QString& path) const;
  /// Remembers `tokenizer` for `path` ("" forgets it).
  void setTokenizerFor(const QString& path, const QString& tokenizer);
  /// Remembers the folder `path` (a model file or folder the user opened) is in, for lastFolder.
  void setLastFolderFrom(const QString& path);
  /// The folder of the model opened last (file URL; empty when none yet).
  QUrl lastFolder() const;
  /// A line saying what the model at `path` is ("4.4 GiB · Q4_K_M · 8.2 B parameters · context
  /// 40 960 · template chatml"), in the UI language, from pagedchat::summarize_model(); why it
  /// cannot be read when it cannot. Reads headers only, on the calling thread.
  static QString describeModel(const QString& path, bool* supported = nullptr);
  /// True when `path` can be loaded: an existing file or folder, or a "random:" model spec.
  static bool modelExists(const QString& path);

  int count() const { return static_cast<int>(paths_.size()); }
  const QStringList& paths() const { return paths_; }
  /// The newest entry ("" when the list is empty).
  QString lastModel() const { return paths_.isEmpty() ? QString() : paths_.first(); }

 signals:
  void countChanged();
  void lastFolderChanged();

 private:
  void save();
  /// Starts reading `path`'s details on a pool thread unless known for its current file time.
  void requestDetails(const QString& path) const;

  struct Details {
    QDateTime modified;  ///< the file's (folder's) time when read
    QString text;        ///< "" while being read
    bool supported = true;
    bool pending = false;
    bool stale = false;  ///< to be read again when next shown (refresh())
  };
  QSettings* settings_;
  QStringList paths_;
  mutable QHash<QString, Details> details_;
};
