// Ctrl+Q quits: the platform's standard Quit key (StandardKey.Quit), and Ctrl+Q where the
// platform defines none (the Windows key scheme, which also the offscreen platform uses).
import QtQuick

Item {
    Shortcut {
        id: standardQuit
        sequence: StandardKey.Quit
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
