// A message's body: Markdown prose (Qt's GitHub dialect) and fenced code blocks, each code block
// in a monospace box with a copy button. The blocks come from MessageBlocksModel, which updates
// at most ten times a second while a reply streams and touches only the blocks that changed, so
// a long streaming answer re-lays out only its last block. Nothing in a message is loaded (an
// image shows as a link with its alt text) and a link opens only after the user's confirmation.
// Components are bound to where they are declared, so that the blocks can use this file's ids.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

Column {
    id: content

    /// The message's Markdown source.
    property string text
    /// The same with its accepted draft text marked (MessageListModel's markedAnswer), shown
    /// instead of `text` with that text in Theme.draftTextColor; "" for none.
    property string markedText: ""
    property bool streaming: false
    /// Shown as plain text (placeholders such as "(no reply)"), not as Markdown.
    property bool plain: false
    property color textColor: Theme.assistantTextColor
    property color linkColor: Theme.linkColor
    property color tableBorderColor: Theme.tableBorderColor
    property bool italic: false
    /// Used by screen readers for the whole message.
    property string accessibleName: text
    /// Lines of text shown (all blocks together).
    readonly property int lineCount: {
        let n = 0
        for (let i = 0; i < blockRepeater.count; ++i) {
            const block = blockRepeater.itemAt(i)
            if (block && block.item)
                n += block.item.lineCount
        }
        return n
    }

    spacing: 8
    Accessible.role: Accessible.StaticText
    Accessible.name: accessibleName

    MessageBlocksModel {
        id: blocks
        text: content.markedText !== "" && !content.plain ? content.markedText : content.text
        streaming: content.streaming
    }

    // Copies through a hidden text field (QML has no clipboard API in Qt 6.4).
    TextEdit {
        id: clipboardHelper
        visible: false
        function copyText(t) {
            text = t
            selectAll()
            copy()
            text = ""
        }
    }

    Repeater {
        id: blockRepeater
        model: blocks

        // Not a Loader choosing between two Components: Qt 6.4's Loader refuses a bound component
        // ("Cannot instantiate bound component outside its creation context"). One of two
        // Repeaters of 0 or 1 item makes the block's item instead, and the block is as tall.
        delegate: Item {
            id: block
            required property string kind
            required property string text
            required property string plainText
            required property string language
            required property bool closed
            required property int index
            /// The prose TextEdit or the code box (each with a lineCount), as a Loader's item.
            readonly property Item item: proseBlock.count > 0 ? proseBlock.itemAt(0)
                                         : codeBlock.count > 0 ? codeBlock.itemAt(0) : null

            width: content.width
            height: item ? item.height : 0

            Repeater {
                id: proseBlock
                model: block.kind === "code" ? 0 : 1
                TextEdit {
                    id: proseEdit
                    objectName: "messageProse"
                    width: block.width
                    readOnly: true
                    selectByMouse: true
                    activeFocusOnPress: false
                    wrapMode: TextEdit.Wrap
                    textFormat: content.plain ? TextEdit.PlainText : TextEdit.MarkdownText
                    text: block.text
                    font.pixelSize: Theme.messageFontSize
                    font.italic: content.italic
                    color: content.textColor
                    selectionColor: Theme.textSelectionColor
                    // The message came from a model or a server: a web or mail link is opened
                    // only once the user saw where it leads and chose Open (Main.qml); any
                    // other link (file:, javascript:, ...) never (LinkPolicy).
                    onLinkActivated: (link) => LinkPolicy.request(link)
                    Accessible.ignored: true

                    // Links in the bubble's link colour (per theme), tables with borders and padding.
                    MarkdownStyler {
                        objectName: "markdownStyler"
                        document: content.plain ? null : proseEdit.textDocument
                        linkColor: content.linkColor
                        tableBorderColor: content.tableBorderColor
                        draftColor: Theme.draftTextColor
                        tintDrafts: content.markedText !== ""
                    }
                }
            }

            Repeater {
                id: codeBlock
                model: block.kind === "code" ? 1 : 0
                Rectangle {
                    objectName: "codeBlock"
                    readonly property int lineCount: code.lineCount
                    width: block.width
                    height: codeColumn.implicitHeight + 8
                    radius: 6
                    color: Theme.codeBackgroundColor
                    border.color: Theme.borderColor

                    ColumnLayout {
                        id: codeColumn
                        x: 8
                        y: 4
                        width: parent.width - 16
                        spacing: 2

                        RowLayout {
                            Layout.fillWidth: true
                            Label {
                                Layout.fillWidth: true
                                text: block.language !== "" ? block.language : qsTr("code")
                                font.pixelSize: Theme.smallFontSize
                                color: Theme.mutedTextColor
                                elide: Text.ElideRight
                                Accessible.ignored: true
                            }
                            ToolButton {
                                id: copyButton
                                objectName: "copyCodeButton"
                                property bool copied: false
                                text: copied ? qsTr("Copied") : qsTr("Copy")
                                font.pixelSize: Theme.smallFontSize
                                implicitHeight: 28
                                focusPolicy: Qt.StrongFocus
                                Material.foreground: Theme.linkColor
                                onClicked: {
                                    clipboardHelper.copyText(block.plainText)
                                    copied = true
                                    copiedTimer.restart()
                                }
                                Accessible.name: block.language !== ""
                                                 ? qsTr("Copy the %1 code").arg(block.language)
                                                 : qsTr("Copy the code")
                                Timer {
                                    id: copiedTimer
                                    interval: 1500
                                    onTriggered: copyButton.copied = false
                                }
                            }
                        }
                        // Long lines scroll sideways rather than wrap.
                        Flickable {
                            Layout.fillWidth: true
                            Layout.preferredHeight: code.implicitHeight
                            contentWidth: code.implicitWidth
                            contentHeight: code.implicitHeight
                            flickableDirection: Flickable.HorizontalFlick
                            boundsBehavior: Flickable.StopAtBounds
                            clip: true
                            ScrollBar.horizontal: ScrollBar {
                                policy: ScrollBar.AsNeeded
                                Accessible.name: qsTr("Scroll the code sideways")
                            }
                            TextEdit {
                                id: code
                                objectName: "codeText"
                                readOnly: true
                                selectByMouse: true
                                activeFocusOnPress: false
                                textFormat: TextEdit.PlainText
                                text: block.text
                                font.family: Theme.monospaceFamily
                                font.pixelSize: Theme.messageFontSize - 1
                                color: Theme.assistantTextColor
                                selectionColor: Theme.textSelectionColor
                                Accessible.role: Accessible.StaticText
                                Accessible.name: qsTr("Code: %1").arg(block.plainText)

                                // Tints marked draft text and removes the marks.
                                MarkdownStyler {
                                    document: code.textDocument
                                    draftColor: Theme.draftTextColor
                                    tintDrafts: content.markedText !== ""
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
