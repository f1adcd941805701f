// Ctrl+Q quits: the platform's standard Quit key (StandardKey.Quit), and Ctrl+Q where the
// platform defines none (the Windows key scheme, which also the offscreen platform uses).
import QtQuick

Item {
    Shortcut {
        id: standardQuit
        // Qt 6.4's qmllint does not resolve the StandardKey enum (QKeySequence's, in QtQuick).
        sequence: StandardKey.Quit  // qmllint disable unqualified
        context: Qt.ApplicationShortcut
        onActivated: Qt.quit()
    }
    Shortcut {
        sequence: "Ctrl+Q"
        enabled: standardQuit.nativeText === ""
        context: Qt.ApplicationShortcut
        onActivated: Qt.quit()
    }
}
