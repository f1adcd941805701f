// One message: the user's on the right in the accent colour, the model's on the left, a system
// prompt (an imported conversation's, an API client's) on the left, framed and labelled. A reply
// that calls tools lists its calls (while they wait: Allow once, Always allow, Deny); a tool's
// result is framed, labelled and shown collapsed.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PagedChat

Item {
    id: bubble

    required property string role
    required property string text
    /// A reasoning model's reply apart (MessageListModel: reasoning, answer, thinking).
    required property string reasoning
    required property string answer
    /// The reasoning and answer with their accepted draft text marked ("" for none).
    required property string markedReasoning
    required property string markedAnswer
    required property bool thinking
    required property string finishReason
    required property bool streaming
    // Message actions (MessageActions.qml): the row, its place among its versions, last row.
    required property int index
    required property int siblingIndex
    required property int siblingCount
    required property bool isLast
    /// A reply's tool calls ({id, name, arguments}), and a tool result's tool (MessageListModel).
    required property var toolCalls
    required property string toolName
    /// The message's pictures (MessageListModel's attachments role): {bytes, mime, width, height}.
    required property var attachments
    readonly property real imagesWidth: bubble.attachments.length > 0
                                        ? Math.min(bubble.maxTextWidth, bubble.attachments.length * 166 - 6) : 0

    // Set by MessageList's delegate (the defaults: a bubble outside a MessageList).
    /// The pane's PaneState (C++): the message actions call it.
    property PaneState paneState: null
    /// Blind compare hides the round's settings until the vote: no finish reason, no Continue.
    property bool detailsHidden: false
    /// Regenerate, Continue and Edit need a model (loaded or loading).
    property bool modelAvailable: true
    /// A search result being shown (MessageList.highlightedRow), framed in highlightColor.
    property bool highlighted: false
    property color highlightColor: "transparent"
    /// The latest request left this message out (the conversation outgrew the context): dimmed,
    /// and it says so.
    property bool outOfContext: false
    /// Accepted draft text is shown tinted (the pane's PaneSettings::tintDrafts).
    property bool tintDrafts: paneState !== null && paneState.settings.tintDrafts

    readonly property bool isUser: role === "user"
    readonly property bool isSystem: role === "system"
    readonly property bool isTool: role === "tool"
    readonly property bool hasToolCalls: toolCalls !== undefined && toolCalls !== null && toolCalls.length > 0
    /// The pane's open calls (PaneState.toolCalls) belong to its last reply.
    readonly property var openCalls: role === "assistant" && isLast && paneState !== null ? paneState.toolCalls : []
    /// A tool result shows its first lines until expanded.
    property bool expanded: false
    readonly property int collapsedLength: 240
    readonly property bool collapsible: isTool && (text.length > collapsedLength || text.split("\n").length > 4)
    /// The app died while this reply streamed (killed, crashed, power loss): no finish reason was
    /// saved. A reply stopped by the user or by quitting the app has finish reason "abort".
    readonly property bool interrupted: role === "assistant" && !streaming && finishReason === ""
    /// The reasoning shown apart (collapsed) above the answer.
    readonly property bool hasReasoning: !isUser && !isSystem && !isTool && (reasoning !== "" || thinking)
    /// A story model continues the prompt: its reply often starts with a space or a newline.
    readonly property string shownText: isTool ? (collapsible && !expanded ? text.split("\n").slice(0, 4).join("\n").substring(0, collapsedLength) + "\u2026" : text)
                                      : isUser || isSystem ? text : answer.replace(/^\s+/, "")
    /// A finished reply without any text: the bubble says so instead of staying empty.
    readonly property bool noReply: role === "assistant" && !streaming && shownText === "" && !hasReasoning
                                    && !hasToolCalls
    readonly property string note: detailsHidden ? ""
                                  : interrupted ? qsTr("interrupted")
                                  : finishReason === "abort" ? qsTr("stopped")
                                  : finishReason === "length" ? qsTr("length limit reached") : ""
    readonly property string displayText: {
        if (shownText !== "")
            return shownText
        if (streaming)
            return thinking ? "" : "\u2026"
        if (!noReply)
            return ""
        if (detailsHidden)
            return qsTr("(no reply)")
        return interrupted ? qsTr("(no reply \u2014 interrupted)")
             : finishReason === "abort" ? qsTr("(no reply \u2014 stopped)")
             : finishReason === "length" ? qsTr("(no reply \u2014 length limit reached)") : qsTr("(no reply)")
    }

    readonly property int horizontalPadding: 14
    readonly property real maxTextWidth: Math.max(120, width * 0.82 - 32) - 2 * horizontalPadding
    /// The text's natural width, measured apart from the TextEdit and rounded up: a TextEdit given
    /// exactly its own fractional implicitWidth can wrap its last word ("H / i", "Go / 4"). The
    /// extra pixel leaves room for the cursor width the text layout keeps at the end of a line.
    readonly property real textWidth: Math.min(
        maxTextWidth,
        bubble.measured && !(bubble.hasReasoning && reasoningSection.expanded)
            ? Math.ceil(Math.max(measure.implicitWidth, bubble.imagesWidth,
                                 noteLabel.visible ? noteLabel.implicitWidth : 0,
                                 roleLabel.visible ? roleLabel.implicitWidth : 0,
                                 bubble.hasReasoning ? reasoningSection.implicitWidth : 0)) + 1
            : bubble.maxTextWidth)

    implicitHeight: box.height + messageActions.implicitHeight + 2

    /// Measures short messages only: a long one (or one with code) takes the full width anyway,
    /// and measuring it would lay its whole text out again on every update.
    readonly property bool measured: displayText.length < 600 && displayText.indexOf("```") < 0
                                     && displayText.indexOf("~~~") < 0 && !hasToolCalls && !isTool
    Text {
        id: measure
        visible: false
        text: bubble.measured ? bubble.displayText : ""
        font.pixelSize: Theme.messageFontSize
        font.italic: bubble.noReply
        textFormat: Text.PlainText
    }

    Rectangle {
        id: box
        x: bubble.isUser ? bubble.width - width - 16 : 16
        width: bubble.textWidth + 2 * bubble.horizontalPadding
        height: column.implicitHeight + 20
        radius: 14
        opacity: bubble.outOfContext ? 0.45 : 1
        color: bubble.isUser ? Theme.userBubbleColor
             : bubble.isSystem || bubble.isTool ? Theme.surfaceColor : Theme.assistantBubbleColor
        // A search result being shown (MessageList.highlightedRow); a system prompt's or a tool result's frame.
        border.width: bubble.highlighted ? 3 : bubble.isSystem || bubble.isTool ? 1 : 0
        border.color: bubble.highlighted ? bubble.highlightColor : Theme.borderColor

        ColumnLayout {
            id: column
            x: bubble.horizontalPadding
            y: 10
            width: bubble.textWidth
            spacing: 4

            Label {
                id: roleLabel
                objectName: "messageRoleLabel"
                visible: bubble.isSystem || bubble.isTool
                text: bubble.isTool ? (bubble.toolName !== "" ? qsTr("Tool result: %1").arg(bubble.toolName)
                                                              : qsTr("Tool result"))
                                    : qsTr("System prompt")
                font.pixelSize: Theme.smallFontSize
                font.bold: true
                color: Theme.mutedTextColor
                Accessible.ignored: true  // the text's accessible name says it
            }
            Flow {
                objectName: "messageImages"
                visible: bubble.attachments.length > 0
                Layout.fillWidth: true
                spacing: 6
                Repeater {
                    model: bubble.attachments
                    AttachmentImage {
                        required property var modelData
                        objectName: "attachmentImage"
                        bytes: modelData.bytes
                        maxSide: 160
                        width: implicitWidth
                        height: implicitHeight
                        Accessible.role: Accessible.Graphic
                        Accessible.name: qsTr("Image, %1 by %2 pixels").arg(modelData.width).arg(modelData.height)
                    }
                }
            }
            ReasoningSection {
                id: reasoningSection
                objectName: "reasoningSection"
                visible: bubble.hasReasoning
                Layout.fillWidth: true
                text: bubble.reasoning
                markedText: bubble.tintDrafts ? bubble.markedReasoning : ""
                thinking: bubble.thinking
            }
            MessageContent {
                id: content
                objectName: "messageText"
                visible: bubble.displayText !== ""
                Layout.fillWidth: true
                text: bubble.displayText
                // (The answer as shown: without its leading white space, as shownText.)
                markedText: bubble.tintDrafts && bubble.shownText !== "" && !bubble.isTool
                            ? bubble.markedAnswer.replace(/^\s+/, "") : ""
                streaming: bubble.streaming
                // What the user (or an API client's system prompt) typed is shown as typed, its line
                // breaks kept and no markup read into it; a reply is Markdown.
                plain: bubble.shownText === "" || bubble.isUser || bubble.isSystem || bubble.isTool
                italic: bubble.noReply
                textColor: bubble.noReply ? Theme.mutedTextColor
                         : bubble.isUser ? Theme.userTextColor : Theme.assistantTextColor
                linkColor: bubble.isUser ? Theme.userTextColor : Theme.linkColor
                tableBorderColor: bubble.isUser ? Theme.userTableBorderColor : Theme.tableBorderColor
                accessibleName: (bubble.isUser ? qsTr("You: %1")
                                 : bubble.isSystem ? qsTr("System prompt: %1")
                                 : bubble.isTool ? qsTr("Tool result: %1") : qsTr("Model: %1")).arg(
                                    bubble.noReply ? bubble.displayText : bubble.shownText)
            }
            Button {
                objectName: "toolResultToggle"
                visible: bubble.collapsible
                flat: true
                text: bubble.expanded ? qsTr("Show less") : qsTr("Show all")
                font.pixelSize: Theme.smallFontSize
                onClicked: bubble.expanded = !bubble.expanded
                Accessible.name: text
            }
            Repeater {
                model: bubble.hasToolCalls ? bubble.toolCalls : []
                delegate: ColumnLayout {
                    id: callItem
                    required property var modelData
                    required property int index
                    /// The call's state while the pane waits for it ("asking", "running", "done"), "" after.
                    readonly property string state: bubble.openCalls.length > index ? bubble.openCalls[index].state : ""
                    readonly property bool running: state === "running"
                    /// The arguments as JSON with escapes ("\\uc548") shown as their characters.
                    readonly property string shownArguments: {
                        try {
                            return JSON.stringify(JSON.parse(callItem.modelData.arguments))
                        } catch (e) {
                            return callItem.modelData.arguments
                        }
                    }
                    objectName: "toolCall_" + index
                    Layout.fillWidth: true
                    spacing: 2
                    Label {
                        Layout.fillWidth: true
                        textFormat: Text.PlainText  // the model's text: never markup
                        text: qsTr("Tool call: %1").arg(callItem.modelData.name)
                        font.pixelSize: Theme.smallFontSize
                        font.bold: true
                        color: Theme.mutedTextColor
                        wrapMode: Text.Wrap
                        Accessible.name: text
                    }
                    Label {
                        objectName: "toolCallArguments"
                        Layout.fillWidth: true
                        textFormat: Text.PlainText  // exactly what the tool gets, never markup
                        text: callItem.shownArguments
                        font.family: Theme.monospaceFamily
                        font.pixelSize: Theme.smallFontSize
                        color: Theme.assistantTextColor
                        wrapMode: Text.WrapAnywhere
                        maximumLineCount: 8
                        elide: Text.ElideRight
                        Accessible.name: qsTr("Arguments: %1").arg(text)
                    }
                    Flow {
                        Layout.fillWidth: true
                        visible: callItem.state === "asking"
                        spacing: 6
                        Button {
                            objectName: "allowToolCall"
                            text: qsTr("Allow once")
                            highlighted: true
                            onClicked: bubble.paneState.allowToolCall(callItem.index, false)
                            Accessible.name: qsTr("Allow this call of %1 once").arg(callItem.modelData.name)
                        }
                        Button {
                            objectName: "alwaysAllowToolCall"
                            text: qsTr("Always allow")
                            onClicked: bubble.paneState.allowToolCall(callItem.index, true)
                            Accessible.name: qsTr("Always allow %1").arg(callItem.modelData.name)
                        }
                        Button {
                            objectName: "denyToolCall"
                            text: qsTr("Deny")
                            onClicked: bubble.paneState.denyToolCall(callItem.index)
                            Accessible.name: qsTr("Deny this call of %1").arg(callItem.modelData.name)
                        }
                    }
                    Label {
                        visible: callItem.running || callItem.state === "done"
                        text: callItem.running ? qsTr("Running\u2026") : qsTr("Done")
                        font.pixelSize: Theme.smallFontSize
                        font.italic: true
                        color: Theme.mutedTextColor
                        Accessible.name: text
                    }
                }
            }
            Label {
                objectName: "outOfContextNote"
                visible: bubble.outOfContext
                text: qsTr("not sent: outside the model's context")
                font.pixelSize: Theme.smallFontSize
                font.italic: true
                color: bubble.isUser ? Theme.userTextColor : Theme.mutedTextColor
                Accessible.name: text
            }
            Label {
                id: noteLabel
                objectName: "messageNote"
                visible: bubble.note !== "" && !bubble.noReply
                text: bubble.note
                font.pixelSize: Theme.smallFontSize
                font.italic: true
                color: Theme.mutedTextColor
                Accessible.name: text
            }
        }
    }

    MessageActions {
        id: messageActions
        x: 16
        y: box.height + 2
        width: bubble.width - 32
        paneState: bubble.paneState
        row: bubble.index
        role: bubble.role
        text: bubble.shownText  // copy what is shown (an answer's leading space is not)
        finishReason: bubble.finishReason
        detailsHidden: bubble.detailsHidden
        modelAvailable: bubble.modelAvailable
        streaming: bubble.streaming
        isLast: bubble.isLast
        siblingIndex: bubble.siblingIndex
        siblingCount: bubble.siblingCount
    }
}
