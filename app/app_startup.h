// Starting the app's controller, with the user's say when the chat data cannot be opened.
#pragma once

#include <QString>

#include <functional>
#include <memory>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"

class Translator;

/// Shows why PagedChat cannot start: `headline` (one sentence), `details` (the reason in plain
/// words, the technical detail, what to try); `retryable` when the cause may pass (another
/// program's lock, a disk not mounted yet, a permission fixed meanwhile). Returns true to try
/// again (the error window's Try again), false to give up.
using StartupErrorHandler = std::function<bool(const QString& headline, const QString& details, bool retryable)>;

/// Constructs the AppController for `options` (with `translator`, which may be nullptr); each
/// time that throws, prints the reason to stderr and asks `showError`, trying again while it
/// returns true. Returns the controller, or nullptr when the user gave up. A chat database written
/// by a newer PagedChat is not retryable (nullptr after showError, whatever it returns); every
/// other chat-data problem is.
std::unique_ptr<AppController> startAppController(const AppOptions& options, Translator* translator,
                                                  const StartupErrorHandler& showError);
