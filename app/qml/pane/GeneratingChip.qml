// A small "Generating" pill with a pulsing dot, shown in a pane's header while a reply streams;
// "Reading 312 / 580 tokens" while the engine reads the prompt, "Tool calls" while the reply's
// calls wait for the user or run.
import QtQuick
import QtQuick.Controls

Rectangle {
    id: chip

    property bool running: false
    /// The prompt's tokens read so far and its length (PaneState.promptTokensRead/Total); 0 = not reading.
    property int promptRead: 0
    property int promptTotal: 0
    /// Tool calls of the reply wait or run (PaneState.toolCalls is not empty).
    property bool toolCalls: false
    readonly property string text: toolCalls ? qsTr("Tool calls")
                                   : promptTotal > 0 ? qsTr("Reading %1 / %2 tokens").arg(promptRead).arg(promptTotal)
                                                     : qsTr("Generating")

    implicitWidth: row.implicitWidth + 20
    implicitHeight: 24
    radius: 12
    color: Theme.selectionColor
    Accessible.role: Accessible.Indicator
    objectName: "generatingChip"
    Accessible.name: chip.text

    Row {
        id: row
        anchors.centerIn: parent
        spacing: 6

        Rectangle {
            id: dot
            anchors.verticalCenter: parent.verticalCenter
            width: 8
            height: 8
            radius: 4
            color: Theme.userBubbleColor

            SequentialAnimation on opacity {
                running: chip.running
                loops: Animation.Infinite
                NumberAnimation { from: 1; to: 0.25; duration: 500 }
                NumberAnimation { from: 0.25; to: 1; duration: 500 }
            }
        }
        Label {
            anchors.verticalCenter: parent.verticalCenter
            text: chip.text
            font.pixelSize: Theme.smallFontSize + 1
            color: Theme.userBubbleColor
            Accessible.name: text
        }
    }
}
