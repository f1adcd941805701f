// One chat pane: header, the conversation's messages, and the input box.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

Pane {
    id: pane

    /// The pane's ChatSession (C++), from the PaneListModel's "session" role. Null for a moment
    /// when the pane closes: C++ deletes the session while Main.qml's Repeater (its components
    /// bound) still holds this pane with its bindings live, so they read it only when not null.
    required property ChatSession session
    required property int index
    /// The PaneListModel and EngineClient (C++).
    required property PaneListModel panes
    required property EngineClient engine
    /// The BlindCompare (C++); null outside the main window (tests).
    property BlindCompare compare: null
    /// The PaneEndpoints (C++): a remote server instead of the local model; null in tests.
    property PaneEndpoints endpoints: null

    readonly property bool blind: compare !== null && compare.hidden
    /// The pane's settings popup (PaneSettingsPopup).
    readonly property alias settingsPopup: settingsPopup
    /// Opens the pane's settings (the header's gear button).
    function openSettings() { settingsPopup.open() }
    /// Puts the keyboard focus in the pane's input box.
    function focusInput() { chatInput.focusInput() }

    readonly property bool isCurrent: panes.currentIndex === index
    /// Something can answer: a remote endpoint, or a model loaded (or loading).
    readonly property bool canAnswer: (session !== null && session.remote) || engine.loaded || engine.loading

    function makeCurrent() { panes.currentIndex = index }

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
            title: pane.session && pane.session.title !== "" ? pane.session.title : qsTr("New chat")
            busy: pane.session !== null && pane.session.busy
            paneNumber: pane.index + 1
            canClose: pane.panes.canClosePane
            session: pane.session
            // The labels property notifies on every reshuffle: the header always shows the stored label.
            compareLabel: pane.compare !== null && pane.compare.enabled ? (pane.compare.labels[pane.index] || "") : ""
            settingsHidden: pane.blind
            onCloseRequested: pane.panes.closePane(pane.index)
            onSettingsRequested: pane.openSettings()
        }

        MessageList {
            Layout.fillWidth: true
            Layout.fillHeight: true
            model: pane.session ? pane.session.messages : null
            session: pane.session
            paneNumber: pane.index + 1
            detailsHidden: pane.blind
            modelAvailable: pane.canAnswer
        }

        Label {
            objectName: "paneError"
            Layout.fillWidth: true
            Layout.leftMargin: 16
            Layout.rightMargin: 16
            visible: pane.session !== null && pane.session.errorText !== ""
            text: pane.session ? pane.session.errorText : ""
            textFormat: Text.PlainText
            color: Theme.errorColor
            wrapMode: Text.Wrap
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }

        Label {
            objectName: "paneNoModel"
            Layout.fillWidth: true
            Layout.leftMargin: 16
            Layout.rightMargin: 16
            visible: pane.session !== null && !pane.canAnswer && !pane.session.busy
            text: qsTr("No model is loaded: open one with the Model button (Ctrl+O) to chat.")
            color: Theme.mutedTextColor
            wrapMode: Text.Wrap
            Accessible.name: text
        }

        ChatInput {
            id: chatInput
            Layout.fillWidth: true
            Layout.margins: 12
            session: pane.session
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
        settings: pane.session ? pane.session.settings : null
        paneNumber: pane.index + 1
        session: pane.session
        endpoints: pane.endpoints
    }
}
