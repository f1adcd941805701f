// The window's tool bar: app name and the "add pane" action.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

ToolBar {
    id: toolBar

    /// The PaneListModel (C++).
    required property QtObject panes
    /// Whether the conversation list is shown (the menu button toggles it).
    property bool sidebarOpen: true

    signal sidebarToggled()

    Material.foreground: "white"
    Accessible.name: qsTr("Main tool bar")

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 4
        anchors.rightMargin: 8

        ToolButton {
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
            text: qsTr("PagedChat")
            font.pixelSize: 20
            font.weight: Font.Medium
            Accessible.name: text
        }
        Item { Layout.fillWidth: true }
        Label {
            text: qsTr("%1 of %2 panes").arg(toolBar.panes.count).arg(toolBar.panes.maxPanes)
            opacity: 0.8
            Accessible.name: text
        }
        ToolButton {
            text: qsTr("+ Add pane")
            enabled: toolBar.panes.canAddPane
            onClicked: toolBar.panes.addPane()
            Accessible.name: qsTr("Add a chat pane")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Open another chat side by side (up to %1)").arg(toolBar.panes.maxPanes)
        }
    }
}
