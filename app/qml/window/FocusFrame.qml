// A clear keyboard-focus frame for a control: declare it inside the control (FocusFrame {});
// it shows while the control has visual focus (reached with Tab, not clicked), in both themes.
import QtQuick

Rectangle {
    objectName: "focusFrame"
    anchors.fill: parent
    anchors.margins: 1
    // parent is any Control (an Item to qmllint, which then knows no visualFocus).
    visible: parent !== null && parent.visualFocus === true  // qmllint disable type property
    color: "transparent"
    radius: 6
    border.width: 2
    border.color: Theme.focusColor
    z: 100
}
