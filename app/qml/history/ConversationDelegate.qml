// One row of the conversation list: title (renamed inline), last activity, pin mark, and a
// menu: rename, pin/unpin, export to Markdown or JSON, delete (undoable).
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import "ComposingInput.js" as ComposingInput

ItemDelegate {
    id: row

    required property double conversationId
    required property string title
    required property date updatedAt
    required property bool pinned
    property double currentConversationId: 0

    signal openRequested(double id)
    signal deleteRequested(double id)
    signal renameRequested(double id, string title)
    signal pinRequested(double id, bool pinned)
    /// format: "markdown" or "json"
    signal exportRequested(double id, string title, string format)

    readonly property bool isCurrent: conversationId === currentConversationId
    /// Put before a pinned conversation's title (U+1F4CC PUSHPIN).
    readonly property string pinMark: "\uD83D\uDCCC "
    /// The title is being edited in place.
    property bool renaming: false

    function startRename() {
        renameField.text = row.title
        row.renaming = true
        renameField.forceActiveFocus()
        renameField.selectAll()
    }
    function finishRename(accept) {
        if (!row.renaming)
            return
        row.renaming = false
        if (accept && renameField.text.trim() !== "" && renameField.text !== row.title)
            row.renameRequested(row.conversationId, renameField.text)
    }

    highlighted: isCurrent
    FocusFrame {}
    leftPadding: 12
    rightPadding: 4
    topPadding: 6
    bottomPadding: 6
    onClicked: if (!renaming) openRequested(conversationId)
    onDoubleClicked: startRename()
    Accessible.name: qsTr("Open conversation %1").arg(title)

    background: Rectangle {
        radius: 8
        color: row.isCurrent ? Theme.selectionColor : row.hovered ? Theme.hoverColor : "transparent"
    }

    TapHandler {
        acceptedButtons: Qt.RightButton
        onTapped: menu.popup()
    }

    // The ids inside make Qt build the content item at once rather than deferred, as it always
    // did here (qmllint warns of that); the functions above need them.
    contentItem: RowLayout {  // qmllint disable deferred-property-id
        spacing: 4
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 0
            TextField {
                id: renameField
                objectName: "renameField"
                visible: row.renaming
                Layout.fillWidth: true
                font.pixelSize: 14
                Accessible.name: qsTr("New title")
                onAccepted: row.finishRename(true)
                // A Korean syllable still being composed is part of the new title.
                Keys.onReturnPressed: (event) => { ComposingInput.commit(renameField); event.accepted = false }
                Keys.onEnterPressed: (event) => { ComposingInput.commit(renameField); event.accepted = false }
                onActiveFocusChanged: if (!activeFocus) row.finishRename(true)
                Keys.onEscapePressed: row.finishRename(false)
            }
            Label {
                objectName: "conversationTitle"
                visible: !row.renaming
                Layout.fillWidth: true
                text: (row.pinned ? row.pinMark : "") + row.title
                textFormat: Text.PlainText  // a conversation title is never markup (no <img> fetches)
                elide: Text.ElideRight
                font.weight: row.isCurrent ? Font.Medium : Font.Normal
                color: Theme.assistantTextColor
                Accessible.name: row.pinned ? qsTr("Pinned: %1").arg(row.title) : row.title
            }
            Label {
                objectName: "conversationDate"
                Layout.fillWidth: true
                // The year only when it is not this one.
                text: Qt.formatDateTime(row.updatedAt, row.updatedAt.getFullYear() === new Date().getFullYear()
                    //: Date format of a conversation's last activity (QDateTime format: day, month, time)
                    ? qsTr("d MMM, hh:mm")
                    //: Date format of a conversation's last activity in another year (QDateTime format: day, month, year, time)
                    : qsTr("d MMM yyyy, hh:mm"))
                font.pixelSize: Theme.smallFontSize
                color: Theme.mutedTextColor
                Accessible.name: qsTr("Last activity %1").arg(text)
            }
        }
        ToolButton {
            FocusFrame {}
            objectName: "conversationMenuButton"
            text: "\u22ee"
            font.pixelSize: 18
            implicitWidth: 28
            implicitHeight: 32
            opacity: row.hovered || row.isCurrent ? 1 : 0.35
            onClicked: menu.popup()
            Accessible.name: qsTr("Actions for conversation %1").arg(row.title)
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Rename, pin, export, delete")
        }
        ToolButton {
            FocusFrame {}
            objectName: "deleteConversationButton"
            text: "\u00d7"
            font.pixelSize: 18
            implicitWidth: 28
            implicitHeight: 32
            opacity: row.hovered || row.isCurrent ? 1 : 0.35
            onClicked: row.deleteRequested(row.conversationId)
            Accessible.name: qsTr("Delete conversation %1").arg(row.title)
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Delete conversation")
        }
    }

    Menu {
        id: menu
        objectName: "conversationMenu"
        // As wide as its widest item: no entry is cut off at large font sizes or in Korean.
        width: {
            let w = 160
            for (let i = 0; i < count; ++i) {
                const item = itemAt(i)
                if (item)
                    w = Math.max(w, item.implicitWidth)
            }
            return w + leftPadding + rightPadding
        }
        MenuItem {
            text: qsTr("Rename")
            onTriggered: row.startRename()
        }
        MenuItem {
            text: row.pinned ? qsTr("Unpin") : qsTr("Pin")
            onTriggered: row.pinRequested(row.conversationId, !row.pinned)
        }
        MenuSeparator {}
        MenuItem {
            text: qsTr("Export as Markdown…")
            onTriggered: row.exportRequested(row.conversationId, row.title, "markdown")
        }
        MenuItem {
            text: qsTr("Export as JSON…")
            onTriggered: row.exportRequested(row.conversationId, row.title, "json")
        }
        MenuSeparator {}
        MenuItem {
            text: qsTr("Delete")
            onTriggered: row.deleteRequested(row.conversationId)
        }
    }
}
