// EngineSettings: the engine page of the settings dialog (KV cache, sequences, block size, threads,
// context length, what happens when a conversation outgrows the context).
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QVariant>

#include "engine/config.h"
#include "engine/text/chat_template.h"

class QSettings;

/// The engine settings the user chose, kept in pagedchat.ini under "engine/": KV-cache size in
/// MiB (0 = automatic: room for 8 full-length sequences), most sequences running at once, tokens
/// per KV block, CPU threads (0 = all cores), KV-cache element type (EngineConfig::kv_cache_dtype;
/// its name, "auto", "float32", "bfloat16", "float16", "q8_0", in the file and in QML). apply() validates
/// (validationError() says what is wrong, in words), takes the values and emits applied(); the controller then reloads
/// the model with them and calls commit() (saves) when the reload worked, or revert() when it failed.
class EngineSettings : public QObject {
  Q_OBJECT
  Q_PROPERTY(int kvCacheMiB READ kvCacheMiB NOTIFY changed)
  Q_PROPERTY(int maxNumSeqs READ maxNumSeqs NOTIFY changed)
  Q_PROPERTY(int blockSize READ blockSize NOTIFY changed)
  Q_PROPERTY(int numThreads READ numThreads NOTIFY changed)
  Q_PROPERTY(QString kvCacheDtype READ kvCacheDtype NOTIFY changed)
  /// The context length of every request in tokens (max_model_len); 0 = the model's.
  Q_PROPERTY(int contextLength READ contextLength NOTIFY changed)
  /// A smaller model with the same vocabulary whose greedy drafts the panes can choose
  /// (PaneSettings::drafts "draft"): a file or Hugging Face folder, loaded beside the model;
  /// "" = none. One that does not fit the model (another vocabulary) loads without it and the
  /// engine says why.
  Q_PROPERTY(QString draftModel READ draftModel NOTIFY changed)
  /// When a conversation outgrows the context: "rollingWindow" (the oldest turns go; the
  /// default), "truncateMiddle" (the system prompt and first turn stay, the turns after them go)
  /// or "stopAtLimit" (nothing goes: the message is not sent). Saved at once; no reload.
  Q_PROPERTY(QString contextOverflow READ contextOverflow WRITE setContextOverflow NOTIFY changed)
  /// The KV-cache element types offered, in the order the settings page lists them.
  Q_PROPERTY(QStringList kvCacheDtypes READ kvCacheDtypes CONSTANT)
  Q_PROPERTY(int maxKvCacheMiB READ maxKvCacheMiB CONSTANT)
  Q_PROPERTY(int maxThreads READ maxThreads CONSTANT)

 public:
  static constexpr int kMaxNumSeqs = 1024;
  static constexpr int kMaxBlockSize = 1024;

  /// Reads the saved values from `settings` (which must outlive this object); values saved out of
  /// range (a hand-edited file) fall back to the defaults.
  explicit EngineSettings(QSettings* settings, QObject* parent = nullptr);

  int kvCacheMiB() const { return kvCacheMiB_; }
  int maxNumSeqs() const { return maxNumSeqs_; }
  int blockSize() const { return blockSize_; }
  int numThreads() const { return numThreads_; }
  int contextLength() const { return contextLength_; }
  QString draftModel() const { return draftModel_; }
  QString contextOverflow() const;
  pagedchat::ContextOverflow contextOverflowPolicy() const { return contextOverflow_; }
  /// An unknown name is ignored.
  void setContextOverflow(const QString& name);
  static constexpr int kMaxContextLength = 1 << 20;
  /// The KV-cache element type's name (kv_cache_dtype_name(): "auto", "float32", ...), for QML.
  QString kvCacheDtype() const;
  /// The names of every KvCacheDType, in the enum's order.
  static QStringList kvCacheDtypes();
  /// Largest KV cache accepted: half the physical memory (or 64 GiB when unknown), in MiB.
  int maxKvCacheMiB() const;
  /// Largest thread count accepted: 4 x the hardware threads.
  int maxThreads() const;

  /// "" when the values are acceptable, else a sentence saying which value is wrong and why.
  /// `kvCacheDtype` "" means the current one.
  Q_INVOKABLE QString validationError(int kvCacheMiB, int maxNumSeqs, int blockSize, int numThreads,
                                      const QString& kvCacheDtype = QString(), int contextLength = -1,
                                      const QVariant& draftModel = QVariant()) const;
  /// Validates, takes the values (not saved yet: see commit()) and emits applied() (also when
  /// nothing changed: the model reloads). Returns validationError() (nothing changes then).
  /// `kvCacheDtype` "" keeps the current one; `contextLength` -1 keeps it (0 = the model's);
  /// `draftModel` not given (an invalid QVariant) keeps it, "" is none.
  Q_INVOKABLE QString apply(int kvCacheMiB, int maxNumSeqs, int blockSize, int numThreads,
                            const QString& kvCacheDtype = QString(), int contextLength = -1,
                            const QVariant& draftModel = QVariant());
  /// Saves the values taken by apply() (the reload with them worked).
  void commit();
  /// Goes back to the saved values (the reload with the applied ones failed) and emits
  /// reverted(`reason`): the settings page shows why, next to the values it puts back.
  void revert(const QString& reason = QString());
  /// True between apply() and commit()/revert() when the values differ from the saved ones.
  bool hasUnsavedValues() const;
  /// Sets the KV-cache size back to automatic (0) and saves it.
  void resetKvCacheToAutomatic();
  /// The engine's "KV cache too small" load error in the settings' terms ("KV cache size (MiB)
  /// too small for this model: needs at least N MiB ..."), or "" for any other error.
  static QString kvCacheTooSmallMessage(const QString& engineError);
  /// Copies the settings into the engine configuration `config`, with n-gram speculative decoding
  /// (4 draft tokens; off for a hybrid model).
  void applyTo(pagedchat::EngineConfig& config) const;

 signals:
  void changed();
  /// New values were saved: reload the model with them.
  void applied();
  /// The applied values did not work (`reason`, in words) and the saved ones are back.
  void reverted(const QString& reason);

 private:
  QSettings* settings_;
  int kvCacheMiB_ = 0;
  int maxNumSeqs_ = 64;
  int blockSize_ = 16;
  int numThreads_ = 0;
  pagedchat::KvCacheDType kvCacheDtype_ = pagedchat::KvCacheDType::kAuto;
  int contextLength_ = 0, savedContextLength_ = 0;
  QString draftModel_, savedDraftModel_;
  pagedchat::ContextOverflow contextOverflow_ = pagedchat::ContextOverflow::kRollingWindow;
  int savedKvCacheMiB_ = 0;  ///< the values in the file
  int savedMaxNumSeqs_ = 64;
  int savedBlockSize_ = 16;
  int savedNumThreads_ = 0;
  pagedchat::KvCacheDType savedKvCacheDtype_ = pagedchat::KvCacheDType::kAuto;
};
