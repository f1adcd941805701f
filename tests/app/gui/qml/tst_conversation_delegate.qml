// Qt Quick Test for ConversationDelegate.qml: a click opens, a double click renames in place
// (Enter keeps the new title, Esc keeps the old one), the delete button deletes, and the pin
// mark shows for pinned rows.
import QtQuick
import QtQuick.Controls
import QtTest
import PagedChat

Item {
    id: root
    width: 300
    height: 200

    Component {
        id: delegateComponent
        ConversationDelegate {
            width: 280
            conversationId: 7
            title: "Old title"
            updatedAt: new Date()
            pinned: false
        }
    }

    TestCase {
        name: "ConversationDelegate"
        when: windowShown

        SignalSpy { id: openSpy; signalName: "openRequested" }
        SignalSpy { id: renameSpy; signalName: "renameRequested" }
        SignalSpy { id: deleteSpy; signalName: "deleteRequested" }

        function make() {
            const d = createTemporaryObject(delegateComponent, root)
            verify(d)
            for (const spy of [openSpy, renameSpy, deleteSpy]) {
                spy.clear()
                spy.target = d
            }
            return d
        }

        function test_dateHasTheYearOnlyWhenNotThisOne() {
            const d = make()
            const date = findChild(d, "conversationDate")
            verify(date)
            const year = String(new Date().getFullYear())
            verify(date.text.indexOf(year) < 0, date.text)
            d.updatedAt = new Date(2019, 9, 28, 17, 46)
            verify(date.text.indexOf("2019") >= 0, date.text)
            verify(date.text.indexOf("17:46") >= 0, date.text)
        }

        function test_menuFitsItsItems() {
            const d = make()
            d.font.pixelSize = 24  // a large font: the menu widens instead of eliding
            mouseClick(findChild(d, "conversationMenuButton"))
            const menu = findChild(d, "conversationMenu")
            verify(menu)
            tryVerify(() => menu.opened)
            for (let i = 0; i < menu.count; ++i) {
                const item = menu.itemAt(i)
                if (item.text === undefined || item.text === "")
                    continue  // a separator
                verify(item.contentItem.implicitWidth <= item.contentItem.width + 0.5,
                       item.text + ": " + item.contentItem.implicitWidth + " > " + item.contentItem.width)
            }
            menu.close()
        }

        function test_openAndDelete() {
            const d = make()
            mouseClick(d, 40, d.height / 2)
            compare(openSpy.count, 1)
            compare(openSpy.signalArguments[0][0], 7)
            mouseClick(findChild(d, "deleteConversationButton"))
            compare(deleteSpy.count, 1)
        }

        function test_renameInPlace() {
            const d = make()
            mouseDoubleClickSequence(d, 40, d.height / 2)
            verify(d.renaming)
            const field = findChild(d, "renameField")
            verify(field.visible)
            compare(field.text, "Old title")
            field.text = "New title"
            keyClick(Qt.Key_Return)
            verify(!d.renaming)
            compare(renameSpy.count, 1)
            compare(renameSpy.signalArguments[0][1], "New title")

            d.startRename()
            field.text = "Discarded"
            keyClick(Qt.Key_Escape)
            verify(!d.renaming)
            compare(renameSpy.count, 1)
        }

        function test_pinnedMark() {
            const d = make()
            d.pinned = true
            verify(d.Accessible.name !== "")
            let found = false
            const column = d.contentItem.children[0]
            for (let i = 0; i < column.children.length; ++i) {
                const child = column.children[i]
                if (child.visible && typeof child.text === "string" && child.text.indexOf(d.pinMark) === 0)
                    found = true
            }
            verify(found)
        }
    }
}
