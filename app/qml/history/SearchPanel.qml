// Full-text search over all conversations (Ctrl+F): results show the conversation's title and
// the matching text with the match in bold; a click opens the conversation at that message.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat
import "ComposingInput.js" as ComposingInput

ColumnLayout {
    id: panel

    /// The AppController (C++).
    required property AppController app
    /// The results of the last search: [{messageId, conversationId, title, role, snippet}].
    property var results: []

    signal closeRequested()

    function focusField() {
        field.forceActiveFocus()
        field.selectAll()
    }
    function runSearch() { panel.results = panel.app.history.search(field.text) }

    spacing: 6

    RowLayout {
        Layout.fillWidth: true
        TextField {
            id: field
            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search all chats")
            selectByMouse: true
            Accessible.name: qsTr("Search text")
            onTextChanged: searchDelay.restart()
            onAccepted: { searchDelay.stop(); panel.runSearch() }
            // A Korean syllable still being composed goes into the text before Enter searches.
            Keys.onReturnPressed: (event) => { ComposingInput.commit(field); event.accepted = false }
            Keys.onEnterPressed: (event) => { ComposingInput.commit(field); event.accepted = false }
            Keys.onEscapePressed: panel.closeRequested()
            Keys.onDownPressed: resultList.forceActiveFocus()
        }
        ToolButton {
            text: "\u00d7"
            font.pixelSize: 18
            onClicked: panel.closeRequested()
            Accessible.name: qsTr("Close search")
        }
    }
    Timer {
        id: searchDelay
        interval: 200
        onTriggered: panel.runSearch()
    }

    ListView {
        id: resultList
        objectName: "searchResults"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        spacing: 2
        model: panel.results
        keyNavigationEnabled: true
        Accessible.name: qsTr("Search results")
        Accessible.role: Accessible.List
        ScrollBar.vertical: ScrollBar {}

        delegate: ItemDelegate {
            id: hit
            required property var modelData
            required property int index
            width: ListView.view.width
            highlighted: ListView.isCurrentItem
            onClicked: panel.app.history.openSearchResult(modelData.conversationId, modelData.messageId)
            Keys.onReturnPressed: clicked()
            Accessible.name: qsTr("Result in %1").arg(modelData.title)
            contentItem: ColumnLayout {
                spacing: 2
                Label {
                    objectName: "searchResultTitle"
                    Layout.fillWidth: true
                    text: hit.modelData.title
                    textFormat: Text.PlainText  // a conversation title is never markup
                    elide: Text.ElideRight
                    font.weight: Font.Medium
                    color: Theme.assistantTextColor
                }
                Label {
                    Layout.fillWidth: true
                    text: hit.modelData.snippet
                    textFormat: Text.StyledText
                    wrapMode: Text.Wrap
                    maximumLineCount: 3
                    elide: Text.ElideRight
                    font.pixelSize: 12
                    color: Theme.mutedTextColor
                }
            }
        }

        Label {
            anchors.centerIn: parent
            width: parent.width - 24
            visible: resultList.count === 0 && field.text.trim() !== ""
            horizontalAlignment: Text.AlignHCenter
            wrapMode: Text.Wrap
            color: Theme.mutedTextColor
            text: qsTr("No messages found.")
        }
    }
}
