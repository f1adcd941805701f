// The scrolling list of a conversation's messages; follows the end while text streams in.
import QtQuick
import QtQuick.Controls

ListView {
    id: list

    property int paneNumber: 1
    /// True while the view shows the end of the list: new text then keeps it there.
    property bool followEnd: true

    objectName: "messageList" + paneNumber
    clip: true
    spacing: 12
    topMargin: 12
    bottomMargin: 12
    boundsBehavior: Flickable.StopAtBounds
    Accessible.name: qsTr("Messages in pane %1").arg(paneNumber)
    Accessible.role: Accessible.List
    ScrollBar.vertical: ScrollBar { Accessible.name: qsTr("Scroll messages") }

    delegate: MessageBubble {
        width: ListView.view.width
    }

    onMovementEnded: followEnd = atYEnd
    onCountChanged: {
        followEnd = true
        Qt.callLater(list.positionViewAtEnd)
    }
    onContentHeightChanged: if (followEnd) Qt.callLater(list.positionViewAtEnd)

    Label {
        anchors.centerIn: parent
        width: parent.width - 48
        visible: list.count === 0
        horizontalAlignment: Text.AlignHCenter
        wrapMode: Text.Wrap
        color: Theme.mutedTextColor
        text: qsTr("Start a story: type its first words below and press Enter.")
        Accessible.name: text
    }
}
