#include "app/engine/engine_settings.h"

#include <QFileInfo>
#include <QRegularExpression>
#include <QSettings>
#include <QThread>

#include <algorithm>

#include "engine/core/host_memory.h"

namespace {
const QString kKvKey = QStringLiteral("engine/kvCacheMiB");
const QString kSeqsKey = QStringLiteral("engine/maxNumSeqs");
const QString kBlockKey = QStringLiteral("engine/blockSize");
const QString kThreadsKey = QStringLiteral("engine/numThreads");
const QString kKvDtypeKey = QStringLiteral("engine/kvCacheDtype");
const QString kContextLengthKey = QStringLiteral("engine/contextLength");
const QString kDraftModelKey = QStringLiteral("engine/draftModel");
const QString kContextOverflowKey = QStringLiteral("engine/contextOverflow");

struct OverflowName {
  pagedchat::ContextOverflow policy;
  const char* name;
};
constexpr OverflowName kOverflowNames[] = {{pagedchat::ContextOverflow::kRollingWindow, "rollingWindow"},
                                           {pagedchat::ContextOverflow::kTruncateMiddle, "truncateMiddle"},
                                           {pagedchat::ContextOverflow::kStopAtLimit, "stopAtLimit"}};

qint64 physicalMemoryMiB() { return static_cast<qint64>(pagedchat::physical_memory_bytes() >> 20); }
}  // namespace

EngineSettings::EngineSettings(QSettings* settings, QObject* parent) : QObject(parent), settings_(settings) {
  const int kv = settings_->value(kKvKey, 0).toInt();
  const int seqs = settings_->value(kSeqsKey, 64).toInt();
  const int block = settings_->value(kBlockKey, 16).toInt();
  const int threads = settings_->value(kThreadsKey, 0).toInt();
  const QString kvDtype = settings_->value(kKvDtypeKey, QStringLiteral("auto")).toString();
  if (validationError(kv, seqs, block, threads, kvDtype).isEmpty()) {
    kvCacheMiB_ = kv;
    maxNumSeqs_ = seqs;
    blockSize_ = block;
    numThreads_ = threads;
    kvCacheDtype_ = pagedchat::parse_kv_cache_dtype(kvDtype.toStdString());
  }
  savedKvCacheMiB_ = kvCacheMiB_;
  savedMaxNumSeqs_ = maxNumSeqs_;
  savedBlockSize_ = blockSize_;
  savedNumThreads_ = numThreads_;
  savedKvCacheDtype_ = kvCacheDtype_;
  const int context = settings_->value(kContextLengthKey, 0).toInt();
  if (validationError(kvCacheMiB_, maxNumSeqs_, blockSize_, numThreads_, QString(), context).isEmpty())
    contextLength_ = savedContextLength_ = context;
  // (A draft model saved and since removed is not checked here: the engine loads without it and
  // says why.)
  draftModel_ = savedDraftModel_ = settings_->value(kDraftModelKey).toString();
  const QString overflow = settings_->value(kContextOverflowKey).toString();
  for (const OverflowName& o : kOverflowNames)
    if (overflow == QLatin1String(o.name)) contextOverflow_ = o.policy;
}

QString EngineSettings::contextOverflow() const {
  for (const OverflowName& o : kOverflowNames)
    if (o.policy == contextOverflow_) return QString::fromLatin1(o.name);
  return QString();
}

void EngineSettings::setContextOverflow(const QString& name) {
  for (const OverflowName& o : kOverflowNames) {
    if (name != QLatin1String(o.name) || o.policy == contextOverflow_) continue;
    contextOverflow_ = o.policy;
    settings_->setValue(kContextOverflowKey, name);
    emit changed();
  }
}

QString EngineSettings::kvCacheDtype() const {
  return QString::fromLatin1(pagedchat::kv_cache_dtype_name(kvCacheDtype_));
}

