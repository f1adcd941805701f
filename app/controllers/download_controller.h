// DownloadController: models from the Hugging Face hub in the app (what QML sees as
// app.downloads): search or paste a repository, its files with quantization, size, whether each
// fits and the recommended one, a download with progress that resumes and is checked, and the
// models already in the models folder. The hub client is engine/loader/hub (the same as
// `pagedchat-cli pull`), run on a thread of its own.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>
#include <QVariantList>

#include <atomic>
#include <memory>

class HubWorker;

/// GUI-thread front of the hub client. One operation at a time (a search, a repository's file
/// list, or a download); a new search or repository replaces what is shown. Errors are the hub
/// client's words (HubError: gated, not found, checksum, network), shown as `errorText`.
class DownloadController : public QObject {
  Q_OBJECT
  /// Search results: {id, downloads, gated} maps, most downloaded first.
  Q_PROPERTY(QVariantList results READ results NOTIFY resultsChanged)
  /// The repository whose files are listed ("" = none).
  Q_PROPERTY(QString repo READ repo NOTIFY filesChanged)
  /// Its models: {label, path, size, sizeText, fits, recommended, parts} maps, smallest first; a
  /// repository without GGUF lists its Hugging Face folder as one entry (path "").
  Q_PROPERTY(QVariantList files READ files NOTIFY filesChanged)
  /// Index in `files` of the recommended model (-1 = none).
  Q_PROPERTY(int recommendedIndex READ recommendedIndex NOTIFY filesChanged)
  /// A search, a file list or a download is running.
  Q_PROPERTY(bool busy READ isBusy NOTIFY busyChanged)
  /// A download is running (progress applies).
  Q_PROPERTY(bool downloading READ isDownloading NOTIFY busyChanged)
  /// 0 to 1 while downloading (-1: size not known yet).
  Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
  /// "1.2 GB of 2.5 GB, 12.3 MB/s" while downloading; what was done after ("").
  Q_PROPERTY(QString statusText READ statusText NOTIFY progressChanged)
  Q_PROPERTY(QString errorText READ errorText NOTIFY errorTextChanged)
  /// The model the last download gave (a file, or a folder), "" before one.
  Q_PROPERTY(QString downloadedPath READ downloadedPath NOTIFY downloaded)
  /// Where downloads go: $XDG_DATA_HOME/PagedChat/models (or the folder given to the constructor).
  Q_PROPERTY(QString modelsFolder READ modelsFolder CONSTANT)
  /// The models in that folder: {name, path, sizeText} maps (GGUF files, split ones by their first
  /// part, and Hugging Face folders), by name.
  Q_PROPERTY(QVariantList localModels READ localModels NOTIFY localModelsChanged)

 public:
  /// `modelsFolder` "" = hub::default_models_dir().
  explicit DownloadController(const QString& modelsFolder = QString(), QObject* parent = nullptr);
  ~DownloadController() override;

  /// `text` a repository id or its hub address (https://huggingface.co/org/name, hf.co/org/name,
  /// optionally :QUANT): lists its files; other words: searches the hub for GGUF repositories.
  Q_INVOKABLE void search(const QString& text);
  /// Lists the files of repository `id`.
  Q_INVOKABLE void openRepo(const QString& id);
  /// Back to the search results (no repository listed).
  Q_INVOKABLE void closeRepo();
  /// Downloads files[index] (every part of a split model; a folder's files) into the models folder.
  Q_INVOKABLE void download(int index);
  /// Stops the running download (its .part stays: downloading again resumes it).
  Q_INVOKABLE void cancel();
  /// Lists the models folder again.
  Q_INVOKABLE void refreshLocalModels();

  QVariantList results() const { return results_; }
  QString repo() const { return repo_; }
  QVariantList files() const { return files_; }
  int recommendedIndex() const;
  bool isBusy() const { return busy_; }
  bool isDownloading() const { return downloading_; }
  double progress() const { return progress_; }
  QString statusText() const { return statusText_; }
  QString errorText() const { return errorText_; }
  QString downloadedPath() const { return downloadedPath_; }
  QString modelsFolder() const { return modelsFolder_; }
  QVariantList localModels() const { return localModels_; }

  /// "2.50 GB", "300.0 kB" (decimal units, as the hub shows sizes).
  static QString sizeText(qint64 bytes);

 signals:
  void resultsChanged();
  void filesChanged();
  void busyChanged();
  void progressChanged();
  void errorTextChanged();
  void localModelsChanged();
  /// A download finished and was checked: `path` is the model to open.
  void downloaded(const QString& path);

 private:
  friend class HubWorker;  // posts its results to the on*() below (queued, GUI thread)
  void setBusy(bool busy, bool downloading = false);
  void setError(const QString& text);
  void onSearchDone(const QVariantList& results, const QString& error);
  void onRepoDone(const QString& repo, const QVariantList& files, const QString& error);
  void onProgress(qint64 done, qint64 total, double bytesPerSecond);
  void onDownloadDone(const QString& path, const QString& error, bool cancelled = false);

  QString modelsFolder_;
  QThread thread_;
  HubWorker* worker_ = nullptr;
  std::shared_ptr<std::atomic<bool>> cancel_;
  QVariantList results_, files_, localModels_;
  QString repo_, statusText_, errorText_, downloadedPath_;
  bool busy_ = false, downloading_ = false;
  double progress_ = -1.0;
};
