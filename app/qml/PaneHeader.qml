// A chat pane's title row: conversation title, "generating" chip, close button.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

Rectangle {
    id: header

    property string title
    property bool busy: false
    property int paneNumber: 1
    property bool canClose: false

    signal closeRequested()

    implicitHeight: 48
    color: "transparent"

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 6
        spacing: 8

        Label {
            objectName: "paneTitle"
            Layout.fillWidth: true
            text: header.title
            textFormat: Text.PlainText  // a conversation title is never markup
            elide: Text.ElideRight
            font.pixelSize: 16
            font.weight: Font.Medium
            color: Theme.assistantTextColor
            Accessible.name: qsTr("Pane %1 conversation: %2").arg(header.paneNumber).arg(header.title)
        }
        GeneratingChip {
            visible: header.busy
            running: header.busy
        }
        ToolButton {
            objectName: "closePaneButton"
            text: "\u00d7"
            font.pixelSize: 18
            enabled: header.canClose
            onClicked: header.closeRequested()
            Accessible.name: qsTr("Close pane %1").arg(header.paneNumber)
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Close this pane")
        }
    }

    Rectangle {
        anchors.bottom: parent.bottom
        width: parent.width
        height: 1
        color: Theme.borderColor
    }
}
