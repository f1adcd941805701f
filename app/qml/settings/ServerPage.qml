// The settings dialog's Server page: serve the loaded model over the OpenAI API (the routes of
// `pagedchat-cli serve`), in the same engine batch as the panes. Off by default, 127.0.0.1 by
// default; another address needs "Allow other machines" and an API key. Web pages may call it
// from a browser only when listed under "Allowed web pages" (their origins; none by default).
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

SettingsPage {
    id: page

    /// The AppController (C++); its `server` is the ApiServerController.
    required property AppController app
    readonly property ApiServerController server: app ? app.server : null
    /// The page's tab title.
    readonly property string title: qsTr("Server")
    /// Why the last start was refused ("" = none).
    property string refusal: ""

    objectName: "serverPage"
    Accessible.name: title

    /// Starts (or restarts) the server with the fields; the switch follows the outcome.
    function applyFields() {
        refusal = server.start(hostField.text, parseInt(portField.text), keyField.text, allowBox.checked,
                               originsField.text)
    }

    ColumnLayout {
        width: page.availableWidth
        spacing: 8

        Switch {
            id: serveSwitch
            objectName: "serverSwitch"
            text: qsTr("Serve the loaded model over the OpenAI API")
            checked: page.server !== null && page.server.enabled
            onToggled: {
                if (checked)
                    page.applyFields()
                else
                    page.server.stop()
                checked = Qt.binding(function() { return page.server !== null && page.server.enabled })
            }
            Accessible.name: text
        }
        Label {
            objectName: "serverAddress"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: page.server && page.server.running
                  ? qsTr("Serving at %1 — requests share the engine's batch with the panes.").arg(page.server.address)
                  : page.server && page.server.enabled ? qsTr("Starts once a model is loaded.") : qsTr("Off")
            font.weight: page.server && page.server.running ? Font.Medium : Font.Normal
            Accessible.name: text
        }
        GridLayout {
            Layout.fillWidth: true
            columns: 2
            columnSpacing: 12
            Label { text: qsTr("Address") }
            TextField {
                id: hostField
                objectName: "serverHost"
                Layout.fillWidth: true
                text: page.server ? page.server.host : "127.0.0.1"
                selectByMouse: true
                Accessible.name: qsTr("Address to listen on")
            }
            Label { text: qsTr("Port") }
            TextField {
                id: portField
                objectName: "serverPort"
                Layout.fillWidth: true
                text: page.server ? page.server.port.toString() : "8000"
                validator: IntValidator { bottom: 0; top: 65535 }
                selectByMouse: true
                Accessible.name: qsTr("Port (0 = any free port)")
            }
            Label { text: qsTr("API key") }
            TextField {
                id: keyField
                objectName: "serverApiKey"
                Layout.fillWidth: true
                echoMode: TextInput.Password
                placeholderText: qsTr("Optional on this machine")
                selectByMouse: true
                Accessible.name: qsTr("Server API key")
            }
            Label { text: qsTr("Allowed web pages") }
            TextField {
                id: originsField
                objectName: "serverAllowedOrigins"
                Layout.fillWidth: true
                text: page.server ? page.server.allowedOrigins : ""
                placeholderText: qsTr("None (e.g. http://localhost:3000)")
                selectByMouse: true
                inputMethodHints: Qt.ImhUrlCharactersOnly
                Accessible.name: qsTr("Web pages allowed to call the server from a browser (origins, comma-separated)")
            }
        }
        CheckBox {
            id: allowBox
            objectName: "serverAllowNetwork"
            text: qsTr("Allow other machines")
            Accessible.name: text
            Accessible.description: networkHint.text
        }
        Label {
            id: networkHint
            Layout.fillWidth: true
            text: qsTr("Other machines need an address other than 127.0.0.1 and an API key, which clients send as a Bearer token. Browsers are refused unless their page is listed above.")
            wrapMode: Text.Wrap
            font.pixelSize: Theme.smallFontSize
            color: Theme.mutedTextColor
        }
        Button {
            objectName: "serverApplyButton"
            text: page.server && page.server.enabled ? qsTr("Restart with these settings") : qsTr("Start")
            onClicked: page.applyFields()
            Accessible.name: text
        }
        Label {
            objectName: "serverError"
            Layout.fillWidth: true
            visible: text !== ""
            text: page.refusal !== "" ? page.refusal : (page.server ? page.server.error : "")
            color: Theme.errorColor
            wrapMode: Text.Wrap
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }
    }
}
