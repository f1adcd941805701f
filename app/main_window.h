// Loading the PagedChat QML module's main window (shared by the app and the GUI test).
#pragma once

class AppController;
class QQmlApplicationEngine;
class QQuickWindow;

/// Selects the Qt Quick Controls style (Material) and loads PagedChat/Main.qml into `engine` with
/// `controller` as the window's `app` property. Returns the window, or nullptr when loading failed
/// (the QML errors went to the message handler).
QQuickWindow* loadMainWindow(QQmlApplicationEngine& engine, AppController* controller);
