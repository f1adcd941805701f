// Who answers a pane: the model loaded in PagedChat, another model on this computer (loaded beside
// it while memory allows: LocalModels), or an OpenAI-compatible server (vLLM, llama-server,
// Ollama, another PagedChat) by base URL, API key (kept in the system keychain) and model. Part of
// the pane's settings popup; apply() is called by its Apply button.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Dialogs
import QtQuick.Layouts
import PagedChat

ColumnLayout {
    id: section

    /// The pane's PaneState and index, and the app's PaneEndpoints (C++).
    property PaneState paneState: null
    property int paneIndex: 0
    property PaneEndpoints endpoints: null
    /// The app's LocalModels (C++); null: no choice of another local model.
    property LocalModels localModels: null
    /// localModels.choices() when the section was loaded: [{path, name, loaded}].
    property var localChoices: []
    /// Why the last Apply or model list failed ("" = none).
    property string error: ""
    property var models: []
    property bool keyStored: false
    property bool forgetKey: false
    /// What a base URL looks like (vLLM's default port); a URL, not prose: not translated.
    readonly property string exampleUrl: "http://localhost:8000/v1"

    /// Copies the pane's backend into the fields.
    function load() {
        error = ""
        forgetKey = false
        keyStored = false
        keyField.text = ""
        remoteButton.checked = paneState !== null && paneState.remote
        const otherPath = localModels && paneState && !paneState.remote ? localModels.paneModelPath(paneIndex) : ""
        otherButton.checked = otherPath !== ""
        localButton.checked = !remoteButton.checked && !otherButton.checked
        localChoices = localModels ? localModels.choices() : []
        otherBox.editText = otherPath !== "" ? otherPath : (localChoices.length > 0 ? localChoices[0].path : "")
        urlField.text = paneState && paneState.remote ? paneState.endpointUrl : ""
        models = paneState && paneState.remote && paneState.endpointModel !== "" ? [paneState.endpointModel] : []
        modelBox.editText = paneState && paneState.remote ? paneState.endpointModel : ""
        if (endpoints && urlField.text !== "")
            endpoints.checkStoredKey(urlField.text)
    }

    /// Applies the choice; returns true when it was taken.
    function apply() {
        if (!endpoints || !paneState)
            return true
        if (otherButton.checked && localModels) {
            const path = otherBox.editText.trim()
            if (path === "") {
                error = qsTr("Choose a model file or folder.")
                return false
            }
            error = localModels.usePaneModel(paneIndex, path)
            return error === ""
        }
        if (!remoteButton.checked) {
            endpoints.useLocal(paneIndex)
            error = ""
            return true
        }
        const setKey = keyField.text !== "" || forgetKey
        error = endpoints.useRemote(paneIndex, urlField.text, modelBox.editText.trim(), keyField.text, setKey)
        return error === ""
    }

    spacing: 4

    Label {
        text: qsTr("Answered by")
        font.pixelSize: Theme.smallFontSize
        color: Theme.mutedTextColor
    }
    ButtonGroup { id: backendGroup }
    RadioButton {
        id: localButton
        objectName: "backendLocal"
        Layout.fillWidth: true  // the section's width, not a width measured once (it stayed cut)
        text: qsTr("The model loaded in PagedChat")
        ButtonGroup.group: backendGroup
        Accessible.name: text
    }
    RadioButton {
        id: otherButton
        objectName: "backendOtherLocal"
        Layout.fillWidth: true
        visible: section.localModels !== null
        text: qsTr("Another model on this computer")
        ButtonGroup.group: backendGroup
        Accessible.name: text
        Accessible.description: otherHint.text
    }
    ColumnLayout {
        Layout.fillWidth: true
        Layout.leftMargin: 24
        visible: otherButton.checked
        spacing: 4
        Label {
            id: otherHint
            Layout.fillWidth: true
            text: qsTr("Loaded beside the main model while memory allows, with its own batch and KV cache; freed when no pane uses it.")
            wrapMode: Text.Wrap
            font.pixelSize: Theme.smallFontSize
            color: Theme.mutedTextColor
        }
        RowLayout {
            Layout.fillWidth: true
            ComboBox {
                id: otherBox
                objectName: "otherLocalModel"
                Layout.fillWidth: true
                editable: true
                model: section.localChoices
                textRole: "path"
                displayText: editText
                Accessible.name: qsTr("Model file or folder")
                ToolTip.visible: hovered && editText !== ""
                ToolTip.text: editText
                delegate: ItemDelegate {
                    required property var modelData
                    required property int index
                    width: ListView.view ? ListView.view.width : implicitWidth
                    text: modelData.name + (modelData.loaded ? qsTr(" (loaded)") : "")
                    highlighted: otherBox.highlightedIndex === index
                    ToolTip.visible: hovered
                    ToolTip.text: modelData.path
                }
            }
            Button {
                objectName: "otherLocalBrowse"
                Layout.minimumWidth: implicitWidth  // the path box gives way, not the button's text
                text: qsTr("Browse…")
                onClicked: otherFileDialog.open()
                Accessible.name: qsTr("Choose a model file")
            }
        }
    }
    FileDialog {
        id: otherFileDialog
        title: qsTr("Choose a model for this pane")
        fileMode: FileDialog.OpenFile
        nameFilters: [qsTr("Model files (*.gguf *.bin config.json *.safetensors)"), qsTr("All files (*)")]
        onAccepted: if (section.localModels) otherBox.editText = section.localModels.modelPathOfUrl(selectedFile)
    }
    RadioButton {
        id: remoteButton
        objectName: "backendRemote"
        Layout.fillWidth: true  // the section's width, not a width measured once (it stayed cut)
        text: qsTr("An OpenAI-compatible server")
        ButtonGroup.group: backendGroup
        Accessible.name: text
        Accessible.description: serverKinds.text
    }
    ColumnLayout {
        Layout.fillWidth: true
        Layout.leftMargin: 24
        visible: remoteButton.checked
        spacing: 4
        Label {
            id: serverKinds
            Layout.fillWidth: true
            text: qsTr("vLLM, llama-server, Ollama, another PagedChat: its base URL, the part before /chat/completions")
            wrapMode: Text.Wrap
            font.pixelSize: Theme.smallFontSize
            color: Theme.mutedTextColor
        }

        TextField {
            id: urlField
            objectName: "endpointUrl"
            Layout.fillWidth: true
            selectByMouse: true
            placeholderText: section.exampleUrl
            inputMethodHints: Qt.ImhUrlCharactersOnly
            Accessible.name: qsTr("Server base URL")
            onEditingFinished: if (section.endpoints && text !== "") section.endpoints.checkStoredKey(text)
        }
        RowLayout {
            Layout.fillWidth: true
            TextField {
                id: keyField
                objectName: "endpointKey"
                Layout.fillWidth: true
                echoMode: TextInput.Password
                selectByMouse: true
                placeholderText: section.keyStored && !section.forgetKey
                                 ? qsTr("Stored in the system keychain (type to replace)")
                                 : qsTr("API key (optional)")
                Accessible.name: qsTr("API key")
            }
            Button {
                objectName: "forgetKeyButton"
                visible: section.keyStored && !section.forgetKey
                flat: true
                text: qsTr("Forget")
                onClicked: section.forgetKey = true
                Accessible.name: qsTr("Forget the stored API key")
            }
        }
        // An API key over plain http to another machine: said before Apply, while it can be changed.
        Label {
            objectName: "endpointKeyWarning"
            Layout.fillWidth: true
            visible: text !== ""
            text: section.endpoints && (keyField.text !== "" || (section.keyStored && !section.forgetKey))
                  ? section.endpoints.plainTextKeyWarning(urlField.text) : ""
            color: Theme.warningColor
            wrapMode: Text.Wrap
            font.pixelSize: Theme.smallFontSize
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }
        RowLayout {
            Layout.fillWidth: true
            ComboBox {
                id: modelBox
                objectName: "endpointModel"
                Layout.fillWidth: true
                editable: true
                model: section.models
                Accessible.name: qsTr("Model")
            }
            Button {
                objectName: "listModelsButton"
                text: qsTr("List models")
                enabled: urlField.text !== ""
                onClicked: {
                    section.error = ""
                    section.endpoints.listModels(urlField.text, keyField.text)
                }
                Accessible.name: qsTr("Ask the server for its models")
            }
        }
    }
    Label {
        objectName: "backendError"
        Layout.fillWidth: true
        visible: text !== ""
        // The keychain's trouble concerns the panes that use a server: said where one is chosen.
        text: section.error !== "" ? section.error
              : section.endpoints && remoteButton.checked ? section.endpoints.keychainError : ""
        color: Theme.errorColor
        wrapMode: Text.Wrap
        font.pixelSize: Theme.smallFontSize
        Accessible.role: Accessible.AlertMessage
        Accessible.name: text
    }

    Connections {
        target: section.endpoints
        function onModelsListed(url, models, error) {
            if (url !== urlField.text)
                return
            section.models = models
            section.error = error
            if (error === "" && modelBox.editText === "" && models.length > 0)
                modelBox.editText = models[0]
        }
        function onKeyKnown(url, stored) {
            if (url === urlField.text)
                section.keyStored = stored
        }
    }
}
