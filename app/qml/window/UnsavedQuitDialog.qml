// Asked before quitting while changes of the user's wait to be saved (a reply, a rename, a pin
// the chat history could not take yet: another program's lock, a full or read-only disk). They
// live only in memory: quitting loses them, staying open keeps trying.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PagedChat

Dialog {
    id: dialog

    /// The app's errors (AppController.errors): unsavedCount and the banner's reason.
    required property AppErrors errors
    /// Quitting was chosen: once, so that the window's close does not ask again.
    property bool confirmed: false

    /// The user chose "Quit anyway".
    signal quitConfirmed()

    /// True when quitting now would lose something and the user has not said to go ahead.
    function shouldAsk() {
        return !dialog.confirmed && dialog.errors.unsavedCount > 0
    }

    objectName: "unsavedQuitDialog"
    title: qsTr("Quit without saving?")
    modal: true
    anchors.centerIn: parent
    width: Math.min(parent ? parent.width - 80 : 520, 520)
    padding: 16
    // Our own buttons (Qt's standard labels need catalogues a user may not have installed).
    footer: DialogButtonBox {
        Button {
            objectName: "keepOpenButton"
            text: qsTr("Keep PagedChat open")
            flat: true
            // Qt 6.4's qmllint does not find DialogButtonBox's ButtonRole enum values (type).
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole  // qmllint disable type
        }
        Button {
            objectName: "quitAnywayButton"
            text: qsTr("Quit anyway")
            flat: true
            DialogButtonBox.buttonRole: DialogButtonBox.AcceptRole  // qmllint disable type
        }
    }
    // A plain surface (the style's elevation shadow needs shader effects some renderers lack).
    background: Rectangle {
        color: Theme.surfaceColor
        radius: Theme.radius
        border.color: Theme.borderColor
    }
    onAccepted: {
        dialog.confirmed = true
        dialog.quitConfirmed()
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 10
        Label {
            objectName: "unsavedQuitText"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: qsTr("Some of your changes (a reply, a new title, a pin) are not saved in the chat history yet. If PagedChat quits now, they are lost; while it stays open, it keeps trying to save them.")
        }
        Label {
            objectName: "unsavedQuitReason"
            Layout.fillWidth: true
            visible: text !== ""
            wrapMode: Text.Wrap
            color: Theme.mutedTextColor
            text: dialog.errors.text
            textFormat: Text.PlainText
        }
    }
}
