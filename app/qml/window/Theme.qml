// Colours and sizes shared by the PagedChat components: a light and a dark palette, chosen by
// `mode` ("light", "dark", or "system": the system palette's window colour decides), and the
// font sizes, all derived from `fontSize` (the message text size). Main.qml binds mode and
// fontSize to the AppController's saved settings.
pragma Singleton
import QtQuick
import QtQuick.Controls.Material

QtObject {
    id: theme

    /// "light", "dark" or "system".
    property string mode: "system"
    /// Message text size in pixels; the other sizes follow it.
    property int fontSize: 15

    // Qt 6.4 has no QStyleHints::colorScheme (6.5+): "system" reads the palette's window colour.
    readonly property SystemPalette systemPalette: SystemPalette { colorGroup: SystemPalette.Active }
    readonly property bool systemDark: systemPalette.window.hslLightness < 0.5
    readonly property bool dark: mode === "dark" || (mode === "system" && systemDark)

    readonly property int primary: Material.Indigo
    // Dark: a mid indigo rather than Material's pale dark-theme shade, so white text on it stays readable.
    readonly property var accent: dark ? "#5c6bc0" : Material.Indigo
    readonly property color windowColor: dark ? "#15171c" : "#eef0f5"
    readonly property color surfaceColor: dark ? "#1e2128" : "#ffffff"
    readonly property color borderColor: dark ? "#343846" : "#dde1ea"
    readonly property color userBubbleColor: dark ? "#3949ab" : "#3f51b5"
    readonly property color userTextColor: "#ffffff"
    readonly property color assistantBubbleColor: dark ? "#2a2e38" : "#f2f4f8"
    readonly property color assistantTextColor: dark ? "#e6e8ee" : "#1f2330"
    readonly property color mutedTextColor: dark ? "#9aa1b1" : "#6b7280"
    readonly property color selectionColor: dark ? "#2f3750" : "#e3e7f7"
    readonly property color hoverColor: dark ? "#262a33" : "#f4f5f9"
    readonly property color textSelectionColor: dark ? "#5c6bc0" : "#9fa8da"
    readonly property color codeBackgroundColor: dark ? "#12141a" : "#f7f8fa"
    readonly property color linkColor: dark ? "#82b1ff" : "#303f9f"
    /// A reply's accepted draft text when its pane tints it (PaneSettings::tintDrafts).
    readonly property color draftTextColor: dark ? "#80cbc4" : "#00796b"
    /// Lines of Markdown tables in the model's bubble, and on the user's (indigo) bubble.
    readonly property color tableBorderColor: dark ? "#555b6e" : "#b0b6c4"
    readonly property color userTableBorderColor: "#9fa8da"
    /// The keyboard-focus frame (FocusFrame.qml): strong contrast on both themes' surfaces.
    readonly property color focusColor: dark ? "#ffd54f" : "#1a237e"
    readonly property color errorColor: dark ? "#ef5350" : "#c62828"
    readonly property color warningColor: dark ? "#ffb74d" : "#e65100"
    readonly property color okColor: dark ? "#66bb6a" : "#2e7d32"
    readonly property int radius: 10

    readonly property int messageFontSize: fontSize
    readonly property int uiFontSize: Math.round(fontSize * 14 / 15)
    readonly property int smallFontSize: Math.max(9, Math.round(fontSize * 11 / 15))
    readonly property int titleFontSize: Math.round(fontSize * 18 / 15)
    readonly property string monospaceFamily: "monospace"
}
