// The model picker's recent-model list (order, de-duplication, limit, persistence, missing files,
// remembered chat templates) and the engine settings (validation messages, saving, reading back).
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/controllers/recent_models_model.h"
#include "app/engine/engine_settings.h"

class TestModelSettings : public QObject {
  Q_OBJECT

 private slots:
  void recentModelsOrderAndPersistence();
  void recentModelsMissingFiles();
  void recentModelsChatTemplate();
  void engineSettingsValidation();
  void engineSettingsSaved();
  void kvCacheTooSmallMessage();
};

namespace {
QString touch(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return {};
  f.write("x");
  return path;
}
}  // namespace

void TestModelSettings::recentModelsOrderAndPersistence() {
  QTemporaryDir dir;
  const QString ini = dir.filePath(QStringLiteral("pagedchat.ini"));
  QStringList files;
  for (int i = 0; i < RecentModelsModel::kMaxRecent + 2; ++i)
    files.append(touch(dir.filePath(QStringLiteral("m%1.gguf").arg(i))));
  {
    QSettings settings(ini, QSettings::IniFormat);
    RecentModelsModel recent(&settings);
    QCOMPARE(recent.count(), 0);
    QCOMPARE(recent.lastModel(), QString());
    QSignalSpy counted(&recent, &RecentModelsModel::countChanged);
    recent.add(files[0]);
    recent.add(files[1]);
    recent.add(files[0]);  // moves to the top, not listed twice
    QCOMPARE(recent.paths(), (QStringList{files[0], files[1]}));
    QCOMPARE(recent.lastModel(), files[0]);
    QVERIFY(counted.count() >= 2);
    QCOMPARE(recent.data(recent.index(0), RecentModelsModel::NameRole).toString(), QStringLiteral("m0.gguf"));
    QVERIFY(recent.data(recent.index(0), RecentModelsModel::ExistsRole).toBool());
    QVERIFY(!recent.data(recent.index(0), RecentModelsModel::IsFolderRole).toBool());
    for (const QString& f : files) recent.add(f);  // more than kMaxRecent: the oldest drop out
    QCOMPARE(recent.count(), RecentModelsModel::kMaxRecent);
    QCOMPARE(recent.lastModel(), files.last());
    QVERIFY(!recent.paths().contains(files[0]));
    QVERIFY(!recent.paths().contains(files[1]));
  }
  {
    QSettings settings(ini, QSettings::IniFormat);
    RecentModelsModel reread(&settings);  // the next start sees the same list
    QCOMPARE(reread.count(), RecentModelsModel::kMaxRecent);
    QCOMPARE(reread.lastModel(), files.last());
    reread.remove(QDir::toNativeSeparators(files.last()));
    QCOMPARE(reread.count(), RecentModelsModel::kMaxRecent - 1);
    QCOMPARE(reread.lastModel(), files.at(files.size() - 2));
  }
  QSettings settings(ini, QSettings::IniFormat);
  RecentModelsModel again(&settings);
  QCOMPARE(again.lastModel(), files.at(files.size() - 2));
}

void TestModelSettings::recentModelsMissingFiles() {
  QTemporaryDir dir;
  QSettings settings(dir.filePath(QStringLiteral("pagedchat.ini")), QSettings::IniFormat);
  RecentModelsModel recent(&settings);
  const QString kept = touch(dir.filePath(QStringLiteral("kept.bin")));
  const QString gone = touch(dir.filePath(QStringLiteral("gone.bin")));
  QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("folder"))));
  recent.add(dir.filePath(QStringLiteral("folder")));
  recent.add(gone);
  recent.add(kept);
  QVERIFY(QFile::remove(gone));
  QSignalSpy changed(&recent, &QAbstractItemModel::dataChanged);
  recent.refresh();
  QCOMPARE(changed.count(), 1);
  QCOMPARE(recent.count(), 3);  // a missing model is still listed, shown as missing
  QVERIFY(recent.data(recent.index(0), RecentModelsModel::ExistsRole).toBool());
  QVERIFY(!recent.data(recent.index(1), RecentModelsModel::ExistsRole).toBool());
  QVERIFY(recent.data(recent.index(2), RecentModelsModel::IsFolderRole).toBool());
  QCOMPARE(recent.removeMissing(), 1);
  QCOMPARE(recent.paths(), (QStringList{kept, dir.filePath(QStringLiteral("folder"))}));
  QCOMPARE(recent.removeMissing(), 0);
}

