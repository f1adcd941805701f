#include "app/controllers/download_controller.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/loader/hub/gguf_choice.h"
#include "engine/loader/hub/hf_hub.h"

namespace hub = pagedchat::hub;

/// Runs the hub client on DownloadController's thread; every result goes back as a queued call.
class HubWorker : public QObject {
 public:
  explicit HubWorker(DownloadController* owner) : owner_(owner) {}

  void search(const QString& query) {
    QVariantList list;
    QString error;
    try {
      for (const hub::HubModel& m : hub::search_models(hub::hub_config_from_env(), query.toStdString(), 30))
        list.append(QVariantMap{{QStringLiteral("id"), QString::fromStdString(m.id)},
                                {QStringLiteral("downloads"), qint64(m.downloads)},
                                {QStringLiteral("gated"), !m.gated.empty()}});
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    post([list, error](DownloadController* c) { c->onSearchDone(list, error); });
  }

  void openRepo(const QString& id) {
    QVariantList files;
    QString error;
    try {
      const hub::HubRepo repo = hub::fetch_repo(hub::hub_config_from_env(), id.toStdString());
      repo_ = repo;
      const std::vector<hub::GgufModel> models = hub::gguf_models(repo);
      models_ = models;
      for (const hub::GgufModel& m : models)
        files.append(
            QVariantMap{{QStringLiteral("label"), QString::fromStdString(m.quant.empty() ? m.first_path() : m.quant)},
                        {QStringLiteral("path"), QString::fromStdString(m.first_path())},
                        {QStringLiteral("size"), qint64(m.size)},
                        {QStringLiteral("sizeText"), DownloadController::sizeText(qint64(m.size))},
                        {QStringLiteral("fits"), m.fits},
                        {QStringLiteral("recommended"), m.recommended},
                        {QStringLiteral("parts"), int(m.parts.size())}});
      if (models.empty()) {
        folder_ = hub::hf_folder_files(repo);
        qint64 size = 0;
        bool config = false, weights = false;
        for (const hub::HubFile& f : folder_) {
          size += qint64(f.size);
          config |= f.path == "config.json";
          weights |= QString::fromStdString(f.path).endsWith(QLatin1String(".safetensors"));
        }
        if (!config || !weights)
          throw std::runtime_error(
              id.toStdString() + " holds neither GGUF files nor a Hugging Face model (config.json and *.safetensors)");
        files.append(QVariantMap{
            {QStringLiteral("label"), QCoreApplication::translate("DownloadController", "Hugging Face folder")},
            {QStringLiteral("path"), QString()},
            {QStringLiteral("size"), size},
            {QStringLiteral("sizeText"), DownloadController::sizeText(size)},
            {QStringLiteral("fits"), hub::fits_in_memory(std::uint64_t(size))},
            {QStringLiteral("recommended"), true},
            {QStringLiteral("parts"), int(folder_.size())}});
      }
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
      files.clear();
    }
    post([id, files, error](DownloadController* c) { c->onRepoDone(id, files, error); });
  }

  void download(int index, const QString& modelsFolder, std::shared_ptr<std::atomic<bool>> cancel) {
    QString path, error;
    bool cancelled = false;
    try {
      const std::filesystem::path root = std::filesystem::path(modelsFolder.toStdString()) / repo_.id;
      std::vector<hub::HubFile> files;
      if (models_.empty()) {
        files = folder_;
        path = QString::fromStdString(root.string());
      } else {
        const hub::GgufModel& m = models_.at(std::size_t(index));
        files = m.parts;
        path = QString::fromStdString((root / m.first_path()).string());
      }
      std::uint64_t total = 0, before = 0;
      for (const hub::HubFile& f : files) total += f.size;
      QElapsedTimer clock;
      clock.start();
      qint64 lastPost = -1000;
      std::uint64_t startBytes = 0;  // already on disk when this run began (a resumed download)
      bool started = false;
      for (const hub::HubFile& f : files) {
        for (int attempt = 0;; ++attempt) {  // a broken transfer resumes, three times
          try {
            hub::download_file(
                hub::hub_config_from_env(), repo_.id, "main", f, root / f.path, [&](std::uint64_t done, std::uint64_t) {
                  if (*cancel) return false;
                  if (!started) {  // bytes already on disk (a resumed download) are not this run's speed
                    started = true;
                    startBytes = before + done;
                    clock.restart();
                  }
                  if (clock.elapsed() - lastPost >= 100) {
                    lastPost = clock.elapsed();
                    const double rate = clock.elapsed() > 0
                                            ? 1000.0 * double(before + done - startBytes) / double(clock.elapsed())
                                            : 0.0;
                    const qint64 d = qint64(before + done), t = qint64(total);
                    post([d, t, rate](DownloadController* c) { c->onProgress(d, t, rate); });
                  }
                  return true;
                });
            break;
          } catch (const hub::HubError& e) {
            if (e.kind() != hub::HubError::Kind::kNetwork || attempt >= 3) throw;
          }
        }
        before += f.size;
      }
    } catch (const hub::HubError& e) {
      if (e.kind() == hub::HubError::Kind::kCancelled)
        cancelled = true;
      else
        error = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    post([path, error, cancelled](DownloadController* c) { c->onDownloadDone(path, error, cancelled); });
  }

 private:
  template <typename F>
  void post(F f) {
    QMetaObject::invokeMethod(
        owner_, [o = owner_, f] { f(o); }, Qt::QueuedConnection);
  }

  DownloadController* owner_;
  hub::HubRepo repo_;
  std::vector<hub::GgufModel> models_;
  std::vector<hub::HubFile> folder_;
};

DownloadController::DownloadController(const QString& modelsFolder, QObject* parent)
    : QObject(parent),
      modelsFolder_(modelsFolder.isEmpty() ? QString::fromStdString(hub::default_models_dir().string()) : modelsFolder),
      cancel_(std::make_shared<std::atomic<bool>>(false)) {
  worker_ = new HubWorker(this);
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_.setObjectName(QStringLiteral("hub"));
  thread_.start();
  refreshLocalModels();
}

DownloadController::~DownloadController() {
  *cancel_ = true;  // a download stops at its next progress report (its .part stays)
  thread_.quit();
  thread_.wait();
}

QString DownloadController::sizeText(qint64 bytes) {
  const double b = double(bytes);
  if (b >= 1e9) return tr("%1 GB").arg(b / 1e9, 0, 'f', 2);
  if (b >= 1e6) return tr("%1 MB").arg(b / 1e6, 0, 'f', 1);
  if (b >= 1e3) return tr("%1 kB").arg(b / 1e3, 0, 'f', 1);
  return tr("%1 bytes").arg(bytes);
}

int DownloadController::recommendedIndex() const {
  for (int i = 0; i < files_.size(); ++i)
    if (files_.at(i).toMap().value(QStringLiteral("recommended")).toBool()) return i;
  return -1;
}

void DownloadController::setBusy(bool busy, bool downloading) {
  if (busy_ == busy && downloading_ == downloading) return;
  busy_ = busy;
  downloading_ = downloading;
  emit busyChanged();
}

void DownloadController::setError(const QString& text) {
  if (errorText_ == text) return;
  errorText_ = text;
  emit errorTextChanged();
}

void DownloadController::search(const QString& text) {
  if (busy_) return;
  const QString t = text.trimmed();
  if (hub::HubTarget target; hub::parse_hub_target(t.toStdString(), target)) {
    openRepo(QString::fromStdString(target.repo));
    return;
  }
  if (t.isEmpty()) return;
  setError(QString());
  setBusy(true);
  QMetaObject::invokeMethod(
      worker_, [w = worker_, t] { w->search(t); }, Qt::QueuedConnection);
}

void DownloadController::openRepo(const QString& id) {
  if (busy_) return;
  setError(QString());
  setBusy(true);
  QMetaObject::invokeMethod(
      worker_, [w = worker_, id] { w->openRepo(id); }, Qt::QueuedConnection);
}

void DownloadController::closeRepo() {
  if (busy_) return;
  repo_.clear();
  files_.clear();
  emit filesChanged();
  setError(QString());
}

void DownloadController::download(int index) {
  if (busy_ || index < 0 || index >= files_.size()) return;
  setError(QString());
  *cancel_ = false;
  progress_ = -1.0;
  statusText_ = tr("Starting the download…");
  emit progressChanged();
  setBusy(true, true);
  QMetaObject::invokeMethod(
      worker_, [w = worker_, index, folder = modelsFolder_, cancel = cancel_] { w->download(index, folder, cancel); },
      Qt::QueuedConnection);
}

void DownloadController::cancel() {
  if (downloading_) *cancel_ = true;
}

void DownloadController::onSearchDone(const QVariantList& results, const QString& error) {
  setBusy(false);
  results_ = results;
  emit resultsChanged();
  if (!error.isEmpty())
    setError(error);
  else if (results.isEmpty())
    setError(tr("No repository with GGUF files matches."));
}

void DownloadController::onRepoDone(const QString& repo, const QVariantList& files, const QString& error) {
  setBusy(false);
  repo_ = error.isEmpty() ? repo : QString();
  files_ = files;
  emit filesChanged();
  setError(error);
}

void DownloadController::onProgress(qint64 done, qint64 total, double bytesPerSecond) {
  progress_ = total > 0 ? double(done) / double(total) : -1.0;
  statusText_ = tr("%1 of %2, %3/s").arg(sizeText(done), sizeText(total), sizeText(qint64(bytesPerSecond)));
  emit progressChanged();
}

void DownloadController::onDownloadDone(const QString& path, const QString& error, bool cancelled) {
  setBusy(false);
  setError(error);
  if (cancelled || !error.isEmpty()) {
    // Stopped by the user: not an error; the .part stays for the next try.
    statusText_ = cancelled ? tr("Download stopped; downloading again resumes it.") : QString();
    emit progressChanged();
    return;
  }
  progress_ = 1.0;
  statusText_ = tr("Downloaded and checked: %1").arg(QDir::toNativeSeparators(path));
  emit progressChanged();
  downloadedPath_ = path;
  refreshLocalModels();
  emit downloaded(path);
}

void DownloadController::refreshLocalModels() {
  QVariantList list;
  const QDir root(modelsFolder_);
  static const QRegularExpression laterPart(QStringLiteral("-0000[2-9]-of-|-000[1-9][0-9]-of-|-00[1-9][0-9]{2}-of-"));
  for (QDirIterator it(modelsFolder_, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
       it.hasNext();) {
    const QFileInfo fi(it.next());
    const QString name = fi.fileName();
    bool model = false;
    qint64 size = 0;
    if (fi.isFile() && name.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive) &&
        !name.startsWith(QLatin1String("mmproj"), Qt::CaseInsensitive) && !name.contains(laterPart)) {
      model = true;
      size = fi.size();
    } else if (fi.isDir() && QFileInfo::exists(fi.filePath() + QStringLiteral("/config.json"))) {
      model = true;
      for (const QFileInfo& f : QDir(fi.filePath()).entryInfoList({QStringLiteral("*.safetensors")}, QDir::Files))
        size += f.size();
      if (size == 0) model = false;  // a download not finished (its weights still .part)
    }
    if (model)
      list.append(QVariantMap{{QStringLiteral("name"), root.relativeFilePath(fi.filePath())},
                              {QStringLiteral("path"), fi.filePath()},
                              {QStringLiteral("sizeText"), sizeText(size)}});
  }
  std::sort(list.begin(), list.end(), [](const QVariant& a, const QVariant& b) {
    return a.toMap().value(QStringLiteral("name")).toString() < b.toMap().value(QStringLiteral("name")).toString();
  });
  if (list != localModels_) {
    localModels_ = list;
    emit localModelsChanged();
  }
}
