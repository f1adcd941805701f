// The settings dialog (Ctrl+,): one tab per page. Pages are Items added to `pages` (each with a
// `title` property for its tab): Appearance, Engine (EngineSettings.qml in a ScrollView), Server,
// Tools.
// To add a page, list it in the StackLayout below with a `title`; a page scrolls (ScrollView), so
// nothing is cut off at large font sizes or in longer languages.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

Dialog {
    id: dialog

    /// The AppController (C++).
    required property AppController app

    objectName: "settingsDialog"
    title: qsTr("Settings")
    modal: true
    focus: true
    // Wider with a larger font; as tall as its content, within the window (the pages scroll).
    width: Math.min(Math.round(560 * Math.max(1, Theme.fontSize / 15)), parent ? parent.width - 48 : 560)
    height: Math.min(Math.max(implicitHeight, 320), parent ? parent.height - 48 : 520)

    // A plain surface (the style's elevation shadow needs shader effects some renderers lack).
    background: Rectangle {
        color: Theme.surfaceColor
        radius: Theme.radius
        border.color: Theme.borderColor
    }
    onAboutToShow: {
        tabs.currentIndex = 0
        enginePage.reset()
        appearancePage.scrollToTop()
        engineScroll.scrollToTop()
        serverPage.scrollToTop()
        toolsPage.reset()
        toolsPage.scrollToTop()
    }

    footer: DialogButtonBox {
        Button {
            objectName: "closeSettingsButton"
            text: qsTr("Close")
            flat: true
            // Qt 6.4's qmllint does not find DialogButtonBox's ButtonRole enum values (type).
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole  // qmllint disable type
            Accessible.name: qsTr("Close the settings")
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 12

        TabBar {
            id: tabs
            objectName: "settingsTabs"
            Layout.fillWidth: true
            Accessible.name: qsTr("Settings pages")
            Repeater {
                model: pages.children.length
                delegate: TabButton {
                    required property int index
                    text: pages.children[index].title
                    width: implicitWidth
                    Accessible.name: text
                }
            }
        }

        StackLayout {
            id: pages
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: tabs.currentIndex

            AppearancePage {
                id: appearancePage
                app: dialog.app
            }
            // The engine page grows with messages and progress: it scrolls like the others.
            SettingsPage {
                id: engineScroll
                objectName: "engineSettingsScroll"
                readonly property string title: qsTr("Engine")
                clip: true
                EngineSettings {
                    id: enginePage
                    width: engineScroll.availableWidth
                    app: dialog.app
                }
            }
            ServerPage {
                id: serverPage
                app: dialog.app
            }
            ToolsPage {
                id: toolsPage
                app: dialog.app
            }
        }
    }
}
