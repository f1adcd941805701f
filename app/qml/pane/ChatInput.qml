// The message box of a pane: Enter sends, Shift+Enter adds a line, the button sends or stops.
// Pictures for models that read them: the attach button, a drop of image files, or a paste; they
// wait above the box (each with a button that removes it) and go with the next message.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat
import "ComposingInput.js" as ComposingInput

ColumnLayout {
    id: input

    /// The pane's PaneState (C++); null for a moment when its pane closes (ChatPane.paneState).
    required property PaneState paneState
    /// The paneState is generating a reply (the button stops it).
    readonly property bool busy: paneState !== null && paneState.busy
    property int paneNumber: 1
    property bool canSend: true
    /// The PaneListModel and BlindCompare (C++), for "send to all panes"; may be null (tests).
    property PaneListModel panes: null
    property BlindCompare compare: null
    /// Enter sends to every pane (the toggle below the box, or blind compare mode).
    readonly property bool sendsToAll: panes !== null && panes.count > 1
                                       && (panes.sendToAllEnabled || (compare !== null && compare.enabled))

    signal inputFocused()

    /// The attach button's glyph (U+1F4CE PAPERCLIP).
    readonly property string attachGlyph: "\uD83D\uDCCE"
    /// Pictures wait for the next message.
    readonly property bool hasImages: paneState !== null && paneState.pendingImages.length > 0

    /// The QML module QtQuick.Dialogs' own FileDialog imports (ConversationList.qml explains).
    property int fileDialogModuleFound: -1
    function openImageDialog() {
        if (input.fileDialogModuleFound < 0) {
            try {
                Qt.createQmlObject("import QtQml\nimport Qt.labs.folderlistmodel\nQtObject {}", input,
                                   "fileDialogProbe").destroy()
                input.fileDialogModuleFound = 1
            } catch (e) {
                input.fileDialogModuleFound = 0
            }
        }
        if (input.fileDialogModuleFound === 1)
            imageDialog.open()
        if (!imageDialog.visible)
            input.paneState.showError(qsTr("The file dialog could not be opened (a Qt Quick Dialogs module is missing; on Debian install qml6-module-qt-labs-folderlistmodel)."))
    }

    /// What Enter does: the draft is already in paneState.inputText.
    function send() {
        if (!input.canSend)
            return
        if (input.sendsToAll) {
            if (input.panes.sendToAll(input.paneState.inputText, input.paneState) > 0)
                input.paneState.inputText = ""
        } else {
            input.paneState.send()
        }
    }
    /// Gives the text box the keyboard focus.
    function focusInput() { textArea.forceActiveFocus() }

    spacing: 4

    FileDialog {
        id: imageDialog
        objectName: "imageDialog"
        title: qsTr("Attach images")
        fileMode: FileDialog.OpenFiles
        nameFilters: [qsTr("Images (*.png *.jpg *.jpeg *.webp)"), qsTr("All files (*)")]
        onAccepted: {
            for (let i = 0; i < selectedFiles.length; ++i)
                input.paneState.attachImageFile(selectedFiles[i])
        }
    }

    Flow {
        objectName: "pendingImages"
        Layout.fillWidth: true
        visible: input.hasImages
        spacing: 6
        Repeater {
            model: input.paneState !== null ? input.paneState.pendingImages : []
            Item {
                id: pendingImage
                required property var modelData
                required property int index
                width: thumb.width
                height: thumb.height
                AttachmentImage {
                    id: thumb
                    bytes: pendingImage.modelData.bytes
                    maxSide: 64
                    width: implicitWidth
                    height: implicitHeight
                    Accessible.role: Accessible.Graphic
                    Accessible.name: qsTr("Attached image, %1 by %2 pixels").arg(pendingImage.modelData.width)
                                                                           .arg(pendingImage.modelData.height)
                }
                ToolButton {
                    objectName: "removePendingImage"
                    anchors.top: parent.top
                    anchors.right: parent.right
                    width: 24
                    height: 24
                    padding: 0
                    text: "\u00d7"
                    onClicked: input.paneState.removePendingImage(pendingImage.index)
                    Accessible.name: qsTr("Remove image %1").arg(pendingImage.index + 1)
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Remove this image")
                }
            }
        }
    }
    Label {
        objectName: "imagesRefusedNote"
        Layout.fillWidth: true
        visible: input.hasImages && !input.paneState.imagesAccepted
        text: qsTr("This model cannot read images: remove them to send.")
        color: Theme.errorColor
        font.pixelSize: Theme.smallFontSize
        wrapMode: Text.Wrap
    }

    Rectangle {
        Layout.fillWidth: true
        implicitHeight: composer.implicitHeight + 12
        radius: 14
        color: Theme.assistantBubbleColor
        border.color: textArea.activeFocus ? Material.accentColor : Theme.borderColor
        border.width: textArea.activeFocus ? 2 : 1

        // Image files dropped on the box are attached (models that read images).
        DropArea {
            anchors.fill: parent
            onEntered: (drag) => {
                drag.accepted = drag.hasUrls && input.paneState !== null && input.paneState.imagesAccepted
            }
            onDropped: (drop) => {
                for (let i = 0; i < drop.urls.length; ++i)
                    input.paneState.attachImageFile(drop.urls[i])
                drop.accept()
            }
        }

        RowLayout {
            id: composer
            anchors.fill: parent
            anchors.margins: 6
            anchors.leftMargin: 10
            spacing: 8

            // Only for models that read images (a text model's pane keeps its whole width for text).
            ToolButton {
                objectName: "attachButton"
                text: input.attachGlyph
                visible: input.paneState !== null && input.paneState.imagesAccepted
                enabled: !input.busy
                padding: 2
                implicitWidth: 32
                Layout.alignment: Qt.AlignBottom
                onClicked: input.openImageDialog()
                Accessible.name: qsTr("Attach an image in pane %1").arg(input.paneNumber)
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Attach an image (PNG, JPEG or WebP)")
            }

            ScrollView {
                id: inputScroll
                Layout.fillWidth: true
                Layout.preferredWidth: 0  // what the Send button leaves, whatever the placeholder
                Layout.preferredHeight: Math.min(Math.max(textArea.implicitHeight, 40), 160)
                Accessible.name: qsTr("Message input area")

                TextArea {
                    id: textArea
                    objectName: "inputArea"
                    text: input.paneState ? input.paneState.inputText : ""
                    onTextChanged: if (input.paneState) input.paneState.inputText = text
                    // The short form in a narrow pane, rather than a cut one.
                    // (None at all where even the short form would be cut: a very narrow pane.)
                    placeholderText: placeholderMetrics.advanceWidth(qsTr("Type a message…"))
                                     <= inputScroll.width - leftPadding - rightPadding
                                     ? qsTr("Type a message…")
                                     : placeholderMetrics.advanceWidth(qsTr("Message…"))
                                       <= inputScroll.width - leftPadding - rightPadding ? qsTr("Message…") : ""
                    FontMetrics {
                        id: placeholderMetrics
                        font: textArea.font
                    }
                    wrapMode: TextEdit.Wrap
                    font.pixelSize: Theme.messageFontSize
                    topPadding: 8
                    bottomPadding: 8
                    leftPadding: 4
                    rightPadding: 4
                    background: null
                    Accessible.name: qsTr("Message for pane %1").arg(input.paneNumber)
                    Accessible.description: qsTr("Enter sends, Shift+Enter adds a line")
                    onActiveFocusChanged: if (activeFocus) input.inputFocused()
                    // Tab moves on (keyboard-only use) rather than typing a tab character.
                    Keys.onTabPressed: (event) => { event.accepted = true; nextItemInFocusChain(true).forceActiveFocus(Qt.TabFocusReason) }
                    Keys.onBacktabPressed: (event) => { event.accepted = true; nextItemInFocusChain(false).forceActiveFocus(Qt.BacktabFocusReason) }
                    Keys.onPressed: (event) => {
                        // A picture on the clipboard is attached (models that read images); text pastes as text.
                        if (event.matches(StandardKey.Paste) && input.paneState !== null  // qmllint disable unqualified
                                && input.paneState.imagesAccepted && ClipboardImage.hasImage()) {
                            event.accepted = true
                            input.paneState.attachImageData(ClipboardImage.imageData())
                            return
                        }
                        // A picture alone on the clipboard, for a model that reads none: the pane says
                        // why it is not attached (the paste would otherwise do nothing).
                        if (event.matches(StandardKey.Paste) && input.paneState !== null  // qmllint disable unqualified
                                && !input.paneState.imagesAccepted && ClipboardImage.hasImage() && !textArea.canPaste) {
                            event.accepted = true
                            input.paneState.attachImageData(ClipboardImage.imageData())
                            return
                        }
                        if (event.key !== Qt.Key_Return && event.key !== Qt.Key_Enter)
                            return
                        // Korean (and any composing) input: the syllable being composed is not in
                        // `text` yet. Enter commits it first, so that the whole text goes once.
                        ComposingInput.commit(textArea)
                        if (event.modifiers & Qt.ShiftModifier)
                            return  // Shift+Enter: a new line, after the committed syllable
                        event.accepted = true
                        input.send()
                    }
                }
            }

            Button {
                FocusFrame {}
                objectName: input.busy ? "stopButton" : "sendButton"
                text: input.busy ? qsTr("Stop") : qsTr("Send")
                highlighted: true
                Material.accent: input.busy ? Theme.errorColor : Theme.userBubbleColor
                enabled: input.busy || (input.canSend && input.paneState !== null
                                        && (input.paneState.inputText.trim() !== "" || input.hasImages)
                                        && !(input.hasImages && !input.paneState.imagesAccepted))
                Layout.alignment: Qt.AlignBottom
                topInset: 0
                bottomInset: 0
                onClicked: input.busy ? input.paneState.stop() : input.send()
                Accessible.name: input.busy ? qsTr("Stop generating in pane %1").arg(input.paneNumber)
                                            : input.sendsToAll ? qsTr("Send message to all panes")
                                            : qsTr("Send message in pane %1").arg(input.paneNumber)
            }
        }
    }

    // "Send to all panes" on the left, the key hint in what it leaves on the right. Anchors and an
    // explicit width, not a RowLayout: Qt 6.4's layout kept the hint's old width when the box
    // appeared (a second pane), and the two were drawn over each other.
    Item {
        id: optionsRow
        Layout.fillWidth: true
        implicitHeight: 28

        CheckBox {
            id: sendToAllBox
            objectName: "sendToAllToggle"
            anchors.left: parent.left
            anchors.verticalCenter: parent.verticalCenter
            visible: input.panes !== null && input.panes.count > 1
            enabled: input.compare === null || !input.compare.enabled
            checked: input.panes !== null && (input.panes.sendToAllEnabled
                                              || (input.compare !== null && input.compare.enabled))
            text: qsTr("Send to all panes")
            font.pixelSize: Theme.smallFontSize
            padding: 0
            implicitHeight: 28
            onToggled: input.panes.sendToAllEnabled = checked
            Accessible.name: qsTr("Send to all panes")
            Accessible.description: qsTr("Enter sends the message to every pane at once")
        }
        FittingLabel {
            objectName: "keyHint"
            anchors.right: parent.right
            anchors.rightMargin: 4
            anchors.verticalCenter: parent.verticalCenter
            width: Math.max(0, optionsRow.width - 4 - (sendToAllBox.visible ? sendToAllBox.width + 8 : 0))
            horizontalAlignment: Text.AlignRight
            texts: [qsTr("Enter to send · Shift+Enter for a new line"), qsTr("Shift+Enter: new line")]
            font.pixelSize: Theme.smallFontSize
            color: Theme.mutedTextColor
        }
    }
}
