// The saved conversations, pinned first, then newest first under date headings (Pinned, Today,
// Yesterday, Previous 7 days, Older): new, open (click), rename, pin, export, import, delete
// with undo, and the full-text search panel (Ctrl+F). Rows load a page at a time as the list
// scrolls (ConversationListModel::fetchMore).
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Dialogs
import QtQuick.Layouts
import PagedChat

Pane {
    id: sidebar

    /// The AppController (C++).
    required property AppController app
    /// The search button's glyph (U+1F50D LEFT-POINTING MAGNIFYING GLASS).
    readonly property string searchGlyph: "\uD83D\uDD0D"
    /// The import button's glyph (U+1F4E5 INBOX TRAY).
    readonly property string importGlyph: "\uD83D\uDCE5"
    /// The search panel replaces the list.
    property bool searching: false

    /// The search panel was opened (Ctrl+F): the window shows the sidebar if it was hidden.
    signal searchOpened()

    /// The QML module QtQuick.Dialogs' own (non-native) FileDialog imports; without it that
    /// dialog cannot load, and Qt 6.4 crashes in FileDialog.open() (a property for tests).
    property string fileDialogModule: "Qt.labs.folderlistmodel"
    property int fileDialogModuleFound: -1  // -1: not checked yet, 0: missing, 1: found

    /// Whether fileDialogModule can be imported (checked once).
    function fileDialogUsable() {
        if (sidebar.fileDialogModuleFound < 0) {
            try {
                const probe = Qt.createQmlObject("import QtQml\nimport " + sidebar.fileDialogModule
                                                 + "\nQtObject {}", sidebar, "fileDialogProbe")
                probe.destroy()
                sidebar.fileDialogModuleFound = 1
            } catch (e) {
                sidebar.fileDialogModuleFound = 0
            }
        }
        return sidebar.fileDialogModuleFound === 1
    }

    /// Opens a file dialog; when it cannot be shown (its QML implementation cannot load, e.g.
    /// a missing Qt module), says so in the window's error banner instead of doing nothing.
    function openDialog(dialog) {
        if (sidebar.fileDialogUsable())
            dialog.open()
        if (!dialog.visible)
            sidebar.app.errors.show(qsTr("The file dialog could not be opened (a Qt Quick Dialogs module is missing; on Debian install qml6-module-qt-labs-folderlistmodel)."))
    }

    /// Opens the import dialog (the sidebar's import button).
    function openImport() {
        importDialog.currentFolder = sidebar.app.history.documentsFolder()  // a fresh listing
        sidebar.openDialog(importDialog)
    }

    function openSearch() {
        sidebar.searching = true
        sidebar.searchOpened()
        // Qt.callLater is a method: Qt 6.4's qmllint takes it for a QJSValue property (type).
        Qt.callLater(searchPanel.focusField)  // qmllint disable type
    }

    padding: 0
    Accessible.name: qsTr("Conversations")
    background: Rectangle {
        color: Theme.surfaceColor
        radius: Theme.radius
        border.color: Theme.borderColor
    }

    Shortcut {
        // Qt 6.4's qmllint does not resolve the StandardKey enum (QKeySequence's, in QtQuick).
        sequences: [StandardKey.Find]  // qmllint disable unqualified
        onActivated: sidebar.openSearch()
    }

    FileDialog {
        id: exportDialog
        objectName: "exportDialog"
        property double conversationId: 0
        property string format: "markdown"
        readonly property bool isJson: format === "json"
        title: isJson ? qsTr("Export conversation as JSON") : qsTr("Export conversation as Markdown")
        fileMode: FileDialog.SaveFile
        acceptLabel: qsTr("Save")
        nameFilters: isJson ? [qsTr("JSON files (*.json)")] : [qsTr("Markdown files (*.md)")]
        defaultSuffix: isJson ? "json" : "md"
        onAccepted: sidebar.app.history.exportConversation(conversationId, selectedFile, format)
    }
    FileDialog {
        id: importDialog
        objectName: "importDialog"
        title: qsTr("Import a conversation (PagedChat JSON)")
        fileMode: FileDialog.OpenFile
        acceptLabel: qsTr("Import")
        nameFilters: [qsTr("JSON files (*.json)"), qsTr("All files (*)")]
        onAccepted: sidebar.app.history.importConversation(selectedFile)
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 12
        spacing: 8

        // The title and the buttons share a row when they fit; otherwise (narrow sidebar, large
        // font, longer languages) the buttons go below the title instead of covering it.
        GridLayout {
            id: header
            objectName: "sidebarHeader"
            Layout.fillWidth: true
            columns: headerTitle.implicitWidth + headerButtons.implicitWidth + 8 > width ? 1 : 2
            columnSpacing: 8
            rowSpacing: 4
            Label {
                id: headerTitle
                objectName: "sidebarTitle"
                text: qsTr("Chats")
                elide: Text.ElideRight
                font.pixelSize: Theme.titleFontSize
                font.weight: Font.Medium
                color: Theme.assistantTextColor
                Layout.fillWidth: true
                Accessible.name: text
            }
            RowLayout {
                id: headerButtons
                Layout.alignment: Qt.AlignRight
                spacing: 0
                ToolButton {
                    FocusFrame {}
                    objectName: "searchButton"
                    text: sidebar.searchGlyph
                    font.pixelSize: 16
                    checkable: true
                    checked: sidebar.searching
                    onClicked: sidebar.searching ? sidebar.searching = false : sidebar.openSearch()
                    Accessible.name: qsTr("Search chats")
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Search all chats (Ctrl+F)")
                }
                ToolButton {
                    FocusFrame {}
                    objectName: "importButton"
                    text: sidebar.importGlyph
                    font.pixelSize: 16
                    onClicked: sidebar.openImport()
                    Accessible.name: qsTr("Import conversation")
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Import a conversation from a JSON file")
                }
                Button {
                    FocusFrame {}
                    objectName: "newConversationButton"
                    text: qsTr("New chat")
                    highlighted: true
                    onClicked: sidebar.app.history.newConversation()
                    Accessible.name: qsTr("New conversation")
                }
            }
        }

        SearchPanel {
            id: searchPanel
            objectName: "searchPanel"
            visible: sidebar.searching
            Layout.fillWidth: true
            Layout.fillHeight: true
            app: sidebar.app
            onCloseRequested: sidebar.searching = false
        }

        ConversationListView {
            id: list
            objectName: "conversationListView"
            visible: !sidebar.searching
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 2
            reuseItems: true
            model: sidebar.app.conversations
            Accessible.name: qsTr("Conversation list")
            Accessible.role: Accessible.List
            ScrollBar.vertical: ScrollBar { Accessible.name: qsTr("Scroll conversations") }

            delegate: ConversationDelegate {
                width: ListView.view.width
                // Qt 6.4's qmllint knows no qint64 (qlonglong) type to check the binding against.
                currentConversationId: sidebar.app.history.currentConversationId  // qmllint disable type
                onOpenRequested: (id) => sidebar.app.history.openConversation(id)
                onDeleteRequested: (id) => sidebar.app.history.deleteConversation(id)
                onRenameRequested: (id, title) => sidebar.app.history.renameConversation(id, title)
                onPinRequested: (id, pinned) => sidebar.app.history.setPinned(id, pinned)
                onExportRequested: (id, title, format) => {
                    exportDialog.conversationId = id
                    exportDialog.format = format
                    const safe = title.replace(/[\\/:*?"<>|]/g, "_").trim() || "conversation"
                    const folder = sidebar.app.history.documentsFolder()
                    exportDialog.currentFolder = folder
                    exportDialog.selectedFile = folder + "/" + encodeURIComponent(safe)
                            + (format === "json" ? ".json" : ".md")
                    sidebar.openDialog(exportDialog)
                }
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

        // "Conversation deleted — Undo": shown while the deletion can be undone.
        Rectangle {
            objectName: "undoDeleteBanner"
            Layout.fillWidth: true
            visible: sidebar.app.history.undoDeleteTitle !== ""
            implicitHeight: undoRow.implicitHeight + 8
            radius: 8
            color: "#323232"
            RowLayout {
                id: undoRow
                anchors.fill: parent
                anchors.leftMargin: 10
                anchors.rightMargin: 4
                Label {
                    Layout.fillWidth: true
                    objectName: "undoDeleteLabel"
                    // Several deletions can be pending: Undo brings back the most recent one.
                    text: sidebar.app.history.undoDeleteCount > 1
                          ? qsTr("Deleted \u201c%1\u201d (+%2 more)").arg(sidebar.app.history.undoDeleteTitle)
                                .arg(sidebar.app.history.undoDeleteCount - 1)
                          : qsTr("Deleted \u201c%1\u201d").arg(sidebar.app.history.undoDeleteTitle)
                    textFormat: Text.PlainText  // a title is never markup
                    elide: Text.ElideRight
                    color: "white"
                    Accessible.role: Accessible.AlertMessage
                    Accessible.name: text
                }
                Button {
                    objectName: "undoDeleteButton"
                    text: qsTr("Undo")
                    flat: true
                    Material.foreground: "#ffcc80"
                    onClicked: sidebar.app.history.undoDelete()
                    Accessible.name: qsTr("Undo delete")
                }
            }
        }
    }
}