void TestModelSettings::recentModelsChatTemplate() {
  QTemporaryDir dir;
  QSettings settings(dir.filePath(QStringLiteral("pagedchat.ini")), QSettings::IniFormat);
  RecentModelsModel recent(&settings);
  const QString path = QStringLiteral("/models/a b/c.gguf");
  QCOMPARE(recent.chatTemplateFor(path), QStringLiteral("auto"));
  recent.setChatTemplateFor(path, QStringLiteral("chatml"));
  QCOMPARE(recent.chatTemplateFor(path), QStringLiteral("chatml"));
  QCOMPARE(recent.chatTemplateFor(QStringLiteral("/models/other.gguf")), QStringLiteral("auto"));
  recent.setChatTemplateFor(path, QStringLiteral("auto"));
  QCOMPARE(recent.chatTemplateFor(path), QStringLiteral("auto"));
}

void TestModelSettings::engineSettingsValidation() {
  QTemporaryDir dir;
  QSettings settings(dir.filePath(QStringLiteral("pagedchat.ini")), QSettings::IniFormat);
  EngineSettings engine(&settings);
  // Defaults: automatic cache, 64 sequences, 16-token blocks, all cores.
  QCOMPARE(engine.kvCacheMiB(), 0);
  QCOMPARE(engine.maxNumSeqs(), 64);
  QCOMPARE(engine.blockSize(), 16);
  QCOMPARE(engine.numThreads(), 0);
  QVERIFY(engine.validationError(0, 64, 16, 0).isEmpty());
  QVERIFY(engine.validationError(4, 1, 1, 1).isEmpty());

  const QString kv = engine.validationError(-1, 64, 16, 0);
  QVERIFY2(kv.contains(QLatin1String("KV cache")) && kv.contains(QLatin1String("-1")), qPrintable(kv));
  QVERIFY(!engine.validationError(engine.maxKvCacheMiB() + 1, 64, 16, 0).isEmpty());
  const QString seqs = engine.validationError(0, 0, 16, 0);
  QVERIFY2(seqs.contains(QLatin1String("concurrent sequences")), qPrintable(seqs));
  QVERIFY(!engine.validationError(0, EngineSettings::kMaxNumSeqs + 1, 16, 0).isEmpty());
  const QString block = engine.validationError(0, 64, 0, 0);
  QVERIFY2(block.contains(QLatin1String("block size")), qPrintable(block));
  QVERIFY(!engine.validationError(0, 64, EngineSettings::kMaxBlockSize + 1, 0).isEmpty());
  const QString threads = engine.validationError(0, 64, 16, -2);
  QVERIFY2(threads.contains(QLatin1String("CPU threads")), qPrintable(threads));
  QVERIFY(!engine.validationError(0, 64, 16, engine.maxThreads() + 1).isEmpty());
  QCOMPARE(engine.kvCacheDtype(), QStringLiteral("auto"));
  for (const QString& t : engine.kvCacheDtypes()) QVERIFY(engine.validationError(0, 64, 16, 0, t).isEmpty());
  const QString kvType = engine.validationError(0, 64, 16, 0, QStringLiteral("q4_0"));
  QVERIFY2(kvType.contains(QLatin1String("KV cache type")) && kvType.contains(QLatin1String("q4_0")),
           qPrintable(kvType));

  // apply() refuses bad values and changes nothing.
  QSignalSpy applied(&engine, &EngineSettings::applied);
  QCOMPARE(engine.apply(0, 64, 0, 0), block);
  QCOMPARE(applied.count(), 0);
  QCOMPARE(engine.blockSize(), 16);
  QVERIFY(!settings.contains(QStringLiteral("engine/blockSize")));
}

