// Loading the PagedChat QML module's windows (shared by the app and the GUI test).
#pragma once

class AppController;
class QQmlApplicationEngine;
class QQuickWindow;
class QString;

/// Selects the Qt Quick Controls style (Material) and loads PagedChat/Main.qml into `engine` with
/// `controller` as the window's `app` property. Returns the window, or nullptr when loading failed
/// (the QML errors went to the message handler).
QQuickWindow* loadMainWindow(QQmlApplicationEngine& engine, AppController* controller);

/// The exit code of the error window's event loop when the user chose "Try again".
constexpr int kErrorWindowRetryExitCode = 3;

/// Loads PagedChat/ErrorWindow.qml: a small window that shows why the app cannot start
/// (`headline`, then the selectable `details`) with a Quit button, and with `retryable` a Try
/// again button that ends the event loop with kErrorWindowRetryExitCode. Returns the window, or
/// nullptr.
QQuickWindow* loadErrorWindow(QQmlApplicationEngine& engine, const QString& headline, const QString& details,
                              bool retryable = false);
