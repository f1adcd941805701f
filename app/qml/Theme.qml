// Colours and sizes shared by the PagedChat components.
pragma Singleton
import QtQuick
import QtQuick.Controls.Material

QtObject {
    readonly property int primary: Material.Indigo
    readonly property int accent: Material.Indigo
    readonly property color windowColor: "#eef0f5"
    readonly property color surfaceColor: "#ffffff"
    readonly property color borderColor: "#dde1ea"
    readonly property color userBubbleColor: "#3f51b5"
    readonly property color userTextColor: "#ffffff"
    readonly property color assistantBubbleColor: "#f2f4f8"
    readonly property color assistantTextColor: "#1f2330"
    readonly property color mutedTextColor: "#6b7280"
    readonly property color selectionColor: "#e3e7f7"
    readonly property color errorColor: "#c62828"
    readonly property int radius: 10
}
