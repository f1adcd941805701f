// The actions under one message: copy, branch switcher "< 2/3 >", regenerate (last answer),
// continue (a cut-off last answer), edit (user messages, with an inline editor that resends).
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat
import "ComposingInput.js" as ComposingInput

ColumnLayout {
    id: actions

    /// The pane's PaneState (C++); null hides the actions that need it. Untyped (var, which
    /// qmllint does not check) because its Qt Quick Test (tst_message_actions.qml) hands it a
    /// QtObject that records the calls instead.
    property var paneState: null
    /// The message's row and model roles.
    property int row: -1
    property string role: ""
    property string text: ""
    property string finishReason: ""
    property bool streaming: false
    /// Blind compare: the round's settings are hidden, and Continue would reveal a length limit.
    property bool detailsHidden: false
    /// A model is loaded or loading: without one, Regenerate, Continue and Save-and-send are off.
    property bool modelAvailable: true
    property bool isLast: false
    property int siblingIndex: 0
    property int siblingCount: 1

    /// The inline editor is open.
    property bool editing: false

    readonly property bool isUser: role === "user"
    readonly property bool idle: paneState !== null && !paneState.busy && !streaming
    readonly property bool canRegenerate: idle && isLast && role === "assistant"
    readonly property bool canContinue: canRegenerate && !detailsHidden
        && (finishReason === "length" || finishReason === "abort" || finishReason === "")
    readonly property bool canEdit: idle && isUser

    function copyText() {
        clipboardHelper.text = actions.text
        clipboardHelper.selectAll()
        clipboardHelper.copy()
        clipboardHelper.text = ""
        copiedTip.visible = true
        copiedTimer.restart()
    }
    function startEdit() {
        editor.text = actions.text
        actions.editing = true
        editor.forceActiveFocus()
        editor.cursorPosition = editor.length
    }
    function submitEdit() {
        if (editor.text.trim() === "")
            return
        if (actions.paneState.editMessage(actions.row, editor.text))
            actions.editing = false
    }

    spacing: 4

    // Copy goes through a hidden TextEdit: QML has no clipboard API of its own.
    TextEdit {
        id: clipboardHelper
        visible: false
    }
    Timer {
        id: copiedTimer
        interval: 1200
        onTriggered: copiedTip.visible = false
    }

    // The inline editor of a user message.
    ColumnLayout {
        visible: actions.editing
        Layout.fillWidth: true
        spacing: 4
        TextArea {
            id: editor
            objectName: "editArea"
            Layout.fillWidth: true
            wrapMode: TextEdit.Wrap
            font.pixelSize: 15
            Accessible.name: qsTr("Edit message")
            Keys.onReturnPressed: (event) => {
                ComposingInput.commit(editor)  // a Korean syllable being composed goes in first
                if (event.modifiers & Qt.ShiftModifier)
                    event.accepted = false
                else
                    actions.submitEdit()
            }
            Keys.onEscapePressed: actions.editing = false
        }
        RowLayout {
            Layout.alignment: Qt.AlignRight
            Button {
                FocusFrame {}
                objectName: "editCancelButton"
                text: qsTr("Cancel")
                flat: true
                onClicked: actions.editing = false
                Accessible.name: qsTr("Cancel editing")
            }
            Button {
                FocusFrame {}
                objectName: "editSendButton"
                text: qsTr("Save and send")
                highlighted: true
                enabled: actions.canEdit && actions.modelAvailable && editor.text.trim() !== ""
                onClicked: actions.submitEdit()
                Accessible.name: qsTr("Save the edited message and send it")
            }
        }
    }

    // A Flow: in a narrow pane the actions wrap onto a second line instead of being cut off.
    Flow {
        id: actionRow
        objectName: "messageActionRow"
        /// The width of the visible actions on one line.
        readonly property real naturalWidth: {
            let w = 0
            for (let i = 0; i < children.length; ++i)
                if (children[i].visible)
                    w += children[i].implicitWidth
            return w
        }
        visible: !actions.editing && !actions.streaming
        Layout.alignment: actions.isUser ? Qt.AlignRight : Qt.AlignLeft
        Layout.preferredWidth: Math.min(naturalWidth, actions.width)
        Layout.maximumWidth: actions.width
        spacing: 0

        ToolButton {
            FocusFrame {}
            id: prevButton
            objectName: "branchPrevButton"
            visible: actions.siblingCount > 1
            enabled: actions.idle && actions.siblingIndex > 0
            text: "\u2039"
            font.pixelSize: 16
            implicitWidth: 28
            onClicked: actions.paneState.switchBranch(actions.row, -1)
            Accessible.name: qsTr("Previous version")
        }
        Label {
            objectName: "branchLabel"
            visible: actions.siblingCount > 1
            //: Which version of a message is shown: "2/3"
            text: qsTr("%1/%2").arg(actions.siblingIndex + 1).arg(actions.siblingCount)
            font.pixelSize: 12
            height: prevButton.implicitHeight
            verticalAlignment: Text.AlignVCenter
            color: Theme.mutedTextColor
            Accessible.name: qsTr("Version %1 of %2").arg(actions.siblingIndex + 1).arg(actions.siblingCount)
        }
        ToolButton {
            FocusFrame {}
            objectName: "branchNextButton"
            visible: actions.siblingCount > 1
            enabled: actions.idle && actions.siblingIndex + 1 < actions.siblingCount
            text: "\u203a"
            font.pixelSize: 16
            implicitWidth: 28
            onClicked: actions.paneState.switchBranch(actions.row, +1)
            Accessible.name: qsTr("Next version")
        }
        ToolButton {
            FocusFrame {}
            objectName: "copyButton"
            text: qsTr("Copy")
            font.pixelSize: 12
            enabled: actions.text !== ""
            onClicked: actions.copyText()
            Accessible.name: qsTr("Copy message")
            ToolTip {
                id: copiedTip
                text: qsTr("Copied")
            }
        }
        ToolButton {
            FocusFrame {}
            objectName: "editButton"
            visible: actions.isUser
            enabled: actions.canEdit
            text: qsTr("Edit")
            font.pixelSize: 12
            onClicked: actions.startEdit()
            Accessible.name: qsTr("Edit and resend message")
        }
        ToolButton {
            FocusFrame {}
            objectName: "regenerateButton"
            visible: actions.canRegenerate
            enabled: actions.modelAvailable
            text: qsTr("Regenerate")
            font.pixelSize: 12
            onClicked: actions.paneState.regenerate()
            Accessible.name: qsTr("Regenerate answer")
        }
        ToolButton {
            FocusFrame {}
            objectName: "continueButton"
            visible: actions.canContinue
            enabled: actions.modelAvailable
            text: qsTr("Continue")
            font.pixelSize: 12
            onClicked: actions.paneState.continueReply()
            Accessible.name: qsTr("Continue the cut-off answer")
        }
    }
}
