// Asked before a link in a message is opened. The message came from a model or a remote server,
// so the link's whole target is shown (encoded: no look-alike letter hides the host) and nothing
// opens without the user's Open. Only web and mail links get here: LinkPolicy refuses the rest.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PagedChat

Dialog {
    id: dialog

    /// The link as the message has it: what Open hands to the browser or mail program.
    property string link: ""
    /// Its full target as shown (LinkPolicy.target()).
    property string target: ""

    /// Shows the question for `link`, which leads to `target`.
    function ask(link, target) {
        dialog.link = link
        dialog.target = target
        dialog.open()
    }

    objectName: "openLinkDialog"
    title: qsTr("Open this link?")
    modal: true
    anchors.centerIn: parent
    width: Math.min(parent ? parent.width - 80 : 520, 520)
    padding: 16
    // Our own buttons (Qt's standard labels need catalogues a user may not have installed).
    footer: DialogButtonBox {
        Button {
            objectName: "openLinkCancelButton"
            text: qsTr("Cancel")
            flat: true
            // Qt 6.4's qmllint does not find DialogButtonBox's ButtonRole enum values (type).
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole  // qmllint disable type
            Accessible.name: qsTr("Do not open the link")
        }
        Button {
            objectName: "openLinkButton"
            text: qsTr("Open")
            flat: true
            DialogButtonBox.buttonRole: DialogButtonBox.AcceptRole  // qmllint disable type
            Accessible.name: qsTr("Open the link")
        }
    }
    // A plain surface (the style's elevation shadow needs shader effects some renderers lack).
    background: Rectangle {
        color: Theme.surfaceColor
        radius: Theme.radius
        border.color: Theme.borderColor
    }
    onAccepted: LinkPolicy.open(dialog.link)

    ColumnLayout {
        anchors.fill: parent
        spacing: 10
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: qsTr("The link is in a message written by a model or a server. It opens in your browser or mail program and leads to:")
        }
        Label {
            objectName: "openLinkTarget"
            Layout.fillWidth: true
            text: dialog.target
            textFormat: Text.PlainText
            wrapMode: Text.WrapAnywhere
            font.family: Theme.monospaceFamily
            Accessible.name: text
        }
    }
}
