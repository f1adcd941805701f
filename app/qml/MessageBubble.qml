// One message: the user's on the right in the accent colour, the model's on the left.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Item {
    id: bubble

    required property string role
    required property string text
    required property string finishReason
    required property bool streaming

    readonly property bool isUser: role === "user"
    /// A story model continues the prompt: its reply often starts with a space or a newline.
    readonly property string shownText: isUser ? text : text.replace(/^\s+/, "")
    readonly property real maxBubbleWidth: Math.max(120, width * 0.82 - 32)
    readonly property string note: finishReason === "abort" ? qsTr("stopped")
                                  : finishReason === "length" ? qsTr("length limit reached") : ""

    implicitHeight: box.height

    Rectangle {
        id: box
        x: bubble.isUser ? bubble.width - width - 16 : 16
        width: Math.min(bubble.maxBubbleWidth, Math.max(content.implicitWidth, noteLabel.implicitWidth)) + 28
        height: column.implicitHeight + 20
        radius: 14
        color: bubble.isUser ? Theme.userBubbleColor : Theme.assistantBubbleColor

        ColumnLayout {
            id: column
            x: 14
            y: 10
            width: box.width - 28
            spacing: 4

            TextEdit {
                id: content
                Layout.fillWidth: true
                readOnly: true
                selectByMouse: true
                wrapMode: TextEdit.Wrap
                textFormat: TextEdit.PlainText
                font.pixelSize: 15
                color: bubble.isUser ? Theme.userTextColor : Theme.assistantTextColor
                selectionColor: "#9fa8da"
                text: bubble.shownText !== "" || !bubble.streaming ? bubble.shownText : "\u2026"
                Accessible.role: Accessible.StaticText
                Accessible.name: (bubble.isUser ? qsTr("You: %1") : qsTr("Model: %1")).arg(bubble.shownText)
            }
            Label {
                id: noteLabel
                visible: bubble.note !== ""
                text: bubble.note
                font.pixelSize: 11
                font.italic: true
                color: Theme.mutedTextColor
                Accessible.name: text
            }
        }
    }
}
