// ModelController: which model the engine runs, and with which engine settings; handed to QML as
// `app.models`.
#pragma once

#include <QObject>
#include <QString>
#include <QUrl>

class AppErrors;
class LocalChatBackend;
class EngineSettings;
class RecentModelsModel;

/// Opens and unloads models on the engine's worker thread, remembers them (RecentModelsModel:
/// the model picker's list, each with its chat template and tokenizer) and applies the engine
/// settings (EngineSettings: saved only once the model reloaded with them). A model that fails
/// to load says why (loadError, and AppErrors) and gives way to the model loaded before.
class ModelController : public QObject {
  Q_OBJECT
  /// Why the model the user opened last did not load ("" once another is opened or unloaded);
  /// the model picker shows it, also after the previous model was loaded again.
  Q_PROPERTY(QString loadError READ loadError NOTIFY loadErrorChanged)
  /// The model picker's recent models.
  Q_PROPERTY(RecentModelsModel* recentModels READ recentModels CONSTANT)
  /// The engine settings page's values.
  Q_PROPERTY(EngineSettings* engineSettings READ engineSettings CONSTANT)

 public:
  /// Follows `engine`'s loads; every argument must outlive this object.
  ModelController(LocalChatBackend* engine, RecentModelsModel* recentModels, EngineSettings* engineSettings,
                  AppErrors* errors, QObject* parent = nullptr);

  /// Loads the model file or folder `path` on the worker thread (running requests are stopped
  /// first and keep their text). Once it loads it heads the recent models and is loaded on the
  /// next start. A failure shows in loadError and AppErrors (file name and reason), and the
  /// model loaded before, if any, is loaded again (with its chat template and tokenizer).
  Q_INVOKABLE void openModel(const QString& path);
  /// The path a model loads from and the recent list keeps: `path` cleaned, and a file of a
  /// Hugging Face folder (config.json, a .safetensors shard) replaced by the folder; "" for "".
  static QString modelPathOf(const QString& path);
  /// openModel() for a file dialog's URL.
  Q_INVOKABLE void openModelUrl(const QUrl& url);
  /// Stops every request and frees the model; the panes say that no model is loaded.
  Q_INVOKABLE void unloadModel();
  /// Validates and saves the engine settings and reloads the model with them (on the worker
  /// thread, with progress). Returns "" or the validation message (nothing changes then).
  /// `draftModel` as EngineSettings::apply takes it (not given: kept).
  Q_INVOKABLE QString applyEngineSettings(int kvCacheMiB, int maxNumSeqs, int blockSize, int numThreads,
                                          const QString& kvCacheDtype = QString(), int contextLength = -1,
                                          const QVariant& draftModel = QVariant());

  QString loadError() const { return loadError_; }
  RecentModelsModel* recentModels() const { return recentModels_; }
  EngineSettings* engineSettings() const { return engineSettings_; }

 signals:
  void loadErrorChanged();

 private:
  void setLoadError(const QString& text);
  /// A warning of the model load (its chat template, the engine's): in the banner once it loaded.
  void showLoadWarning(const QString& text);
  /// Saves applied engine settings once the reload worked; when it failed, restores the saved
  /// ones and reloads the model with them; a saved KV cache too small for a model goes back to
  /// automatic. A model the user opened that fails to load gives way to the one loaded before.
  /// Says why in AppErrors.
  void onModelLoadFinished(bool ok, const QString& path, const QString& error);
  /// Reloads the current model with the engine settings.
  void reloadWithEngineSettings();

  LocalChatBackend* engine_;
  RecentModelsModel* recentModels_;
  EngineSettings* engineSettings_;
  AppErrors* errors_;
  QString loadError_;
  QString pendingLoadWarning_;          ///< the warnings of the load in progress, one a line
  QString lastLoadedModel_;             ///< path of the model that loaded last ("" after an unload)
  bool settingsReloadPending_ = false;  ///< the load in progress tries applied engine settings
};