QStringList EngineSettings::kvCacheDtypes() {
  using pagedchat::KvCacheDType;
  QStringList names;
  for (KvCacheDType t : {KvCacheDType::kAuto, KvCacheDType::kFloat32, KvCacheDType::kBFloat16, KvCacheDType::kFloat16,
                         KvCacheDType::kQ8_0})
    names << QString::fromLatin1(pagedchat::kv_cache_dtype_name(t));
  return names;
}

int EngineSettings::maxKvCacheMiB() const {
  const qint64 mem = physicalMemoryMiB();
  return static_cast<int>(std::min<qint64>(mem > 0 ? mem / 2 : 64 * 1024, 1 << 30));
}

int EngineSettings::maxThreads() const { return std::min(1024, 4 * std::max(1, QThread::idealThreadCount())); }

QString EngineSettings::validationError(int kvCacheMiB, int maxNumSeqs, int blockSize, int numThreads,
                                        const QString& kvCacheDtype, int contextLength,
                                        const QVariant& draftModel) const {
  if (draftModel.isValid() && !draftModel.toString().isEmpty() && !QFileInfo::exists(draftModel.toString()))
    return tr("The draft model \"%1\" does not exist: give a model file or folder, or leave it empty.")
        .arg(draftModel.toString());
  if (contextLength != -1 &&
      (contextLength < 0 || (contextLength > 0 && contextLength < 16) || contextLength > kMaxContextLength))
    return tr("The context length must be 0 (the model's) or between 16 and %1 tokens; %2 was given.")
        .arg(kMaxContextLength)
        .arg(contextLength);
  if (kvCacheMiB < 0 || kvCacheMiB > maxKvCacheMiB())
    return tr("The KV cache size must be between 0 (automatic) and %1 MiB (half the memory); %2 MiB was given.")
        .arg(maxKvCacheMiB())
        .arg(kvCacheMiB);
  if (maxNumSeqs < 1 || maxNumSeqs > kMaxNumSeqs)
    return tr("The number of concurrent sequences must be between 1 and %1; %2 was given.")
        .arg(kMaxNumSeqs)
        .arg(maxNumSeqs);
  if (blockSize < 1 || blockSize > kMaxBlockSize)
    return tr("The block size must be between 1 and %1 tokens; %2 was given.").arg(kMaxBlockSize).arg(blockSize);
  if (numThreads < 0 || numThreads > maxThreads())
    return tr("The number of CPU threads must be between 0 (all cores) and %1; %2 was given.")
        .arg(maxThreads())
        .arg(numThreads);
  if (!kvCacheDtype.isEmpty() && !kvCacheDtypes().contains(kvCacheDtype))
    return tr("The KV cache type must be one of %1; \"%2\" was given.")
        .arg(kvCacheDtypes().join(QStringLiteral(", ")), kvCacheDtype);
  return {};
}

QString EngineSettings::apply(int kvCacheMiB, int maxNumSeqs, int blockSize, int numThreads,
                              const QString& kvCacheDtype, int contextLength, const QVariant& draftModel) {
  const QString error = validationError(kvCacheMiB, maxNumSeqs, blockSize, numThreads, kvCacheDtype, contextLength,
                                        draftModel);
  if (!error.isEmpty()) return error;
  if (draftModel.isValid()) draftModel_ = draftModel.toString().trimmed();
  if (contextLength >= 0) contextLength_ = contextLength;
  if (!kvCacheDtype.isEmpty()) kvCacheDtype_ = pagedchat::parse_kv_cache_dtype(kvCacheDtype.toStdString());
  kvCacheMiB_ = kvCacheMiB;
  maxNumSeqs_ = maxNumSeqs;
  blockSize_ = blockSize;
  numThreads_ = numThreads;
  emit changed();
  emit applied();
  return {};
}

