#include "app/engine/remote/api_key_store.h"

#include <qt6keychain/keychain.h>

namespace {
const QString kService = QStringLiteral("PagedChat");
}  // namespace

void KeychainApiKeyStore::readKey(const QString& account, ReadCallback done) {
  auto* job = new QKeychain::ReadPasswordJob(kService, this);  // deletes itself once finished
  job->setKey(account);
  connect(job, &QKeychain::Job::finished, this, [done = std::move(done)](QKeychain::Job* j) {
    if (j->error() == QKeychain::NoError)
      done(static_cast<QKeychain::ReadPasswordJob*>(j)->textData(), QString());
    else if (j->error() == QKeychain::EntryNotFound)
      done(QString(), QString());
    else
      done(QString(), tr("The system keychain is unavailable (%1).").arg(j->errorString()));
  });
  job->start();
}

void KeychainApiKeyStore::writeKey(const QString& account, const QString& key, WriteCallback done) {
  QKeychain::Job* job = nullptr;
  if (key.isEmpty()) {
    auto* del = new QKeychain::DeletePasswordJob(kService, this);
    del->setKey(account);
    job = del;
  } else {
    auto* write = new QKeychain::WritePasswordJob(kService, this);
    write->setKey(account);
    write->setTextData(key);
    job = write;
  }
  const bool deleting = key.isEmpty();
  connect(job, &QKeychain::Job::finished, this, [done = std::move(done), deleting](QKeychain::Job* j) {
    if (j->error() == QKeychain::NoError || (deleting && j->error() == QKeychain::EntryNotFound))
      done(QString());
    else
      done(tr("The system keychain is unavailable (%1).").arg(j->errorString()));
  });
  job->start();
}
