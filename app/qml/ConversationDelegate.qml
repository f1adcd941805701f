// One row of the conversation list: title, last activity, delete button.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

ItemDelegate {
    id: row

    required property double conversationId
    required property string title
    required property date updatedAt
    property double currentConversationId: 0

    signal openRequested(double id)
    signal deleteRequested(double id)

    readonly property bool isCurrent: conversationId === currentConversationId

    highlighted: isCurrent
    leftPadding: 12
    rightPadding: 4
    topPadding: 6
    bottomPadding: 6
    onClicked: openRequested(conversationId)
    Accessible.name: qsTr("Open conversation %1").arg(title)

    background: Rectangle {
        radius: 8
        color: row.isCurrent ? Theme.selectionColor : row.hovered ? Theme.hoverColor : "transparent"
    }

    contentItem: RowLayout {
        spacing: 4
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 0
            Label {
                Layout.fillWidth: true
                text: row.title
                elide: Text.ElideRight
                font.weight: row.isCurrent ? Font.Medium : Font.Normal
                color: Theme.assistantTextColor
                Accessible.name: text
            }
            Label {
                Layout.fillWidth: true
                //: Date format of a conversation's last activity (QDateTime format: day, month, time)
                text: Qt.formatDateTime(row.updatedAt, qsTr("d MMM, hh:mm"))
                font.pixelSize: Theme.smallFontSize
                color: Theme.mutedTextColor
                Accessible.name: qsTr("Last activity %1").arg(text)
            }
        }
        ToolButton {
            text: "\u00d7"
            font.pixelSize: 18
            implicitWidth: 32
            implicitHeight: 32
            opacity: row.hovered || row.isCurrent ? 1 : 0.35
            onClicked: row.deleteRequested(row.conversationId)
            Accessible.name: qsTr("Delete conversation %1").arg(row.title)
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Delete conversation")
        }
    }
}
