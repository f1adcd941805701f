// Ctrl+Q asks to quit: the platform's standard Quit key (StandardKey.Quit), and Ctrl+Q where the
// platform defines none (the Windows key scheme, which also the offscreen platform uses). The
// window decides (the main window first asks when changes are not saved yet).
import QtQuick

Item {
    id: quitShortcut

    signal quitRequested()

    Shortcut {
        id: standardQuit
        // Qt 6.4's qmllint does not resolve the StandardKey enum (QKeySequence's, in QtQuick).
        sequence: StandardKey.Quit  // qmllint disable unqualified
        context: Qt.ApplicationShortcut
        onActivated: quitShortcut.quitRequested()
    }
    Shortcut {
        sequence: "Ctrl+Q"
        enabled: standardQuit.nativeText === ""
        context: Qt.ApplicationShortcut
        onActivated: quitShortcut.quitRequested()
    }
}
