// Qt Quick Test for a reasoning model's reply in MessageBubble.qml (with ReasoningSection.qml):
// the <think> part is shown apart, collapsed, with its length; a click or the keyboard shows it;
// the bubble's text and what Copy copies are the answer alone, the reasoning has a Copy of its own;
// while the model thinks the header says so and no "…" placeholder shows.
import QtQuick
import QtQuick.Controls
import QtTest
import PagedChat

Item {
    id: root
    width: 700
    height: 500

    TextEdit { id: pasteTarget }

    Component {
        id: bubbleComponent
        MessageBubble {
            width: 650
            index: 0
            role: "assistant"
            text: ""
            reasoning: ""
            answer: ""
            markedReasoning: ""
            markedAnswer: ""
            thinking: false
            finishReason: "stop"
            streaming: false
            siblingIndex: 0
            siblingCount: 1
            isLast: true
            toolCalls: []
            toolName: ""
            attachments: []
        }
    }

    TestCase {
        name: "Reasoning"
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

        function test_collapsedWithLength() {
            const reasoning = "The user greets me. I should answer politely."
            const b = make({ text: "<think>\n" + reasoning + "\n</think>\n\nHello! How can I help?",
                             reasoning: reasoning, answer: "Hello! How can I help?" })
            const section = child(b, "reasoningSection")
            verify(section.visible)
            verify(!section.expanded)
            const header = child(b, "reasoningHeader")
            verify(header.contentItem.text.indexOf(String(reasoning.length)) >= 0, header.contentItem.text)
            verify(!child(b, "reasoningText").visible)
            compare(child(b, "messageText").text, "Hello! How can I help?")
            compare(child(b, "messageText").visible, true)
            mouseClick(header)
            verify(section.expanded)
            tryVerify(function() { return child(b, "reasoningText").visible })
            compare(child(b, "reasoningText").text, reasoning)
            mouseClick(header)
            verify(!section.expanded)
        }

        function test_copyReasoning() {
            // A reply cut off inside its reasoning has no answer to copy; its reasoning can be.
            const b = make({ text: "<think>\n생각: add 2 and 2", reasoning: "생각: add 2 and 2", answer: "",
                             finishReason: "length" })
            mouseClick(child(b, "reasoningHeader"))
            const copy = child(b, "copyReasoningButton")
            tryVerify(function() { return copy.visible })
            verify(copy.enabled)
            mouseClick(copy)
            pasteTarget.text = ""
            pasteTarget.paste()
            compare(pasteTarget.text, "생각: add 2 and 2")
            compare(child(b, "reasoningText").selectedText, "")  // the selection is not left behind
        }

        function test_keyboard() {
            const b = make({ text: "<think>x</think>y", reasoning: "x", answer: "y" })
            const header = child(b, "reasoningHeader")
            header.forceActiveFocus(Qt.TabFocusReason)
            keyClick(Qt.Key_Space)
            verify(child(b, "reasoningSection").expanded)
        }

        function test_thinking() {
            const b = make({ text: "<think>\nLet me see", reasoning: "Let me see", answer: "", thinking: true,
                             streaming: true, finishReason: "" })
            const header = child(b, "reasoningHeader")
            verify(header.contentItem.font.italic)
            verify(!child(b, "messageText").visible)  // no "…" while the reasoning streams
            const noteless = child(b, "messageNote")
            verify(!noteless.visible)
        }

        function test_cutOffWhileThinking() {
            // Stopped by the length limit inside <think>: no "(no reply)", the note says why.
            const b = make({ text: "<think>\nhmm", reasoning: "hmm", answer: "", finishReason: "length" })
            verify(child(b, "reasoningSection").visible)
            verify(!child(b, "messageText").visible)
            verify(child(b, "messageNote").visible)
        }

        function test_whitespaceReplyAtTheLimit() {
            // Only blanks before the length limit: the placeholder says why there is no reply.
            const b = make({ text: " \n ", reasoning: "", answer: " \n ", finishReason: "length" })
            const text = child(b, "messageText")
            verify(text.visible)
            compare(text.text, "(no reply \u2014 length limit reached)")
        }

        function test_noReasoning() {
            const b = make({ text: "Just an answer", reasoning: "", answer: "Just an answer" })
            verify(!child(b, "reasoningSection").visible)
            compare(child(b, "messageText").text, "Just an answer")
        }

        function test_userMessageUntouched() {
            const b = make({ role: "user", text: "<think>typed by me</think>", reasoning: "",
                             answer: "<think>typed by me</think>" })
            verify(!child(b, "reasoningSection").visible)
            compare(child(b, "messageText").text, "<think>typed by me</think>")
        }
    }
}
