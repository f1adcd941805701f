// A red strip that shows the newest error of two sources (the engine's load error and the app's
// last error) with a close button; hidden when there is none. An error that was replaced by a
// newer one does not come back when the newer one clears.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Rectangle {
    id: banner

    /// The engine's load error, already worded for the user ("" = none).
    property string engineError: ""
    /// The app's last error (AppController.errorText; "" = none).
    property string appError: ""
    /// What the banner shows: the newest non-empty error, "" after it cleared or was dismissed.
    property string message: ""
    /// Which source `message` came from: "engine", "app" or "".
    property string source: ""

    /// The close button was pressed (Main.qml clears the app's error).
    signal closeRequested()

    function show(text, from) {
        if (text !== "") {
            message = text
            source = from
        } else if (source === from) {
            message = ""
            source = ""
        }
    }
    function dismiss() {
        message = ""
        source = ""
        closeRequested()
    }

    onEngineErrorChanged: show(engineError, "engine")
    onAppErrorChanged: show(appError, "app")
    Component.onCompleted: {
        show(appError, "app")
        show(engineError, "engine")
    }

    visible: message !== ""
    implicitHeight: visible ? Math.max(label.implicitHeight, closeButton.implicitHeight) + 16 : 0
    color: Theme.errorColor

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 4
        spacing: 8

        Label {
            id: label
            objectName: "errorBannerText"
            Layout.fillWidth: true
            Layout.alignment: Qt.AlignVCenter
            wrapMode: Text.Wrap
            color: "white"
            text: banner.message
            font.pixelSize: Theme.uiFontSize
            textFormat: Text.PlainText  // messages carry file names and titles, never markup
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }
        ToolButton {
            FocusFrame {}
            id: closeButton
            objectName: "errorBannerClose"
            Layout.alignment: Qt.AlignVCenter
            text: "\u2715"
            font.pixelSize: Theme.uiFontSize
            palette.buttonText: "white"
            onClicked: banner.dismiss()
            Accessible.name: qsTr("Dismiss error")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Dismiss error")
        }
    }
}