void TestModelSettings::engineSettingsSaved() {
  QTemporaryDir dir;
  const QString ini = dir.filePath(QStringLiteral("pagedchat.ini"));
  {
    QSettings settings(ini, QSettings::IniFormat);
    EngineSettings engine(&settings);
    QSignalSpy applied(&engine, &EngineSettings::applied);
    QCOMPARE(engine.apply(3, 8, 32, 2, QStringLiteral("q8_0")), QString());
    QCOMPARE(applied.count(), 1);
    QVERIFY(engine.hasUnsavedValues());
    QVERIFY(!settings.contains(QStringLiteral("engine/kvCacheMiB")));  // saved once the reload worked
    engine.commit();
    QVERIFY(!engine.hasUnsavedValues());
    pagedchat::EngineConfig config;
    engine.applyTo(config);
    QCOMPARE(config.kv_cache_bytes, std::size_t(3) << 20);
    QCOMPARE(config.max_num_seqs, 8);
    QCOMPARE(config.block_size, 32);
    QCOMPARE(config.num_threads, 2);
    QCOMPARE(config.kv_cache_dtype, pagedchat::KvCacheDType::kQ8_0);
    // N-gram speculative decoding for every model, hybrid ones included (panes turn it off per
    // request), fitted to the batch.
    QVERIFY(config.speculative_config.method == pagedchat::SpeculativeConfig::Method::kNgram);
    QVERIFY(config.speculative_config.fit_to_batch);
    QVERIFY(config.speculative_config.mtp_if_available);  // the panes' "auto" takes MTP where the model has it
    config.speculative_config.validate();
  }
  {
    QSettings settings(ini, QSettings::IniFormat);
    EngineSettings engine(&settings);  // read back on the next start
    QCOMPARE(engine.kvCacheMiB(), 3);
    QCOMPARE(engine.maxNumSeqs(), 8);
    QCOMPARE(engine.blockSize(), 32);
    QCOMPARE(engine.numThreads(), 2);
    QCOMPARE(engine.kvCacheDtype(), QStringLiteral("q8_0"));
    QCOMPARE(engine.apply(3, 8, 32, 2), QString());  // "" keeps the type
    QCOMPARE(engine.kvCacheDtype(), QStringLiteral("q8_0"));
    settings.setValue(QStringLiteral("engine/blockSize"), -5);  // a hand-edited file
  }
  QSettings settings(ini, QSettings::IniFormat);
  EngineSettings engine(&settings);
  QCOMPARE(engine.blockSize(), 16);  // out of range: the defaults
  QCOMPARE(engine.maxNumSeqs(), 64);
  // A reload that failed: back to the saved values, nothing saved.
  QCOMPARE(engine.apply(1, 8, 1024, 2), QString());
  QCOMPARE(engine.kvCacheMiB(), 1);
  QSignalSpy reverted(&engine, &EngineSettings::reverted);
  engine.revert(QStringLiteral("too small"));
  QCOMPARE(reverted.count(), 1);
  QCOMPARE(reverted.at(0).at(0).toString(), QStringLiteral("too small"));
  QCOMPARE(engine.kvCacheMiB(), 0);  // the values read at start (the defaults)
  QCOMPARE(engine.blockSize(), 16);
  QCOMPARE(settings.value(QStringLiteral("engine/blockSize")).toInt(), -5);
  engine.revert(QStringLiteral("again"));  // nothing applied: nothing to revert, no signal
  QCOMPARE(reverted.count(), 1);

  // The draft model: a path that exists (kept when not given), saved, given to the engine; a
  // missing one is refused by name; "" is none; a failed reload puts the saved one back.
  const QString missing = dir.filePath(QStringLiteral("nowhere.gguf"));
  QVERIFY(engine.apply(0, 8, 16, 2, QString(), -1, missing).contains(missing));
  QCOMPARE(engine.draftModel(), QString());
  QCOMPARE(engine.apply(0, 8, 16, 2, QString(), -1, ini), QString());
  engine.commit();
  QCOMPARE(engine.apply(0, 8, 16, 2), QString());  // not given: kept
  QCOMPARE(engine.draftModel(), ini);
  pagedchat::EngineConfig config;
  engine.applyTo(config);
  QCOMPARE(QString::fromStdString(config.speculative_config.model), ini);
  config.speculative_config.validate();  // n-gram with a draft model beside it
  QCOMPARE(QSettings(ini, QSettings::IniFormat).value(QStringLiteral("engine/draftModel")).toString(), ini);
  QCOMPARE(engine.apply(0, 8, 16, 2, QString(), -1, QString()), QString());
  QCOMPARE(engine.draftModel(), QString());
  engine.revert(QStringLiteral("failed"));
  QCOMPARE(engine.draftModel(), ini);
}

void TestModelSettings::kvCacheTooSmallMessage() {
  const QString engineError = QStringLiteral(
      "KV cache too small: 0 blocks of 1024 tokens cannot hold one sequence of max_model_len 512 (needs 1 blocks, "
      "3145728 bytes); raise kv_cache_bytes or lower max_model_len");
  QCOMPARE(EngineSettings::kvCacheTooSmallMessage(engineError),
           QStringLiteral("KV cache size (MiB) too small for this model: needs at least 3 MiB for one full-length "
                          "sequence."));
  QVERIFY(EngineSettings::kvCacheTooSmallMessage(QStringLiteral("cannot open x.bin")).isEmpty());
}

QTEST_GUILESS_MAIN(TestModelSettings)
#include "test_model_settings.moc"
