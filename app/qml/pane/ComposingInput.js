// Enter in a box that sends (the message box, the message editor, the search, rename and hub
// search fields) while an input method is still
// composing: Korean is typed through one, and the syllable being composed (its pre-edit text) is
// not in the box's `text` until the input method commits it. Enter commits it first, so that the
// whole text goes once, and nothing is left behind to be typed again.
.pragma library

/// Commits the pre-edit text of `edit` (a TextEdit, TextArea, TextInput or TextField): through the input method, or
/// as shown when the platform has none that answers (then the composition is reset so that it is
/// not committed a second time later).
function commit(edit) {
    if (!edit.inputMethodComposing)
        return
    const preedit = edit.preeditText
    Qt.inputMethod.commit()
    if (edit.inputMethodComposing && preedit !== "") {
        Qt.inputMethod.reset()
        edit.insert(edit.cursorPosition, preedit)
    }
}
