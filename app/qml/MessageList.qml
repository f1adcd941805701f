// The scrolling list of a conversation's messages; follows the end while text streams in.
import QtQuick
import QtQuick.Controls

ListView {
    id: list

    property int paneNumber: 1
    /// The pane's ChatSession (C++): the bubbles' actions call it.
    property QtObject session: null
    /// Row of the message a search result opened (highlighted for a few seconds), or -1.
    property int highlightedRow: -1
    /// Border colour of that message (amber: visible on light and dark bubbles alike).
    readonly property color highlightColor: "#ffb300"
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

    Connections {
        target: list.session
        function onMessageShown(row, messageId) {
            list.followEnd = false
            list.highlightedRow = row
            highlightTimer.restart()
            Qt.callLater(function() { list.positionViewAtIndex(row, ListView.Center) })
        }
    }
    Timer {
        id: highlightTimer
        interval: 4000
        onTriggered: list.highlightedRow = -1
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
