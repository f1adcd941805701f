// The window shown instead of the main window when PagedChat cannot start (e.g. the data folder
// cannot be created or the chat database is locked): what went wrong, the details, Try again (when
// the cause may pass: a lock, a disk) and Quit.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

ApplicationWindow {
    id: window

    /// One sentence saying what failed.
    required property string headline
    /// The technical message (selectable, to copy into a bug report) and what to try.
    required property string details
    /// The exit code "Try again" ends the window's event loop with (main.cpp then tries to start
    /// again); -1: no Try again button.
    property int retryExitCode: -1

    width: 640
    height: 360
    minimumWidth: 400
    minimumHeight: 240
    visible: true
    title: qsTr("PagedChat: cannot start")
    color: Theme.windowColor

    Material.theme: Material.Light
    Material.primary: Theme.primary
    Material.accent: Theme.accent

    QuitShortcut {
        onQuitRequested: Qt.quit()
    }
    Shortcut {
        // Qt 6.4's qmllint does not resolve the StandardKey enum (QKeySequence's, in QtQuick).
        sequences: [StandardKey.Close, "Escape"]  // qmllint disable unqualified
        onActivated: Qt.quit()
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 24
        spacing: 16

        Label {
            objectName: "errorHeadline"
            Layout.fillWidth: true
            text: window.headline
            textFormat: Text.PlainText
            wrapMode: Text.Wrap
            font.pixelSize: 20
            font.weight: Font.Medium
            color: Theme.errorColor
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }

        ScrollView {
            Layout.fillWidth: true
            Layout.fillHeight: true
            padding: 12
            Accessible.name: qsTr("Error details")
            background: Rectangle {
                radius: Theme.radius
                color: Theme.surfaceColor
                border.color: Theme.borderColor
            }

            TextArea {
                objectName: "errorDetails"
                text: window.details
                readOnly: true
                selectByMouse: true
                wrapMode: TextEdit.Wrap
                textFormat: TextEdit.PlainText
                padding: 0
                color: Theme.assistantTextColor
                background: null
                Accessible.name: qsTr("Error details")
                Accessible.description: text
            }
        }

        RowLayout {
            Layout.alignment: Qt.AlignRight
            spacing: 8
            Button {
                objectName: "tryAgainButton"
                visible: window.retryExitCode >= 0
                text: qsTr("Try again")
                flat: true
                onClicked: Qt.exit(window.retryExitCode)
                Accessible.name: qsTr("Try to start PagedChat again")
            }
            Button {
                objectName: "quitButton"
                text: qsTr("Quit")
                highlighted: true
                focus: true
                onClicked: Qt.quit()
                Accessible.name: qsTr("Quit PagedChat")
            }
        }
    }
}
