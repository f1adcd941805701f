// A red strip that shows an error message; hidden when the message is empty.
import QtQuick
import QtQuick.Controls

Rectangle {
    id: banner

    property string message

    visible: message !== ""
    implicitHeight: visible ? label.implicitHeight + 16 : 0
    color: Theme.errorColor

    Label {
        id: label
        objectName: "errorBannerText"
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 16
        verticalAlignment: Text.AlignVCenter
        wrapMode: Text.Wrap
        color: "white"
        text: banner.message
        textFormat: Text.PlainText  // messages carry file names and titles, never markup
        Accessible.role: Accessible.AlertMessage
        Accessible.name: text
    }
}
