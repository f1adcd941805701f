// The message box of a pane: Enter sends, Shift+Enter adds a line, the button sends or stops.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

ColumnLayout {
    id: input

    /// The pane's ChatSession (C++).
    required property QtObject session
    property int paneNumber: 1
    property bool canSend: true

    signal inputFocused()

    /// What Enter does: the draft is already in session.inputText.
    function send() {
        if (input.canSend)
            input.session.send()
    }

    spacing: 4

    Rectangle {
        Layout.fillWidth: true
        implicitHeight: composer.implicitHeight + 12
        radius: 14
        color: Theme.assistantBubbleColor
        border.color: textArea.activeFocus ? Material.accentColor : Theme.borderColor
        border.width: textArea.activeFocus ? 2 : 1

        RowLayout {
            id: composer
            anchors.fill: parent
            anchors.margins: 6
            anchors.leftMargin: 10
            spacing: 8

            ScrollView {
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(Math.max(textArea.implicitHeight, 40), 160)
                Accessible.name: qsTr("Message input area")

                TextArea {
                    id: textArea
                    objectName: "inputArea"
                    text: input.session.inputText
                    onTextChanged: input.session.inputText = text
                    placeholderText: qsTr("Type a message…")
                    wrapMode: TextEdit.Wrap
                    font.pixelSize: 15
                    topPadding: 8
                    bottomPadding: 8
                    leftPadding: 4
                    rightPadding: 4
                    background: null
                    Accessible.name: qsTr("Message for pane %1").arg(input.paneNumber)
                    Accessible.description: qsTr("Enter sends, Shift+Enter adds a line")
                    onActiveFocusChanged: if (activeFocus) input.inputFocused()
                    Keys.onPressed: (event) => {
                        if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                && !(event.modifiers & Qt.ShiftModifier)) {
                            event.accepted = true
                            input.send()
                        }
                    }
                }
            }

            Button {
                objectName: input.session.busy ? "stopButton" : "sendButton"
                text: input.session.busy ? qsTr("Stop") : qsTr("Send")
                highlighted: true
                Material.accent: input.session.busy ? Theme.errorColor : Theme.userBubbleColor
                enabled: input.session.busy || (input.canSend && input.session.inputText.trim() !== "")
                Layout.alignment: Qt.AlignBottom
                topInset: 0
                bottomInset: 0
                onClicked: input.session.busy ? input.session.stop() : input.send()
                Accessible.name: input.session.busy ? qsTr("Stop generating in pane %1").arg(input.paneNumber)
                                                    : qsTr("Send message in pane %1").arg(input.paneNumber)
            }
        }
    }

    Label {
        Layout.fillWidth: true
        Layout.rightMargin: 4
        horizontalAlignment: Text.AlignRight
        elide: Text.ElideRight
        text: qsTr("Enter to send · Shift+Enter for a new line")
        font.pixelSize: 11
        color: Theme.mutedTextColor
        Accessible.name: text
    }
}
