// The blind-compare bar above the panes (two panes or more): the mode's switch, what to do next,
// and, once every pane has answered, the vote buttons ("A is better", ..., "Tie").
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

Rectangle {
    id: bar

    /// The BlindCompare and PaneListModel (C++).
    required property BlindCompare compare
    required property PaneListModel panes

    objectName: "compareBar"
    implicitHeight: row.implicitHeight + 12
    radius: Theme.radius
    color: Theme.surfaceColor
    border.color: compare.enabled ? Material.accentColor : Theme.borderColor
    Accessible.role: Accessible.Grouping
    Accessible.name: qsTr("Blind compare")

    readonly property string statusText: {
        if (!compare.enabled)
            return qsTr("Compare the panes' answers without knowing their settings.")
        switch (compare.phase) {
        case "generating": return qsTr("Waiting for every pane to finish…")
        case "voting": return qsTr("Which answer is better?")
        case "revealed":
            return compare.winnerPane < 0
                    ? qsTr("You voted a tie. Settings are shown again.")
                    : qsTr("You picked %1 (pane %2). Settings are shown again.")
                          .arg(compare.labelFor(compare.winnerPane)).arg(compare.winnerPane + 1)
        default: return qsTr("Type a prompt: it goes to every pane; labels are shuffled.")
        }
    }

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 12
        anchors.rightMargin: 8
        spacing: 8

        Switch {
            objectName: "blindCompareSwitch"
            text: qsTr("Blind compare")
            checked: bar.compare.enabled
            enabled: bar.compare.available
            onToggled: bar.compare.enabled = checked
            Accessible.name: qsTr("Blind compare mode")
        }
        Label {
            objectName: "compareStatus"
            Layout.fillWidth: true
            text: bar.compare.errorText !== "" ? bar.compare.errorText : bar.statusText
            color: bar.compare.errorText !== "" ? Theme.errorColor : Theme.mutedTextColor
            elide: Text.ElideRight
            Accessible.role: Accessible.StaticText
            Accessible.name: text
        }
        Repeater {
            model: bar.compare.enabled && bar.compare.phase === "voting" ? bar.panes.count : 0
            delegate: Button {
                required property int index
                readonly property string label: String.fromCharCode(65 + index)
                objectName: "vote" + label
                text: qsTr("%1 is better").arg(label)
                highlighted: true
                onClicked: bar.compare.vote(bar.compare.paneForLabel(index))
                Accessible.name: text
            }
        }
        Button {
            FocusFrame {}
            objectName: "voteTie"
            visible: bar.compare.enabled && bar.compare.phase === "voting"
            text: qsTr("Tie")
            onClicked: bar.compare.vote(-1)
            Accessible.name: qsTr("Both are as good: tie")
        }
    }
}
