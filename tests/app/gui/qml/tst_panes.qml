// The pane components with the real AppController (`app`, from test_qml_components.cpp):
// send and stop through ChatInput, pane add/close through the header's close button,
// send-to-all through the input's toggle, and the settings popup's validation.
import QtQuick
import QtQuick.Controls
import QtTest
import PagedChat

Item {
    id: root
    width: 1200
    height: 700

    Component {
        id: inputComponent
        ChatInput {
            width: 500
            panes: app.panes
            compare: app.compare
        }
    }
    Component {
        id: paneComponent
        ChatPane {
            width: 400
            height: 600
            panes: app.panes
            engine: app.engine
            compare: app.compare
        }
    }

    Component {
        id: compareBarComponent
        CompareBar {
            width: 1100
            compare: app.compare
            panes: app.panes
        }
    }

    TestCase {
        name: "Panes"
        when: windowShown

        function findChild(item, name) {
            if (!item)
                return null
            if (item.objectName === name)
                return item
            const kids = item.children
            for (let i = 0; i < kids.length; ++i) {
                const found = findChild(kids[i], name)
                if (found)
                    return found
            }
            return null
        }

        function waitReady() {
            tryVerify(() => app.engine.ready, 60000, "the model loads")
        }

        function cleanup() {
            app.compare.enabled = false
            app.panes.stopAll()
            tryVerify(() => !app.panes.anyBusy, 30000)
            app.panes.sendToAllEnabled = false
            while (app.panes.count > 1)
                app.panes.closePane(app.panes.count - 1)
        }

        function test_1_sendAndStop() {
            waitReady()
            const paneState = app.panes.paneAt(0)
            paneState.settings.apply({ maxTokens: "400", temperature: "1" })
            const input = createTemporaryObject(inputComponent, root, { paneState: paneState })
            verify(input)
            const area = findChild(input, "inputArea")
            const button = findChild(input, "sendButton")
            verify(area && button)
            verify(!button.enabled, "nothing to send yet")
            area.forceActiveFocus()
            keyClick(Qt.Key_H)
            keyClick(Qt.Key_I)
            compare(paneState.inputText, "hi")
            verify(button.enabled)
            const rows = paneState.messages.count
            mouseClick(button)
            compare(paneState.messages.count, rows + 2)
            compare(paneState.inputText, "")
            if (paneState.busy) {
                // The same button is now Stop.
                const stop = findChild(input, "stopButton")
                verify(stop)
                mouseClick(stop)
                tryVerify(() => !paneState.busy, 30000)
                compare(paneState.messages.roleAt(rows + 1), "assistant")
            }
            // Enter sends, Shift+Enter adds a line.
            area.forceActiveFocus()
            keyClick(Qt.Key_A)
            keyClick(Qt.Key_Return, Qt.ShiftModifier)
            compare(paneState.inputText, "a\n")
            keyClick(Qt.Key_Return)
            compare(paneState.inputText, "")
            tryVerify(() => !paneState.busy, 30000)
            compare(paneState.messages.count, rows + 4)
        }

        function test_2_addAndClosePane() {
            compare(app.panes.count, 1)
            verify(app.panes.addPane())
            compare(app.panes.count, 2)
            const pane = createTemporaryObject(paneComponent, root,
                                               { paneState: app.panes.paneAt(1), index: 1 })
            verify(pane)
            const close = findChild(pane, "closePaneButton")
            verify(close && close.enabled)
            // Closing deletes the paneState; this stand-alone pane then reads it as null, without
            // a warning (in the window, the Repeater's delegate goes with it a moment later).
            mouseClick(close)
            compare(app.panes.count, 1)
        }

        function test_3_sendToAll() {
            waitReady()
            verify(app.panes.addPane())
            const first = app.panes.paneAt(0)
            const second = app.panes.paneAt(1)
            first.settings.apply({ maxTokens: "30" })
            second.settings.apply({ maxTokens: "30" })
            const input = createTemporaryObject(inputComponent, root, { paneState: first })
            const toggle = findChild(input, "sendToAllToggle")
            verify(toggle && toggle.visible)
            mouseClick(toggle)
            verify(app.panes.sendToAllEnabled)
            verify(input.sendsToAll)
            const rowsFirst = first.messages.count
            const rowsSecond = second.messages.count
            first.inputText = "Tom saw a bird"
            input.send()
            compare(first.messages.count, rowsFirst + 2)
            compare(second.messages.count, rowsSecond + 2)
            compare(second.messages.textAt(rowsSecond), "Tom saw a bird")
            compare(first.inputText, "")
            tryVerify(() => !app.panes.anyBusy, 60000)
            verify(second.messages.textAt(rowsSecond + 1).length > 0)
        }

        function test_4_settingsPopupValidates() {
            const settings = app.panes.paneAt(0).settings
            const pane = createTemporaryObject(paneComponent, root,
                                               { paneState: app.panes.paneAt(0), index: 0 })
            const popup = pane.settingsPopup
            pane.openSettings()
            tryVerify(() => popup.opened)
            const field = findChild(popup.contentItem, "setting_temperature")
            const apply = findChild(popup.footer, "applySettingsButton")
            verify(field && apply)
            field.text = "5"
            mouseClick(apply)
            const error = findChild(popup.contentItem, "error_temperature")
            verify(error.visible)
            compare(error.text, "Temperature must be between 0 and 2.")
            verify(popup.opened, "stays open with the message")
            verify(settings.temperature !== 5)
            // The columns keep their widths with a message; editing the field clears its message.
            const other = findChild(popup.contentItem, "setting_topP")
            compare(field.width, other.width)
            field.forceActiveFocus()
            field.selectAll()
            keyClick(Qt.Key_0)
            keyClick(Qt.Key_Period)
            keyClick(Qt.Key_3)
            compare(field.text, "0.3")
            verify(!error.visible)
            mouseClick(apply)
            tryVerify(() => !popup.visible)
            compare(settings.temperature, 0.3)
        }

        function test_5_blindCompareVoteButtons() {
            waitReady()
            verify(app.panes.addPane())
            for (let i = 0; i < 2; ++i)
                app.panes.paneAt(i).settings.apply({ maxTokens: "20" })
            const bar = createTemporaryObject(compareBarComponent, root)
            const toggle = findChild(bar, "blindCompareSwitch")
            verify(toggle && toggle.enabled)
            mouseClick(toggle)
            verify(app.compare.enabled)
            verify(app.compare.hidden)
            // A pane's header shows its letter instead of the title and hides the settings.
            const pane = createTemporaryObject(paneComponent, root, { paneState: app.panes.paneAt(0), index: 0 })
            const pane1 = createTemporaryObject(paneComponent, root, { paneState: app.panes.paneAt(1), index: 1 })
            compare(findChild(pane, "compareLabel").visible, true)
            compare(findChild(pane, "paneSettingsButton").enabled, false)
            const headerLabel = (p) => findChild(p, "compareLabel").children[0].text
            compare(app.panes.sendToAll("A cat and a dog"), 2)
            compare(app.compare.phase, "generating")
            // Each header shows the label stored for its pane, also after a reshuffle.
            compare(headerLabel(pane), app.compare.labelFor(0))
            compare(headerLabel(pane1), app.compare.labelFor(1))
            tryVerify(() => app.compare.phase === "voting", 60000)
            compare(headerLabel(pane), app.compare.labelFor(0))
            compare(headerLabel(pane1), app.compare.labelFor(1))
            // Both answers hit the 20-token limit: neither says so nor offers Continue.
            for (const p of [pane, pane1]) {
                tryVerify(() => findChild(p, "messageNote") !== null)
                compare(findChild(p, "messageNote").visible, false)
                const cont = findChild(p, "continueButton")
                verify(cont === null || !cont.visible)
            }
            const voteB = findChild(bar, "voteB")
            verify(voteB && voteB.visible)
            verify(findChild(bar, "voteTie").visible)
            // "B is better" stores the pane whose header shows "B".
            const winner = headerLabel(pane) === "B" ? 0 : 1
            compare(headerLabel(winner === 0 ? pane : pane1), "B")
            mouseClick(voteB)
            compare(app.compare.phase, "revealed")
            compare(app.compare.winnerPane, winner)
            verify(!app.compare.hidden)
            compare(findChild(pane, "paneSettingsButton").enabled, true)
            verify(findChild(bar, "compareStatus").text.indexOf("B") >= 0)
        }
    }
}