void EngineSettings::commit() {
  savedKvCacheMiB_ = kvCacheMiB_;
  savedMaxNumSeqs_ = maxNumSeqs_;
  savedBlockSize_ = blockSize_;
  savedNumThreads_ = numThreads_;
  savedKvCacheDtype_ = kvCacheDtype_;
  savedContextLength_ = contextLength_;
  savedDraftModel_ = draftModel_;
  settings_->setValue(kContextLengthKey, contextLength_);
  settings_->setValue(kDraftModelKey, draftModel_);
  settings_->setValue(kKvKey, kvCacheMiB_);
  settings_->setValue(kSeqsKey, maxNumSeqs_);
  settings_->setValue(kBlockKey, blockSize_);
  settings_->setValue(kThreadsKey, numThreads_);
  settings_->setValue(kKvDtypeKey, kvCacheDtype());
  settings_->sync();
}

void EngineSettings::revert(const QString& reason) {
  if (!hasUnsavedValues()) return;
  kvCacheMiB_ = savedKvCacheMiB_;
  maxNumSeqs_ = savedMaxNumSeqs_;
  blockSize_ = savedBlockSize_;
  numThreads_ = savedNumThreads_;
  kvCacheDtype_ = savedKvCacheDtype_;
  contextLength_ = savedContextLength_;
  draftModel_ = savedDraftModel_;
  emit changed();
  emit reverted(reason);
}

bool EngineSettings::hasUnsavedValues() const {
  return kvCacheMiB_ != savedKvCacheMiB_ || maxNumSeqs_ != savedMaxNumSeqs_ || blockSize_ != savedBlockSize_ ||
         numThreads_ != savedNumThreads_ || kvCacheDtype_ != savedKvCacheDtype_ ||
         contextLength_ != savedContextLength_ || draftModel_ != savedDraftModel_;
}

void EngineSettings::resetKvCacheToAutomatic() {
  kvCacheMiB_ = 0;
  commit();
  emit changed();
}

QString EngineSettings::kvCacheTooSmallMessage(const QString& engineError) {
  if (!engineError.contains(QLatin1String("KV cache too small"))) return {};
  // The engine says "... (needs N blocks, B bytes); ...": B bytes hold one full-length sequence.
  static const QRegularExpression needs(QStringLiteral("needs (\\d+) blocks, (\\d+) bytes"));
  const QRegularExpressionMatch m = needs.match(engineError);
  if (!m.hasMatch())
    return tr("KV cache size (MiB) too small for this model: it cannot hold one full-length sequence.");
  const qint64 bytes = m.captured(2).toLongLong();
  const qint64 mib = (bytes + (1 << 20) - 1) >> 20;
  return tr("KV cache size (MiB) too small for this model: needs at least %1 MiB for one full-length sequence.")
      .arg(std::max<qint64>(1, mib));
}

void EngineSettings::applyTo(pagedchat::EngineConfig& config) const {
  config.kv_cache_bytes = static_cast<std::size_t>(kvCacheMiB_) * 1024 * 1024;
  config.num_blocks = 0;
  config.max_num_seqs = maxNumSeqs_;
  config.block_size = blockSize_;
  config.num_threads = numThreads_;
  config.kv_cache_dtype = kvCacheDtype_;
  config.max_model_len = contextLength_;  // 0: the model's
  // Speculative decoding by n-gram lookup for every pane that keeps it on (PaneSettings::
  // speculative): a reply that repeats earlier text (code, quotes, names, lists) takes fewer
  // steps, and one that does not costs little (the proposals back off).
  config.speculative_config.method = pagedchat::SpeculativeConfig::Method::kNgram;
  config.speculative_config.num_speculative_tokens = 4;
  config.speculative_config.prompt_lookup_max = 5;
  config.speculative_config.prompt_lookup_min = 2;
  // A model with MTP layers (Qwen3.5/3.6 files that keep them) also loads its MTP block: the
  // panes' "auto" choice drafts with it (PaneSettings::drafts).
  config.speculative_config.mtp_if_available = true;
  // The draft model of Settings → Engine, for the panes that choose it.
  config.speculative_config.model = draftModel_.toStdString();
}
