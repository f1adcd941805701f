// The window's tool bar: app name and the "add pane" action.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

ToolBar {
    id: toolBar

    /// The PaneListModel (C++).
    required property PaneListModel panes
    /// The AppController (C++): its `language` ("system", "en", "ko") switches the UI language.
    property AppController app: null
    /// The language menu's entries. A language's own name is not translated.
    readonly property var languages: [
        { code: "system", name: qsTr("System") },
        { code: "en", name: "English" },
        { code: "ko", name: "한국어" }
    ]
    readonly property string languageName: {
        const code = toolBar.app ? toolBar.app.appearance.language : "system"
        for (const entry of toolBar.languages)
            if (entry.code === code)
                return entry.name
        return code
    }
    /// A narrow window (below 1000 px): the app's name and the pane count give way, and the
    /// language button names the language alone, so that every button stays in the window.
    readonly property bool compact: width < 1000
    /// Whether the conversation list is shown (the menu button toggles it).
    property bool sidebarOpen: true

    signal sidebarToggled()
    /// The model button, the engine view button and the settings button were pressed.
    signal modelPickerRequested()
    signal engineViewRequested()
    signal settingsRequested()

    Material.foreground: "white"
    Accessible.name: qsTr("Main tool bar")

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 4
        anchors.rightMargin: 8

        ToolButton {
            FocusFrame {}
            objectName: "sidebarToggle"
            text: "\u2630"
            font.pixelSize: 20
            onClicked: toolBar.sidebarToggled()
            Accessible.name: toolBar.sidebarOpen ? qsTr("Hide the conversation list")
                                                 : qsTr("Show the conversation list")
            ToolTip.visible: hovered
            ToolTip.text: Accessible.name
        }
        Label {
            visible: !toolBar.compact
            text: qsTr("PagedChat")
            font.pixelSize: 20
            font.weight: Font.Medium
            Accessible.name: text
        }
        ToolButton {
            FocusFrame {}
            objectName: "modelButton"
            visible: toolBar.app !== null
            readonly property LocalChatBackend engine: toolBar.app ? toolBar.app.engine : null
            text: !engine ? "" : engine.loading ? qsTr("Model: loading %1…").arg(engine.modelName)
                  : engine.loaded ? qsTr("Model: %1").arg(engine.modelName) : qsTr("Model: none")
            // A long model name elides here; the tool tip shows it whole.
            Layout.maximumWidth: Math.max(120, toolBar.width / 3)
            onClicked: toolBar.modelPickerRequested()
            Accessible.name: qsTr("Choose the model")
            Accessible.description: text
            ToolTip.visible: hovered
            ToolTip.text: text + "\n" + qsTr("Open a model, load a recent one, or unload it (Ctrl+O)")
        }
        Item { Layout.fillWidth: true }
        ToolButton {
            FocusFrame {}
            objectName: "engineViewButton"
            visible: toolBar.app !== null
            text: qsTr("Engine")
            onClicked: toolBar.engineViewRequested()
            Accessible.name: qsTr("Show the live engine view")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Requests, KV-cache blocks and speed, live (Ctrl+Shift+E)")
        }
        ToolButton {
            FocusFrame {}
            objectName: "settingsButton"
            visible: toolBar.app !== null
            text: "\u2699"
            font.pixelSize: 18
            onClicked: toolBar.settingsRequested()
            Accessible.name: qsTr("Settings")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Settings (Ctrl+,)")
        }
        Label {
            visible: !toolBar.compact
            text: qsTr("%1 of %n panes", "", toolBar.panes.maxPanes).arg(toolBar.panes.count)
            opacity: 0.8
            Accessible.name: text
        }
        ToolButton {
            FocusFrame {}
            id: languageButton
            objectName: "languageButton"
            visible: toolBar.app !== null
            text: toolBar.compact ? toolBar.languageName : qsTr("Language: %1").arg(toolBar.languageName)
            onClicked: languageMenu.open()
            Accessible.name: qsTr("Choose the language")
            ToolTip.visible: hovered && !languageMenu.visible
            ToolTip.text: qsTr("The language of PagedChat; System follows the system settings")

            Menu {
                id: languageMenu
                objectName: "languageMenu"
                y: languageButton.height
                Material.foreground: Theme.assistantTextColor

                MenuItem {
                    objectName: "language_system"
                    text: toolBar.languages[0].name
                    checkable: true
                    checked: toolBar.app !== null && toolBar.app.appearance.language === "system"
                    onTriggered: toolBar.app.appearance.language = "system"
                }
                MenuItem {
                    objectName: "language_en"
                    text: toolBar.languages[1].name
                    checkable: true
                    checked: toolBar.app !== null && toolBar.app.appearance.language === "en"
                    onTriggered: toolBar.app.appearance.language = "en"
                }
                MenuItem {
                    objectName: "language_ko"
                    text: toolBar.languages[2].name
                    checkable: true
                    checked: toolBar.app !== null && toolBar.app.appearance.language === "ko"
                    onTriggered: toolBar.app.appearance.language = "ko"
                }
            }
        }
        ToolButton {
            FocusFrame {}
            text: qsTr("+ Add pane")
            enabled: toolBar.panes.canAddPane
            onClicked: toolBar.panes.addPane()
            Accessible.name: qsTr("Add a chat pane")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Open another chat side by side (up to %1)").arg(toolBar.panes.maxPanes)
        }
    }
}
