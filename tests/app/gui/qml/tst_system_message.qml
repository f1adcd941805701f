// Qt Quick Test for a system prompt in MessageBubble.qml (an imported conversation's, an API
// client's): labelled "System prompt", framed, its whole text shown (no reasoning split), never
// "(no reply)", its lines as typed (not Markdown, as a user message), an accessible name that
// says what it is, and only Copy among the actions.
import QtQuick
import QtQuick.Controls
import QtTest
import PagedChat

Item {
    id: root
    width: 700
    height: 500

    Component {
        id: bubbleComponent
        MessageBubble {
            width: 650
            index: 0
            role: "system"
            text: ""
            reasoning: ""
            answer: ""
            markedReasoning: ""
            markedAnswer: ""
            thinking: false
            finishReason: ""
            streaming: false
            siblingIndex: 0
            siblingCount: 1
            isLast: false
            toolCalls: []
            toolName: ""
            attachments: []
        }
    }

    TestCase {
        name: "SystemMessage"
        when: windowShown

        function make(props) {
            const b = createTemporaryObject(bubbleComponent, root, props)
            verify(b)
            return b
        }
        function child(item, name) {
            const c = findChild(item, name)
            verify(c, name)
            return c
        }

        function test_labelledWithItsWholeText() {
            // The model splits "<think>" out of replies; a system prompt is shown as written.
            const prompt = "You are a pirate. <think>never</think> Answer in rhymes."
            const b = make({ text: prompt, answer: "Answer in rhymes.", reasoning: "never" })
            const label = child(b, "messageRoleLabel")
            verify(label.visible)
            compare(label.text, "System prompt")
            compare(child(b, "messageText").text, prompt)
            verify(!child(b, "reasoningSection").visible)
            compare(child(b, "messageText").accessibleName, "System prompt: " + prompt)
            verify(!child(b, "messageNote").visible)
            verify(!b.interrupted)
        }

        function test_emptyIsNotANoReply() {
            const b = make({ text: "" })
            verify(!b.noReply)
            compare(b.displayText, "")
        }

        function test_modelAndUserKeepTheirLooks() {
            const a = make({ role: "assistant", text: "Hi", answer: "Hi", finishReason: "stop" })
            verify(!child(a, "messageRoleLabel").visible)
            compare(child(a, "messageText").accessibleName, "Model: Hi")
            const u = make({ role: "user", text: "Hello" })
            verify(!child(u, "messageRoleLabel").visible)
            compare(child(u, "messageText").accessibleName, "You: Hello")
        }

        function test_typedTextKeepsItsLines() {
            // Markdown would join these lines into one paragraph and read "*" as emphasis.
            const typed = "Rules:\n1) be *brief*\n2) rhyme"
            for (const role of ["system", "user"]) {
                const b = make({ role: role, text: typed })
                const prose = child(b, "messageProse")
                compare(prose.textFormat, TextEdit.PlainText, role)
                compare(prose.text, typed, role)
                tryCompare(prose, "lineCount", 3, 1000, role)
                verify(b.textWidth < b.maxTextWidth, role)  // as wide as its longest line
            }
            const reply = make({ role: "assistant", text: typed, answer: typed, finishReason: "stop" })
            compare(child(reply, "messageProse").textFormat, TextEdit.MarkdownText)
        }

        function test_onlyCopy() {
            const b = make({ text: "Be brief.", isLast: true })
            const row = child(b, "messageActionRow")
            verify(child(b, "copyButton").visible)
            for (const name of ["regenerateButton", "continueButton", "editButton"]) {
                const button = findChild(b, name)
                verify(!button || !button.visible || !button.enabled, name)
            }
            verify(row)
        }
    }
}
