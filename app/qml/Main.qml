// The main window: conversation list on the left, chat panes side by side, status line below.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

ApplicationWindow {
    id: window

    /// The AppController (C++): engine, conversations, panes.
    required property QtObject app

    width: 1280
    height: 800
    minimumWidth: 720
    minimumHeight: 480
    visible: true
    title: qsTr("PagedChat")
    color: Theme.windowColor

    Material.theme: Material.Light
    Material.primary: Theme.primary
    Material.accent: Theme.accent

    header: AppToolBar {
        panes: window.app.panes
    }

    footer: StatusLine {
        engine: window.app.engine
        dataDir: window.app.dataDir
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        ErrorBanner {
            Layout.fillWidth: true
            message: window.app.engine.loadError !== ""
                     ? qsTr("The model could not be loaded: %1").arg(window.app.engine.loadError)
                     : window.app.errorText
        }

        RowLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.margins: 12
            spacing: 12

            ConversationList {
                Layout.preferredWidth: 260
                Layout.fillHeight: true
                app: window.app
            }

            Repeater {
                model: window.app.panes
                delegate: ChatPane {
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    Layout.preferredWidth: 100
                    Layout.minimumWidth: 260
                    panes: window.app.panes
                    engine: window.app.engine
                }
            }
        }
    }
}
