// Qt Quick Test for MessageActions.qml: which actions a message offers (regenerate and continue
// on a cut-off last answer, edit on user messages, the "2/3" branch switcher, nothing while the
// pane generates) and that each calls the paneState with the message's row; the inline editor
// resends the edited text; copy puts the text on the clipboard.
import QtQuick
import QtQuick.Controls
import QtTest
import PagedChat

Item {
    id: root
    width: 600
    height: 400

    // Stands in for PaneState: records the calls.
    QtObject {
        id: mockPane
        property bool busy: false
        property var calls: []
        function regenerate() { calls.push("regenerate"); return true }
        function continueReply() { calls.push("continue"); return true }
        function switchBranch(row, step) { calls.push("switch " + row + " " + step); return true }
        function editMessage(row, text) { calls.push("edit " + row + " " + text); return true }
    }

    Component {
        id: actionsComponent
        MessageActions { width: 500; paneState: mockPane }
    }

    TextEdit { id: pasteTarget }

    TestCase {
        name: "MessageActions"
        when: windowShown

        function make(props) {
            mockPane.calls = []
            mockPane.busy = false
            const item = createTemporaryObject(actionsComponent, root, props)
            verify(item)
            return item
        }
        function button(item, name) {
            const b = findChild(item, name)
            verify(b, name)
            return b
        }

        function test_cutOffLastAnswer() {
            const a = make({ row: 1, role: "assistant", text: "Once upon", finishReason: "length", isLast: true })
            verify(button(a, "regenerateButton").visible)
            verify(button(a, "continueButton").visible)
            verify(!button(a, "editButton").visible)
            verify(!button(a, "branchLabel").visible)
            mouseClick(button(a, "regenerateButton"))
            mouseClick(button(a, "continueButton"))
            compare(mockPane.calls, ["regenerate", "continue"])
        }

        function test_noModelDisablesActions() {
            const a = make({ row: 1, role: "assistant", text: "Once", finishReason: "length", isLast: true,
                             modelAvailable: false })
            verify(button(a, "regenerateButton").visible)
            verify(!button(a, "regenerateButton").enabled)
            verify(!button(a, "continueButton").enabled)
            verify(button(a, "copyButton").enabled)
            mouseClick(button(a, "regenerateButton"))
            mouseClick(button(a, "continueButton"))
            compare(mockPane.calls, [])
            a.modelAvailable = true  // a model loads: the actions come back
            verify(button(a, "regenerateButton").enabled)
            verify(button(a, "continueButton").enabled)
        }

        function test_narrowPaneWrapsActions() {
            const a = make({ row: 1, role: "assistant", text: "Once", finishReason: "length", isLast: true })
            a.width = 150  // a narrow pane: Copy, Regenerate and Continue do not fit on one line
            // The layouts update on a later polish: wait until the actions wrap to two lines.
            tryVerify(() => a.implicitHeight > button(a, "copyButton").height * 1.5, 5000, "the actions did not wrap")
            for (const name of ["copyButton", "regenerateButton", "continueButton"]) {
                const b = button(a, name)
                verify(b.visible)
                const p = b.mapToItem(a, 0, 0)
                verify(p.x >= 0 && p.x + b.width <= a.width + 0.5, name + " at " + p.x + "+" + b.width)
            }
            verify(a.implicitHeight > button(a, "copyButton").height * 1.5)  // two lines
        }

        function test_blindCompareHidesContinue() {
            const a = make({ row: 1, role: "assistant", text: "Once", finishReason: "length", isLast: true,
                             detailsHidden: true })
            verify(button(a, "regenerateButton").visible)
            verify(!button(a, "continueButton").visible)  // would tell a lower max-tokens apart
            a.detailsHidden = false
            verify(button(a, "continueButton").visible)
        }

        function test_finishedAnswerNotLast() {
            const a = make({ row: 1, role: "assistant", text: "done", finishReason: "stop", isLast: false })
            verify(!button(a, "regenerateButton").visible)
            verify(!button(a, "continueButton").visible)
            const last = make({ row: 3, role: "assistant", text: "done", finishReason: "stop", isLast: true })
            verify(button(last, "regenerateButton").visible)
            verify(!button(last, "continueButton").visible)  // not cut off
        }

        function test_busyHidesActions() {
            const a = make({ row: 1, role: "assistant", text: "x", finishReason: "length", isLast: true })
            mockPane.busy = true
            verify(!button(a, "regenerateButton").visible)
            verify(!button(a, "continueButton").visible)
            const u = make({ row: 0, role: "user", text: "q" })
            mockPane.busy = true
            verify(!button(u, "editButton").enabled)
        }

        function test_branchSwitcher() {
            const a = make({ row: 2, role: "user", text: "q", siblingIndex: 1, siblingCount: 3 })
            compare(button(a, "branchLabel").text, "2/3")
            verify(button(a, "branchPrevButton").enabled)
            verify(button(a, "branchNextButton").enabled)
            mouseClick(button(a, "branchNextButton"))
            mouseClick(button(a, "branchPrevButton"))
            compare(mockPane.calls, ["switch 2 1", "switch 2 -1"])
            const first = make({ row: 2, role: "user", text: "q", siblingIndex: 0, siblingCount: 2 })
            verify(!button(first, "branchPrevButton").enabled)
            verify(button(first, "branchNextButton").enabled)
        }

        function test_editAndResend() {
            const u = make({ row: 2, role: "user", text: "Lily saw a bird" })
            const edit = button(u, "editButton")
            verify(edit.visible && edit.enabled)
            mouseClick(edit)
            verify(u.editing)
            const area = button(u, "editArea")
            compare(area.text, "Lily saw a bird")
            area.text = "Lily saw a cat"
            mouseClick(button(u, "editSendButton"))
            compare(mockPane.calls, ["edit 2 Lily saw a cat"])
            verify(!u.editing)
            // Cancel leaves everything as it was.
            mouseClick(edit)
            mouseClick(button(u, "editCancelButton"))
            verify(!u.editing)
            compare(mockPane.calls.length, 1)
        }

        function test_copy() {
            const a = make({ row: 0, role: "assistant", text: "copy me, 한국어", finishReason: "stop" })
            mouseClick(button(a, "copyButton"))
            pasteTarget.text = ""
            pasteTarget.paste()
            compare(pasteTarget.text, "copy me, 한국어")
        }
    }
}
