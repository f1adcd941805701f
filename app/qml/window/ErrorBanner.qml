// A red strip that shows the newest error of two sources (the engine's load error and the app's
// last error) with a close button; hidden when there is none. An error that was replaced by a
// newer one does not come back when the newer one clears. The app's error may carry a technical
// detail (shown under "Details") and be retryable (a "Retry" button: chat-history writes).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Rectangle {
    id: banner

    /// The engine's load error, already worded for the user ("" = none).
    property string engineError: ""
    /// The app's last error (AppController.errorText; "" = none).
    property string appError: ""
    /// Its technical detail (AppController.errorDetail; "" = none): one click away.
    property string appDetail: ""
    /// The app's error can be retried (AppController.errorRetryable).
    property bool appRetryable: false
    /// The detail is unfolded.
    property bool detailShown: false
    readonly property string detail: source === "app" ? appDetail : ""
    /// What the banner shows: the newest non-empty error, "" after it cleared or was dismissed.
    property string message: ""
    /// Which source `message` came from: "engine", "app" or "".
    property string source: ""

    /// The close button was pressed (Main.qml clears the app's error).
    signal closeRequested()
    /// The Retry button was pressed (Main.qml retries the chat-history writes).
    signal retryRequested()

    function show(text, from) {
        detailShown = false
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
    implicitHeight: visible ? column.implicitHeight + 16 : 0
    color: Theme.errorColor

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.topMargin: 8
        anchors.bottomMargin: 8
        spacing: 4

        // The text and its buttons, by anchors and a Row: a RowLayout (Qt 6.4) left buttons that
        // appeared as the banner did at x = 0, over the text, until something else moved.
        Item {
            Layout.fillWidth: true
            implicitHeight: Math.max(label.implicitHeight, buttonRow.implicitHeight)

            Label {
                id: label
                objectName: "errorBannerText"
                anchors.left: parent.left
                anchors.leftMargin: 16
                anchors.right: buttonRow.left
                anchors.rightMargin: 8
                anchors.verticalCenter: parent.verticalCenter
                wrapMode: Text.Wrap
                color: "white"
                text: banner.message
                font.pixelSize: Theme.uiFontSize
                textFormat: Text.PlainText  // messages carry file names and titles, never markup
                Accessible.role: Accessible.AlertMessage
                Accessible.name: text
            }
            Row {
                id: buttonRow
                anchors.right: parent.right
                anchors.rightMargin: 4
                anchors.verticalCenter: parent.verticalCenter
                spacing: 8

                ToolButton {
                    FocusFrame {}
                    id: detailsButton
                    objectName: "errorBannerDetails"
                    visible: banner.detail !== ""
                    text: banner.detailShown ? qsTr("Hide details") : qsTr("Details")
                    font.pixelSize: Theme.uiFontSize
                    palette.buttonText: "white"
                    // White text on the red banner: a light veil when hovered or pressed (the style's own
                    // hover colour is white, which hid the text).
                    background: Rectangle {
                        implicitWidth: 36
                        implicitHeight: 36
                        radius: Theme.radius
                        color: detailsButton.down ? Qt.rgba(1, 1, 1, 0.32) : detailsButton.hovered ? Qt.rgba(1, 1, 1, 0.18) : "transparent"
                    }
                    onClicked: banner.detailShown = !banner.detailShown
                    Accessible.name: text
                }
                ToolButton {
                    FocusFrame {}
                    id: retryButton
                    objectName: "errorBannerRetry"
                    visible: banner.source === "app" && banner.appRetryable
                    text: qsTr("Retry")
                    font.pixelSize: Theme.uiFontSize
                    palette.buttonText: "white"
                    // White text on the red banner: a light veil when hovered or pressed (the style's own
                    // hover colour is white, which hid the text).
                    background: Rectangle {
                        implicitWidth: 36
                        implicitHeight: 36
                        radius: Theme.radius
                        color: retryButton.down ? Qt.rgba(1, 1, 1, 0.32) : retryButton.hovered ? Qt.rgba(1, 1, 1, 0.18) : "transparent"
                    }
                    onClicked: banner.retryRequested()
                    Accessible.name: qsTr("Retry saving the chat history")
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Retry saving the chat history")
                }
                ToolButton {
                    FocusFrame {}
                    id: closeButton
                    objectName: "errorBannerClose"
                    text: "\u2715"
                    font.pixelSize: Theme.uiFontSize
                    palette.buttonText: "white"
                    // White text on the red banner: a light veil when hovered or pressed (the style's own
                    // hover colour is white, which hid the text).
                    background: Rectangle {
                        implicitWidth: 36
                        implicitHeight: 36
                        radius: Theme.radius
                        color: closeButton.down ? Qt.rgba(1, 1, 1, 0.32) : closeButton.hovered ? Qt.rgba(1, 1, 1, 0.18) : "transparent"
                    }
                    onClicked: banner.dismiss()
                    Accessible.name: qsTr("Dismiss error")
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Dismiss error")
                }
            }
        }

        TextEdit {
            objectName: "errorBannerDetailText"
            Layout.fillWidth: true
            Layout.leftMargin: 16
            Layout.rightMargin: 16
            visible: banner.detailShown && banner.detail !== ""
            text: banner.detail
            readOnly: true
            selectByMouse: true  // to copy it into a bug report
            wrapMode: TextEdit.Wrap
            textFormat: TextEdit.PlainText
            color: "white"
            font.family: Theme.monospaceFamily
            font.pixelSize: Theme.uiFontSize - 1
            Accessible.name: qsTr("Error details")
        }
    }
}
