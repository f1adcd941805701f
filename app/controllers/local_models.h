// LocalModels: the models loaded on this computer at once — the main one and those panes chose.
#pragma once

#include <QHash>
#include <QObject>
#include <QSet>
#include <QString>
#include <QUrl>
#include <QVariantList>

#include <cstdint>
#include <functional>

class LocalChatBackend;
class PaneListModel;
class PaneState;
class RecentModelsModel;

/// The main model (ModelController's: the one the tool bar opens, the server and the engine view
/// use) and the other local models panes answer with (usePaneModel(); QML: app.localModels). Each model
/// has its own LocalChatBackend: its worker thread, engine, continuous batch and KV cache; the
/// panes on one model share its batch. A model other than the main one loads when the first pane
/// picks it and is freed when no pane uses it any more (a pane closed, or given another model).
///
/// The memory rule (README, "Two models side by side"): every model's weights and KV cache come
/// out of the memory the kernel reports available (/proc/meminfo's MemAvailable, after the models
/// already loaded), less kReservedBytes kept for the app and the system. A model loads beside
/// others only when its weights (the size of its files) fit in that; the engine then gets the
/// rest as its EngineConfig::host_memory_budget, so its KV cache is lowered to fit, and the load
/// fails, naming the numbers, when even one full-length sequence would not. While other models
/// are loaded, reloading the main one (another file, other engine settings) gets the same budget,
/// counting the memory its current model gives back. Runs on the GUI thread.
class LocalModels : public QObject {
  Q_OBJECT
  /// The models other than the main one, loaded or loading: one map each ({path, name, panes,
  /// ready, loading, error, memoryBytes}), in the order they were picked.
  Q_PROPERTY(QVariantList others READ others NOTIFY changed)
  /// How many of them are loaded or loading (a failed load does not count).
  Q_PROPERTY(int numLoaded READ numLoaded NOTIFY changed)

 public:
  /// Kept free for the app and the system when a model loads beside others: 512 MiB.
  static constexpr std::uint64_t kReservedBytes = std::uint64_t(512) << 20;
  /// Bytes of memory available for new allocations now.
  using MemoryProbe = std::function<std::uint64_t()>;

  /// `main`, `recent` (the chat template and tokenizer each model was opened with) and `panes`
  /// must outlive this object. Other models load with the main one's engine settings.
  LocalModels(LocalChatBackend* main, RecentModelsModel* recent, PaneListModel* panes, QObject* parent = nullptr);
  /// Frees the other models (their worker threads stop; requests in flight end "abort").
  ~LocalModels() override;

  /// Replaces pagedchat::available_memory_bytes() (tests: a machine with little memory).
  void setMemoryProbe(MemoryProbe probe);

  LocalChatBackend* main() const { return main_; }
  /// Pane `pane` answers with the model at `path` (a file or folder the engine opens): the main
  /// one when it has that model or `path` is "", else another model, loaded beside the main one
  /// unless a pane uses it already (PaneState::useLocalModel; a generation in flight stops).
  /// Returns "" or why nothing changed: no such pane, or the model does not fit in memory (a
  /// sentence naming the numbers). A model that fits but then fails to load shows its error in
  /// the pane, as the main one's does.
  Q_INVOKABLE QString usePaneModel(int pane, const QString& path);
  QString usePaneModel(PaneState* pane, const QString& path);
  /// A file dialog's choice as a model path (ModelController::modelPathOf).
  Q_INVOKABLE QString modelPathOfUrl(const QUrl& url) const;
  /// The other model pane `pane` answers with, or "" (the main one, a remote endpoint).
  Q_INVOKABLE QString paneModelPath(int pane) const;
  /// The other models a pane can pick: those loaded, then the recent models that still exist
  /// (RecentModelsModel), the main one left out; each {path, name, loaded}.
  Q_INVOKABLE QVariantList choices() const;
  /// The path of the other model `backend` holds, or "" (the main one, or none of ours).
  QString pathOf(const LocalChatBackend* backend) const;
  QVariantList others() const;
  int numLoaded() const;

 signals:
  void changed();

 private:
  struct Other {
    LocalChatBackend* backend = nullptr;
    QSet<PaneState*> users;
    std::uint64_t fileBytes = 0;  ///< the model's files (pagedchat::summarize_model), 0 if unknown
  };
  /// The backend for `path` (another model's), with `pane` counted as its user; loads it when no
  /// pane uses it. nullptr and `error` when it would not fit.
  LocalChatBackend* acquire(const QString& path, PaneState* pane, QString* error);
  /// `pane` no longer uses the other model it acquired; a model no pane uses is freed.
  void release(PaneState* pane);
  /// Bytes the models still loading will take beyond what MemAvailable already shows.
  std::uint64_t loadingBytes() const;
  /// Budget for the main model's next load: 0 (no limit) while it is alone.
  std::size_t mainBudget() const;
  void freeUnused(const QString& path);

  LocalChatBackend* main_;
  RecentModelsModel* recent_;
  PaneListModel* panes_;
  MemoryProbe probe_;
  QHash<QString, Other> others_;
  QStringList order_;
  QHash<PaneState*, QString> userPath_;                        ///< each pane's other model
  QHash<PaneState*, QList<QMetaObject::Connection>> watches_;  ///< its destruction and backend changes
};
