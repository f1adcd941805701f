// A label that shows the first of its `texts` that fits its width whole, and nothing when none
// does, instead of cutting a text off: a long form gives way to a shorter one in a narrow pane or
// a longer language. Its width comes from the layout (it fills what is left, down to nothing);
// what it would like is its longest text's width, so the choice never feeds back into the layout.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Label {
    id: label

    /// The forms of the text, the fullest first (e.g. "Context 261 / 512 (51%)", "261 / 512").
    property var texts: []
    /// The fullest form, whether shown or not.
    readonly property string fullText: texts.length > 0 ? texts[0] : ""
    /// The form shown, or "" when none fits.
    readonly property string shown: {
        for (const form of label.texts) {
            if (metrics.advanceWidth(form) <= label.width + 0.5)
                return form
        }
        return ""
    }

    text: shown
    Layout.fillWidth: true
    Layout.minimumWidth: 0
    Layout.preferredWidth: {
        let widest = 0
        for (const form of label.texts)
            widest = Math.max(widest, Math.ceil(metrics.advanceWidth(form)))
        return widest
    }
    Accessible.name: fullText

    FontMetrics {
        id: metrics
        font: label.font
    }
}
