#include "app/app_startup.h"

#include <QCoreApplication>

#include <cstdio>

#include "app/store/store_health.h"

std::unique_ptr<AppController> startAppController(const AppOptions& options, Translator* translator,
                                                  const StartupErrorHandler& showError) {
  for (;;) {
    try {
      return std::make_unique<AppController>(options, nullptr, translator);
    } catch (const std::exception& e) {
      // A database problem in plain words first, then its technical detail (never SQL).
      const auto* storeError = dynamic_cast<const StoreError*>(&e);
      const QString details = storeError ? StoreHealth::userMessage(*storeError) + QStringLiteral("\n\n") +
                                               StoreHealth::technicalDetail(*storeError)
                                         : QString::fromUtf8(e.what());
      std::fprintf(stderr, "pagedchat: %s\n", qPrintable(details));
      const bool retryable = storeError && storeError->kind() != StoreError::Kind::kTooNew;
      const QString headline = QCoreApplication::translate("main", "PagedChat could not open its chat data.");
      // A newer version's file is not this version's to change: the way out is that version.
      const QString hint =
          retryable || !storeError
              ? QCoreApplication::translate(
                    "main", "Check that folder, or start PagedChat with --data-dir DIR to use another one.")
              : QCoreApplication::translate("main",
                                            "Open it with the newer PagedChat that wrote it; this version leaves "
                                            "the file as it is. To start this version with another, empty "
                                            "history, start it with --data-dir DIR.");
      // A cause that cannot pass is not tried again, whatever the answer.
      if (!showError(headline, details + QStringLiteral("\n\n") + hint, retryable) || !retryable) return nullptr;
    }
  }
}
