#include "app/controllers/model_controller.h"

#include <QDir>
#include <QFileInfo>

#include <utility>

#include "app/app_errors.h"
#include "app/controllers/recent_models_model.h"
#include "app/engine/engine_settings.h"
#include "app/engine/local_chat_backend.h"
#include "app/engine/sentence.h"
#include "engine/loader/hf/hf_loader.h"

ModelController::ModelController(LocalChatBackend* engine, RecentModelsModel* recentModels,
                                 EngineSettings* engineSettings, AppErrors* errors, QObject* parent)
    : QObject(parent), engine_(engine), recentModels_(recentModels), engineSettings_(engineSettings), errors_(errors) {
  connect(engine_, &LocalChatBackend::modelLoadFinished, this,
          [this](bool ok, const QString& path, const QString& error) { onModelLoadFinished(ok, path, error); });
  connect(engine_, &LocalChatBackend::chatTemplateWarning, this, [this](const QString& message) {
    showLoadWarning(tr("The model's chat template cannot be used as it is: %1").arg(message));
  });
  connect(engine_, &LocalChatBackend::engineWarning, this,
          [this](const QString& message) { showLoadWarning(tr("Warning from the engine: %1").arg(message)); });
  connect(engineSettings_, &EngineSettings::applied, this, [this] {
    // Saved only once the model reloaded with them (onModelLoadFinished()).
    settingsReloadPending_ = !engine_->modelPath().isEmpty();
    reloadWithEngineSettings();
    if (!settingsReloadPending_) engineSettings_->commit();  // no model to try them on
  });
}

QString ModelController::modelPathOf(const QString& path) {
  QString clean = QDir::cleanPath(QDir::fromNativeSeparators(path.trimmed()));
  if (clean == QLatin1String(".")) return {};
  // A file of a Hugging Face folder (config.json, a .safetensors shard, the index) chosen in the
  // file dialog stands for its folder: the folder is what loads and what the recent list keeps.
  if (const QFileInfo info(clean); info.isFile() && !info.fileName().endsWith(QLatin1String(".gguf"))) {
    const std::string folder = pagedchat::hf_folder_of(clean.toStdString());
    if (!folder.empty()) clean = QDir::cleanPath(QString::fromStdString(folder));
  }
  return clean;
}

void ModelController::openModel(const QString& path) {
  const QString clean = modelPathOf(path);
  if (clean.isEmpty()) return;
  recentModels_->setLastFolderFrom(clean);
  setLoadError(QString());
  errors_->clearModelError();  // a new attempt: the last one's message goes
  engine_->loadModel(clean, recentModels_->chatTemplateFor(clean), recentModels_->tokenizerFor(clean));
}

void ModelController::openModelUrl(const QUrl& url) {
  openModel(url.isLocalFile() ? url.toLocalFile() : url.toString());
}

void ModelController::unloadModel() {
  setLoadError(QString());
  errors_->clearModelError();
  lastLoadedModel_.clear();
  engine_->unloadModel();
}

void ModelController::setLoadError(const QString& text) {
  if (text == loadError_) return;
  loadError_ = text;
  emit loadErrorChanged();
}

QString ModelController::applyEngineSettings(int kvCacheMiB, int maxNumSeqs, int blockSize, int numThreads,
                                             const QString& kvCacheDtype, int contextLength,
                                             const QVariant& draftModel) {
  return engineSettings_->apply(kvCacheMiB, maxNumSeqs, blockSize, numThreads, kvCacheDtype, contextLength, draftModel);
}

void ModelController::reloadWithEngineSettings() {
  pagedchat::EngineConfig c = engine_->engineConfig();
  engineSettings_->applyTo(c);
  engine_->setEngineConfig(c);  // reloads the current model with them
}

void ModelController::onModelLoadFinished(bool ok, const QString& path, const QString& error) {
  const bool settingsReload = std::exchange(settingsReloadPending_, false);
  if (ok) {
    if (settingsReload) {
      engineSettings_->commit();
      errors_->clearModelError();  // an earlier failed attempt's message
    }
    if (!path.isEmpty()) {
      recentModels_->add(path);
      recentModels_->setLastFolderFrom(path);  // also a model given with --model at start
      lastLoadedModel_ = path;
    }
    if (!pendingLoadWarning_.isEmpty()) errors_->setModelError(std::exchange(pendingLoadWarning_, QString()));
    return;
  }
  pendingLoadWarning_.clear();
  const QString kvMessage = EngineSettings::kvCacheTooSmallMessage(error);
  if (settingsReload && engineSettings_->hasUnsavedValues()) {
    // The new settings do not work with this model: keep the saved ones and the model.
    const QString message = tr("The engine settings were not applied: %1 The previous settings were restored.")
                                .arg(sentence(kvMessage.isEmpty() ? error : kvMessage));
    engineSettings_->revert(message);
    reloadWithEngineSettings();
    errors_->setModelError(message);
    return;
  }
  if (!kvMessage.isEmpty() && engineSettings_->kvCacheMiB() != 0) {
    // Saved settings (an earlier run, a hand-edited file) too small for this model: automatic.
    const int was = engineSettings_->kvCacheMiB();
    engineSettings_->resetKvCacheToAutomatic();
    reloadWithEngineSettings();
    errors_->setModelError(tr("The saved KV cache size (%1 MiB) was too small for this model; it was set back to "
                              "automatic. %2")
                               .arg(was)
                               .arg(kvMessage));
    return;
  }
  if (lastLoadedModel_.isEmpty() || lastLoadedModel_ == path) {
    setLoadError(error);
    return;
  }
  // The model the user opened did not load: the one loaded before (freed first, to keep memory
  // for the new one) comes back, with its chat template and tokenizer.
  const QString previous = lastLoadedModel_;
  const QString message =
      tr("%1 The model loaded before (%2) was loaded again.").arg(sentence(error), QFileInfo(previous).fileName());
  setLoadError(message);
  errors_->setModelError(message);
  engine_->loadModel(previous, recentModels_->chatTemplateFor(previous), recentModels_->tokenizerFor(previous));
}

void ModelController::showLoadWarning(const QString& text) {
  if (!engine_->isLoading()) {
    errors_->setModelError(text);
    return;
  }
  // Shown once the load has finished (which clears older messages), after the load's other warnings.
  if (!pendingLoadWarning_.isEmpty()) pendingLoadWarning_ += QLatin1Char('\n');
  pendingLoadWarning_ += text;
}
