// The model picker: the current model with its load progress or error, open a model file or
// folder, the recent models (missing ones shown as such, removable), and unload.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Dialogs
import QtQuick.Layouts
import PagedChat

Dialog {
    id: picker

    /// The AppController (C++): engine, recentModels, openModel(), unloadModel().
    required property AppController app
    readonly property LocalChatBackend engine: app.engine

    /// Opens the file dialog for a model file (.gguf, llama2.c .bin).
    function chooseFile() { fileDialog.open() }
    /// Opens the folder dialog (Hugging Face folder, llama2.c folder).
    function chooseFolder() { folderDialog.open() }
    /// The "Download…" button: the window opens the download dialog.
    signal downloadRequested()
    /// A model was chosen here: the picker closes once it has loaded (and stays, with the
    /// reason, when it does not).
    property bool closeWhenLoaded: false
    /// Loads `path` (a recent entry), closing the picker once it has loaded.
    function load(path) {
        picker.closeWhenLoaded = true
        picker.app.models.openModel(path)
    }
    function loadUrl(url) {
        picker.closeWhenLoaded = true
        picker.app.models.openModelUrl(url)
    }
    Connections {
        target: picker.engine
        function onModelLoadFinished(ok) {
            if (ok && picker.closeWhenLoaded && picker.visible)
                picker.close()
            picker.closeWhenLoaded = false
        }
    }

    objectName: "modelPicker"
    title: qsTr("Model")
    modal: true
    // Our own Close button, not standardButtons: Qt's label would need Qt's own catalogues,
    // which Debian ships apart (qt6-translations-l10n) and a user may not have.
    footer: DialogButtonBox {
        Button {
            objectName: "closeModelPickerButton"
            text: qsTr("Close")
            flat: true
            // Qt 6.4's qmllint does not find DialogButtonBox's ButtonRole enum values (type).
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole  // qmllint disable type
            Accessible.name: qsTr("Close the model picker")
        }
    }
    width: Math.min(parent ? parent.width - 80 : 640, 640)
    anchors.centerIn: parent
    // A plain surface (the style's elevation shadow needs shader effects some renderers lack).
    background: Rectangle {
        color: Theme.surfaceColor
        radius: Theme.radius
        border.color: Theme.borderColor
    }
    onAboutToShow: {
        picker.closeWhenLoaded = false
        picker.app.models.recentModels.refresh()
    }

    FileDialog {
        id: fileDialog
        objectName: "modelFileDialog"
        title: qsTr("Open a model file")
        fileMode: FileDialog.OpenFile
        // A Hugging Face folder opens through its config.json or weights as well.
        nameFilters: [qsTr("Model files (*.gguf *.bin config.json *.safetensors)"), qsTr("All files (*)")]
        currentFolder: picker.app.models.recentModels.lastFolder
        onAccepted: picker.loadUrl(selectedFile)
    }
    FolderDialog {
        id: folderDialog
        objectName: "modelFolderDialog"
        title: qsTr("Open a model folder")
        currentFolder: picker.app.models.recentModels.lastFolder
        onAccepted: picker.loadUrl(selectedFolder)
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 10

        Label {
            objectName: "modelState"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.weight: Font.Medium
            text: picker.engine.loading ? qsTr("Loading %1…").arg(picker.engine.modelPath)
                : picker.engine.loaded ? qsTr("Loaded: %1").arg(picker.engine.modelPath)
                : picker.engine.loadError !== "" ? qsTr("Not loaded: %1").arg(picker.engine.modelPath)
                : qsTr("No model is loaded.")
            Accessible.name: text
        }
        ProgressBar {
            objectName: "modelLoadProgress"
            Layout.fillWidth: true
            // Its room is kept while nothing loads: the dialog does not shift when a load starts.
            opacity: picker.engine.loading ? 1 : 0
            from: 0
            to: 1
            value: picker.engine.loadProgress
            Accessible.name: qsTr("Model load progress")
            Accessible.description: Math.round(value * 100) + "%"
        }
        Label {
            objectName: "modelLoadError"
            Layout.fillWidth: true
            visible: text !== ""
            text: picker.app.models.loadError
            color: Theme.errorColor
            wrapMode: Text.Wrap
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            Button {
                objectName: "openModelFile"
                text: qsTr("Open file…")
                onClicked: picker.chooseFile()
                Accessible.name: qsTr("Open a model file")
            }
            Button {
                objectName: "openModelFolder"
                text: qsTr("Open folder…")
                onClicked: picker.chooseFolder()
                Accessible.name: qsTr("Open a model folder")
            }
            Button {
                objectName: "downloadModel"
                text: qsTr("Download…")
                onClicked: picker.downloadRequested()
                Accessible.name: qsTr("Download a model from Hugging Face")
            }
            Item { Layout.fillWidth: true }
            Button {
                objectName: "unloadModel"
                text: qsTr("Unload")
                enabled: picker.engine.loaded || picker.engine.loading
                onClicked: picker.app.models.unloadModel()
                Accessible.name: qsTr("Unload the model")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Stop every reply and free the model's memory")
            }
        }

        RowLayout {
            Layout.fillWidth: true
            Label {
                text: qsTr("Recent models")
                font.weight: Font.Medium
                Layout.fillWidth: true
                Accessible.name: text
            }
            Button {
                flat: true
                text: qsTr("Remove missing")
                onClicked: picker.app.models.recentModels.removeMissing()
                Accessible.name: qsTr("Remove missing models from the list")
            }
        }

        ListView {
            id: recentList
            objectName: "recentModels"
            Layout.fillWidth: true
            // A fixed height: the dialog stays put while entries come and go. In a low window
            // (720x480) less, so that the dialog with its buttons and Korean's taller lines fits.
            Layout.preferredHeight: picker.parent ? Math.max(120, Math.min(260, picker.parent.height - 300)) : 260
            clip: true
            model: picker.app.models.recentModels
            Accessible.name: qsTr("Recent models")
            Accessible.role: Accessible.List
            ScrollBar.vertical: ScrollBar {}

            delegate: ItemDelegate {
                id: entry
                required property string path
                required property string name
                required property bool exists
                required property bool isFolder
                required property string details
                required property bool supported
                width: ListView.view.width
                enabled: true
                onClicked: if (entry.exists) picker.load(entry.path)
                Accessible.name: entry.exists ? qsTr("Load %1").arg(entry.name)
                                              : qsTr("%1 (missing)").arg(entry.name)
                Accessible.description: entry.path

                contentItem: RowLayout {
                    spacing: 8
                    ColumnLayout {
                        Layout.fillWidth: true
                        spacing: 0
                        Label {
                            Layout.fillWidth: true
                            text: entry.exists ? entry.name : qsTr("%1 — missing").arg(entry.name)
                            color: entry.exists ? Theme.assistantTextColor : Theme.errorColor
                            font.strikeout: !entry.exists
                            elide: Text.ElideRight
                        }
                        Label {
                            objectName: "recentModelDetails"
                            Layout.fillWidth: true
                            visible: entry.exists
                            // Size, quantization, parameters, context, chat template.
                            text: entry.details !== "" ? entry.details : "…"
                            color: entry.supported ? Theme.assistantTextColor : Theme.errorColor
                            font.pixelSize: Theme.smallFontSize
                            wrapMode: Text.Wrap
                        }
                        Label {
                            Layout.fillWidth: true
                            text: entry.path
                            color: Theme.mutedTextColor
                            font.pixelSize: 11
                            elide: Text.ElideMiddle
                        }
                    }
                    ToolButton {
                        text: "\u2715"
                        onClicked: picker.app.models.recentModels.remove(entry.path)
                        Accessible.name: qsTr("Remove %1 from the list").arg(entry.name)
                        ToolTip.visible: hovered
                        ToolTip.text: Accessible.name
                    }
                }
            }

            Label {
                anchors.centerIn: parent
                visible: recentList.count === 0
                text: qsTr("No recent models yet.")
                color: Theme.mutedTextColor
            }
        }
    }
}
