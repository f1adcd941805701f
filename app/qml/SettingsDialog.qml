// The settings dialog (Ctrl+,): one tab per page. The engine page is EngineSettings.qml; further
// pages (appearance, ...) are added as tabs beside it.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

Dialog {
    id: dialog

    /// The AppController (C++).
    required property QtObject app

    objectName: "settingsDialog"
    title: qsTr("Settings")
    modal: true
    standardButtons: Dialog.Close
    width: Math.min(parent ? parent.width - 80 : 620, 620)
    height: Math.min(parent ? parent.height - 80 : 560, 560)
    anchors.centerIn: parent
    // A plain surface (the style's elevation shadow needs shader effects some renderers lack).
    background: Rectangle {
        color: Theme.surfaceColor
        radius: Theme.radius
        border.color: Theme.borderColor
    }
    onAboutToShow: engineLoader.item && engineLoader.item.reset()

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        TabBar {
            id: tabs
            Layout.fillWidth: true
            TabButton {
                text: qsTr("Engine")
                Accessible.name: qsTr("Engine settings")
            }
        }
        StackLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: tabs.currentIndex

            Loader {
                id: engineLoader
                sourceComponent: EngineSettings { app: dialog.app }
            }
        }
    }
}
