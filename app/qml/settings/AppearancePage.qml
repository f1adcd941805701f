// The settings dialog's Appearance page: theme (light, dark, system), font size, language.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

SettingsPage {
    id: page

    /// The AppController (C++): theme, fontSize, language (all saved in pagedchat.ini).
    required property AppController app
    /// The page's tab title.
    readonly property string title: qsTr("Appearance")

    objectName: "appearancePage"
    Accessible.name: title

    readonly property var themes: [
        { code: "system", name: qsTr("System") },
        { code: "light", name: qsTr("Light") },
        { code: "dark", name: qsTr("Dark") }
    ]
    readonly property var languages: [
        { code: "system", name: qsTr("System") },
        { code: "en", name: "English" },
        { code: "ko", name: "한국어" }
    ]

    function indexOf(list, code) {
        for (let i = 0; i < list.length; ++i)
            if (list[i].code === code)
                return i
        return 0
    }

    GridLayout {
        width: page.availableWidth
        columns: 2
        columnSpacing: 16
        rowSpacing: 12

        Label {
            text: qsTr("Theme")
            color: Theme.assistantTextColor
        }
        ComboBox {
            objectName: "themeBox"
            Layout.fillWidth: true
            model: page.themes
            textRole: "name"
            currentIndex: page.indexOf(page.themes, page.app.appearance.theme)
            onActivated: (i) => page.app.appearance.theme = page.themes[i].code
            Accessible.name: qsTr("Theme")
        }

        Label {
            text: qsTr("Font size")
            color: Theme.assistantTextColor
        }
        SpinBox {
            objectName: "fontSizeBox"
            from: 10
            to: 28
            value: page.app.appearance.fontSize
            editable: true
            onValueModified: page.app.appearance.fontSize = value
            Accessible.name: qsTr("Font size in pixels")
        }

        Label {
            text: qsTr("Language")
            color: Theme.assistantTextColor
        }
        ComboBox {
            objectName: "languageBox"
            Layout.fillWidth: true
            model: page.languages
            textRole: "name"
            currentIndex: page.indexOf(page.languages, page.app.appearance.language)
            onActivated: (i) => page.app.appearance.language = page.languages[i].code
            Accessible.name: qsTr("Language")
        }

        Label {
            Layout.columnSpan: 2
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pixelSize: Theme.smallFontSize
            color: Theme.mutedTextColor
            text: qsTr("System follows the desktop's light or dark colours. Shortcuts: Ctrl+N new chat, "
                       + "Ctrl+Shift+N new pane, Ctrl+W close pane, Enter send, Shift+Enter new line, "
                       + "Esc stop, Ctrl+, settings.")
        }
    }
}
