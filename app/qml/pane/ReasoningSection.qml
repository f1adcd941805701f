// The reasoning of a reasoning model's reply (its <think> part, app/engine/reasoning.h), shown apart from
// the answer: a header with its length, collapsed by default; a click (or Enter / Space) shows the
// text, with a Copy button of its own (the message's Copy copies the answer). While the model is
// still thinking the header says so.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PagedChat

ColumnLayout {
    id: section

    /// The reasoning text (trimmed).
    property string text: ""
    /// The same with its accepted draft text marked (draft_marks.h), shown instead; "" for none.
    property string markedText: ""
    /// Still inside <think> while streaming.
    property bool thinking: false
    property bool expanded: false

    readonly property int length: text.length
    readonly property string title: thinking ? qsTr("Thinking… (%n character(s))", "", length)
                                             : qsTr("Reasoning (%n character(s))", "", length)
    spacing: 4

    AbstractButton {
        id: header
        objectName: "reasoningHeader"
        Layout.fillWidth: true
        implicitWidth: contentItem.implicitWidth + 8
        implicitHeight: contentItem.implicitHeight + 4
        padding: 2
        hoverEnabled: true
        focusPolicy: Qt.TabFocus
        Accessible.name: section.expanded ? qsTr("Hide the reasoning: %1").arg(section.title)
                                          : qsTr("Show the reasoning: %1").arg(section.title)
        onClicked: section.expanded = !section.expanded
        contentItem: Label {
            text: (section.expanded ? "\u25be " : "\u25b8 ") + section.title
            font.pixelSize: Theme.smallFontSize
            font.italic: section.thinking
            font.underline: header.hovered
            color: Theme.mutedTextColor
            elide: Text.ElideRight
        }
        FocusFrame {}
    }
    Rectangle {
        visible: section.expanded
        Layout.fillWidth: true
        implicitHeight: reasoningText.implicitHeight + 12
        radius: 6
        color: "transparent"
        border.width: 1
        border.color: Theme.borderColor
        ToolButton {
            id: copyReasoning
            objectName: "copyReasoningButton"
            anchors.top: parent.top
            anchors.right: parent.right
            text: qsTr("Copy")
            font.pixelSize: 12
            enabled: section.text !== ""
            onClicked: {
                reasoningText.selectAll()
                reasoningText.copy()
                reasoningText.deselect()
                copiedTip.visible = true
                copiedTimer.restart()
            }
            Accessible.name: qsTr("Copy the reasoning")
            ToolTip {
                id: copiedTip
                text: qsTr("Copied")
            }
            Timer {
                id: copiedTimer
                interval: 1200
                onTriggered: copiedTip.visible = false
            }
            FocusFrame {}
        }
        TextEdit {
            id: reasoningText
            objectName: "reasoningText"
            x: 8
            y: 6
            width: parent.width - 16 - copyReasoning.width
            text: section.markedText !== "" ? section.markedText : section.text
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.Wrap
            textFormat: TextEdit.PlainText
            font.pixelSize: Theme.smallFontSize
            color: Theme.mutedTextColor
            selectionColor: Theme.textSelectionColor
            Accessible.role: Accessible.StaticText
            Accessible.name: section.text

            // Tints marked draft text and removes the marks.
            MarkdownStyler {
                document: reasoningText.textDocument
                draftColor: Theme.draftTextColor
                tintDrafts: section.markedText !== ""
            }
        }
    }
}
