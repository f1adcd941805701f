// The saved conversations, newest first: new, open (click) and delete.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

Pane {
    id: sidebar

    /// The AppController (C++).
    required property QtObject app

    padding: 0
    Accessible.name: qsTr("Conversations")
    background: Rectangle {
        color: Theme.surfaceColor
        radius: Theme.radius
        border.color: Theme.borderColor
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 12
        spacing: 8

        RowLayout {
            Layout.fillWidth: true
            Label {
                text: qsTr("Chats")
                font.pixelSize: Theme.titleFontSize
                font.weight: Font.Medium
                color: Theme.assistantTextColor
                Layout.fillWidth: true
                Accessible.name: text
            }
            Button {
                objectName: "newConversationButton"
                text: qsTr("New chat")
                highlighted: true
                onClicked: sidebar.app.newConversation()
                Accessible.name: qsTr("New conversation")
            }
        }

        ListView {
            id: list
            objectName: "conversationListView"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 2
            model: sidebar.app.conversations
            Accessible.name: qsTr("Conversation list")
            Accessible.role: Accessible.List
            ScrollBar.vertical: ScrollBar { Accessible.name: qsTr("Scroll conversations") }

            delegate: ConversationDelegate {
                width: ListView.view.width
                currentConversationId: sidebar.app.currentConversationId
                onOpenRequested: (id) => sidebar.app.openConversation(id)
                onDeleteRequested: (id) => sidebar.app.deleteConversation(id)
            }

            Label {
                anchors.centerIn: parent
                width: parent.width - 24
                visible: list.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                color: Theme.mutedTextColor
                text: qsTr("No conversations yet. Type a message in a pane to start one.")
                Accessible.name: text
            }
        }
    }
}
