// The scrolling list of a conversation's messages; follows the end while text streams in.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import PagedChat

ListView {
    id: list

    property int paneNumber: 1
    /// The pane's PaneState (C++): the bubbles' actions call it.
    property PaneState paneState: null
    /// Row of the message a search result opened (highlighted for a few seconds), or -1.
    property int highlightedRow: -1
    /// Border colour of that message (amber: visible on light and dark bubbles alike).
    readonly property color highlightColor: "#ffb300"
    /// True while the view shows the end of the list: new text then keeps it there.
    property bool followEnd: true
    /// Blind compare: finish reasons and Continue would tell the panes' settings apart.
    property bool detailsHidden: false
    /// Regenerate, Continue and Edit need a model (loaded or loading).
    property bool modelAvailable: true
    /// The pane's model has no chat format: it continues the text it is given (a story model).
    property bool continuesText: false

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
        paneState: list.paneState
        detailsHidden: list.detailsHidden
        modelAvailable: list.modelAvailable
        highlighted: list.highlightedRow === index
        outOfContext: list.paneState !== null && index >= list.paneState.unseenFirstRow
                      && index <= list.paneState.unseenLastRow
        highlightColor: list.highlightColor
    }

    /// Row being brought into view (a search result), or -1. Rows above it get their real
    /// heights only once created, so it is placed again until the layout settles.
    property int jumpRow: -1

    /// Centres `row` (placed again while rows around it are created and measured).
    function jumpTo(row) {
        list.followEnd = false
        list.jumpRow = row
        list.highlightedRow = row
        highlightTimer.restart()
        jumpTimer.ticks = 0
        jumpTimer.restart()
        list.placeJumpRow()
    }
    /// Shows the end of the list (not while a search result is being brought into view).
    function toEnd() {
        if (list.jumpRow < 0)
            list.positionViewAtEnd()
    }
    function placeJumpRow() {
        if (list.jumpRow < 0 || list.jumpRow >= list.count)
            return
        list.forceLayout()
        list.positionViewAtIndex(list.jumpRow, ListView.Center)
    }

    Connections {
        target: list.paneState
        function onMessageShown(row, messageId) { list.jumpTo(row) }
        function onConversationChanged() {
            list.jumpRow = -1
            list.followEnd = true
            // Qt.callLater is a method: Qt 6.4's qmllint takes it for a QJSValue property, hence the
            // `qmllint disable type` on its calls in this file.
            Qt.callLater(list.toEnd)  // qmllint disable type
        }
    }
    Timer {
        id: jumpTimer
        property int ticks: 0
        interval: 40
        repeat: true
        onTriggered: {
            list.placeJumpRow()
            if (++ticks >= 12) {
                stop()
                list.jumpRow = -1
            }
        }
    }
    Timer {
        id: highlightTimer
        interval: 4000
        onTriggered: list.highlightedRow = -1
    }

    onMovementStarted: {
        jumpTimer.stop()  // the user scrolls: leave the view where they put it
        jumpRow = -1
    }
    onMovementEnded: followEnd = atYEnd
    onCountChanged: {
        if (jumpRow >= 0)
            return
        followEnd = true
        Qt.callLater(list.toEnd)  // qmllint disable type
    }
    onContentHeightChanged: {
        if (jumpRow >= 0)
            Qt.callLater(list.placeJumpRow)  // qmllint disable type
        else if (followEnd)
            Qt.callLater(list.toEnd)  // qmllint disable type
    }
    // A conversation opened (restored) before the view had its size: at the latest message.
    onHeightChanged: if (followEnd && jumpRow < 0) Qt.callLater(list.toEnd)  // qmllint disable type
    Component.onCompleted: Qt.callLater(list.toEnd)  // qmllint disable type

    Label {
        anchors.centerIn: parent
        width: parent.width - 48
        objectName: "emptyPaneHint"
        visible: list.count === 0 && list.modelAvailable
        horizontalAlignment: Text.AlignHCenter
        wrapMode: Text.Wrap
        color: Theme.mutedTextColor
        text: list.continuesText
              ? qsTr("Type the beginning of a text below and press Enter: this model has no chat format and continues what you write.")
              : qsTr("Type a message below and press Enter.")
        Accessible.name: text
    }
}
