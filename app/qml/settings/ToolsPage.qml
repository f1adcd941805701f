// The settings dialog's Tools page: the MCP servers whose tools the panes offer to models, as an
// `mcpServers` document (the JSON Claude Desktop, Cursor, LM Studio and VS Code read: paste it,
// or read it from a file), each server's state, and how many tool calls one message may lead to.
// A pane asks before each call unless its tool was "always allowed".
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

SettingsPage {
    id: page

    /// The AppController (C++); its `tools` is the ToolHost.
    required property AppController app
    readonly property ToolHost tools: app ? app.tools : null
    /// The page's tab title.
    readonly property string title: qsTr("Tools")
    /// Why the last document was refused ("" = none).
    property string refusal: ""
    /// Examples in the empty fields (JSON and a path: the same in every language).
    readonly property string exampleDocument: "{\"mcpServers\": {\"files\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/home\"]}}}"
    readonly property string exampleFile: "~/.config/Claude/claude_desktop_config.json"

    objectName: "toolsPage"
    Accessible.name: title

    /// The editor shows the applied document again (when the dialog opens).
    function reset() {
        configArea.text = tools ? tools.serversConfig : ""
        refusal = ""
    }

    ColumnLayout {
        width: page.availableWidth
        spacing: 8

        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: qsTr("MCP servers give models tools. Paste an \"mcpServers\" document (as in claude_desktop_config.json) or read one from a file. Each call is shown in the chat and runs only once you allow it.")
        }
        ScrollView {
            Layout.fillWidth: true
            Layout.preferredHeight: Math.max(120, Theme.fontSize * 10)
            TextArea {
                id: configArea
                objectName: "toolsConfig"
                text: page.tools ? page.tools.serversConfig : ""
                placeholderText: page.exampleDocument
                font.family: "monospace"
                wrapMode: TextEdit.Wrap
                selectByMouse: true
                Accessible.name: qsTr("MCP servers document (JSON)")
            }
        }
        RowLayout {
            Layout.fillWidth: true
            Button {
                objectName: "toolsApplyButton"
                text: qsTr("Apply")
                onClicked: page.refusal = page.tools.applyServersConfig(configArea.text)
                Accessible.name: qsTr("Apply the MCP servers document")
            }
            TextField {
                id: fileField
                objectName: "toolsFile"
                Layout.fillWidth: true
                placeholderText: page.exampleFile
                selectByMouse: true
                Accessible.name: qsTr("File to read the servers from")
            }
            Button {
                objectName: "toolsImportButton"
                text: qsTr("Read file")
                enabled: fileField.text.trim() !== ""
                onClicked: {
                    page.refusal = page.tools.importServersFile(fileField.text)
                    if (page.refusal === "")
                        configArea.text = page.tools.serversConfig
                }
                Accessible.name: qsTr("Read the servers from the file")
            }
        }
        Label {
            objectName: "toolsSecrets"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pixelSize: Theme.smallFontSize
            color: page.tools && page.tools.secretsNote !== "" ? Theme.warningColor : Theme.mutedTextColor
            text: page.tools && page.tools.secretsNote !== ""
                  ? page.tools.secretsNote
                  : qsTr("The values of \"env\" and \"headers\" (tokens, keys) go to the system keychain; the document shows \"(in the keychain)\" in their place, which keeps them when you apply it again.")
            Accessible.name: text
        }
        Label {
            objectName: "toolsError"
            Layout.fillWidth: true
            visible: text !== ""
            text: page.refusal
            color: Theme.errorColor
            wrapMode: Text.Wrap
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }
        Repeater {
            model: page.tools ? page.tools.servers : []
            delegate: Label {
                id: serverLine
                required property var modelData
                readonly property bool ready: modelData.state === "ready"
                readonly property bool starting: modelData.state === "starting"
                readonly property bool failed: !ready && !starting
                objectName: "toolsServer_" + serverLine.modelData.name
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: serverLine.ready
                      ? qsTr("%1: ready, %n tool(s)", "", serverLine.modelData.tools).arg(serverLine.modelData.name)
                      : serverLine.starting ? qsTr("%1: starting…").arg(serverLine.modelData.name)
                      : qsTr("%1: failed: %2").arg(serverLine.modelData.name).arg(serverLine.modelData.error)
                color: serverLine.failed ? Theme.errorColor : Theme.assistantTextColor
                Accessible.name: text
            }
        }
        Button {
            objectName: "toolsForgetAlways"
            visible: page.tools !== null && page.tools.alwaysAllowedCount > 0
            text: qsTr("Ask again for every tool (%n always allowed)", "", page.tools ? page.tools.alwaysAllowedCount : 0)
            onClicked: page.tools.forgetAlwaysAllowed()
            Accessible.name: text
        }
        RowLayout {
            Layout.fillWidth: true
            Label { text: qsTr("Tool calls per message, at most") }
            SpinBox {
                objectName: "toolsMaxSteps"
                from: 1
                to: 100
                value: page.tools ? page.tools.maxToolSteps : 8
                editable: true
                onValueModified: page.tools.maxToolSteps = value
                Accessible.name: qsTr("Tool calls per message, at most")
            }
        }
    }
}
