// One chat pane: header, the conversation's messages, and the input box.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

Pane {
    id: pane

    /// The pane's PaneState (C++), from the PaneListModel's "paneState" role. Null for a moment
    /// when the pane closes: C++ deletes the paneState while Main.qml's Repeater (its components
    /// bound) still holds this pane with its bindings live, so they read it only when not null.
    required property PaneState paneState
    required property int index
    /// The PaneListModel and LocalChatBackend (C++).
    required property PaneListModel panes
    required property LocalChatBackend engine
    /// The BlindCompare (C++); null outside the main window (tests).
    property BlindCompare compare: null
    /// The PaneEndpoints (C++): a remote server instead of the local model; null in tests.
    property PaneEndpoints endpoints: null
    /// The LocalModels (C++): another model on this computer; null in tests.
    property LocalModels localModels: null
    /// The local model that answers: the main one, or another the pane's settings chose.
    readonly property LocalChatBackend localEngine: paneState !== null && paneState.localEngine !== null
                                                    ? paneState.localEngine : engine

    readonly property bool blind: compare !== null && compare.hidden
    /// The pane's settings popup (PaneSettingsPopup).
    readonly property alias settingsPopup: settingsPopup
    /// Opens the pane's settings (the header's gear button).
    function openSettings() { settingsPopup.open() }
    /// Puts the keyboard focus in the pane's input box.
    function focusInput() { chatInput.focusInput() }

    readonly property bool isCurrent: panes.currentIndex === index
    /// Something can answer: a remote endpoint, or a model loaded (or loading).
    readonly property bool canAnswer: (paneState !== null && paneState.remote) || localEngine.loaded
                                      || localEngine.loading

    function makeCurrent() { panes.currentIndex = index }
    /// The welcome's buttons (no model yet): the download dialog, the model picker.
    signal downloadRequested()
    signal modelPickerRequested()

    objectName: "chatPane" + index
    padding: 0
    Accessible.name: qsTr("Chat pane %1").arg(index + 1)
    background: Rectangle {
        color: Theme.surfaceColor
        radius: Theme.radius
        border.color: pane.isCurrent ? Material.accentColor : Theme.borderColor
        border.width: pane.isCurrent ? 2 : 1
    }

    TapHandler {
        onTapped: pane.makeCurrent()
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 2
        spacing: 0

        PaneHeader {
            Layout.fillWidth: true
            title: pane.paneState && pane.paneState.title !== "" ? pane.paneState.title : qsTr("New chat")
            busy: pane.paneState !== null && pane.paneState.busy
            paneNumber: pane.index + 1
            canClose: pane.panes.canClosePane
            paneState: pane.paneState
            // The labels property notifies on every reshuffle: the header always shows the stored label.
            compareLabel: pane.compare !== null && pane.compare.enabled ? (pane.compare.labels[pane.index] || "") : ""
            settingsHidden: pane.blind
            onCloseRequested: pane.panes.closePane(pane.index)
            onSettingsRequested: pane.openSettings()
        }

        MessageList {
            Layout.fillWidth: true
            Layout.fillHeight: true
            model: pane.paneState ? pane.paneState.messages : null
            paneState: pane.paneState
            paneNumber: pane.index + 1
            detailsHidden: pane.blind
            modelAvailable: pane.canAnswer
            continuesText: pane.paneState !== null && !pane.paneState.remote && pane.localEngine.continuesText
        }

        // The conversation outgrew the context: what the model no longer sees, and where to change it.
        Label {
            objectName: "contextNotice"
            Layout.fillWidth: true
            Layout.leftMargin: 16
            Layout.rightMargin: 16
            visible: pane.paneState !== null && pane.paneState.unseenMessages > 0
            text: pane.paneState ? qsTr("The conversation outgrew the model's context: %n earlier message(s), dimmed above, were not sent. Settings, Engine chooses which ones go, or whether to stop instead.", "", pane.paneState.unseenMessages) : ""
            color: Theme.warningColor
            wrapMode: Text.Wrap
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }

        Label {
            objectName: "paneError"
            Layout.fillWidth: true
            Layout.leftMargin: 16
            Layout.rightMargin: 16
            visible: pane.paneState !== null && pane.paneState.errorText !== ""
            text: pane.paneState ? pane.paneState.errorText : ""
            textFormat: Text.PlainText
            color: Theme.errorColor
            wrapMode: Text.Wrap
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }

        // No model yet (a fresh install, or one unloaded): what to do, with the two ways to get one.
        ColumnLayout {
            objectName: "paneWelcome"
            Layout.fillWidth: true
            Layout.leftMargin: 16
            Layout.rightMargin: 16
            visible: pane.paneState !== null && !pane.canAnswer && !pane.paneState.busy
            spacing: 8
            Label {
                objectName: "paneNoModel"
                Layout.fillWidth: true
                text: qsTr("No model is loaded. Download one from Hugging Face, or open a model file or folder you have (Ctrl+O).")
                color: Theme.mutedTextColor
                wrapMode: Text.Wrap
                Accessible.name: text
            }
            Flow {
                Layout.fillWidth: true
                spacing: 8
                Button {
                    objectName: "welcomeDownload"
                    text: qsTr("Download a model…")
                    highlighted: true
                    onClicked: pane.downloadRequested()
                    Accessible.name: qsTr("Download a model from Hugging Face")
                }
                Button {
                    objectName: "welcomeOpen"
                    text: qsTr("Open a model…")
                    onClicked: pane.modelPickerRequested()
                    Accessible.name: qsTr("Open a model file or folder")
                }
            }
        }

        ChatInput {
            id: chatInput
            Layout.fillWidth: true
            Layout.margins: 12
            paneState: pane.paneState
            panes: pane.panes
            compare: pane.compare
            paneNumber: pane.index + 1
            canSend: pane.canAnswer
            onInputFocused: pane.makeCurrent()
        }
    }

    PaneSettingsPopup {
        id: settingsPopup
        parent: Overlay.overlay
        anchors.centerIn: parent
        settings: pane.paneState ? pane.paneState.settings : null
        paneNumber: pane.index + 1
        paneState: pane.paneState
        endpoints: pane.endpoints
        localModels: pane.localModels
    }
}
