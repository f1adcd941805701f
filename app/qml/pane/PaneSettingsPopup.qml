// A pane's settings: system prompt, sampling parameters and, for a model that has a switch for
// it, reasoning (thinking on/off, effort). The fields are checked together on Apply
// (PaneSettings.apply); an invalid one shows why under it and nothing is changed.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

Dialog {
    id: popup

    /// The pane's PaneSettings (C++).
    property PaneSettings settings: null
    property int paneNumber: 1
    /// The pane's PaneState and the app's PaneEndpoints (C++): who answers the pane. Without
    /// endpoints (tests) the choice is not shown.
    property PaneState paneState: null
    property PaneEndpoints endpoints: null
    property LocalModels localModels: null
    /// Field -> error message from the last Apply.
    property var errors: ({})
    /// The MCP servers turned off for this pane, as the popup's checkboxes have them (applied
    /// with the other fields).
    property var toolServersOff: []
    /// The reasoning choices offered: the loaded model's (its chat template's switches); a remote
    /// pane's server is asked in the API's terms, so every choice is offered there. "" first:
    /// the model's default.
    readonly property var reasoningChoices: {
        if (!settings)
            return []
        const offered = paneState && paneState.remote ? ["on", "off", "low", "medium", "high"] : settings.reasoningChoices
        if (offered.length === 0 && settings.reasoning === "")
            return []
        const list = [""].concat(offered)
        if (list.indexOf(settings.reasoning) < 0)
            list.push(settings.reasoning)  // kept from another model: shown so it can be cleared
        return list
    }

    objectName: "paneSettingsPopup"
    title: qsTr("Settings of pane %1").arg(paneNumber)
    modal: true
    focus: true
    padding: 16
    width: Math.min(440, parent ? parent.width - 24 : 440)
    // A plain surface, as the other dialogs (the style's elevation shadow needs shader effects
    // some renderers lack: the middle was see-through there).
    background: Rectangle {
        color: Theme.surfaceColor
        radius: Theme.radius
        border.color: Theme.borderColor
    }

    /// Copies the current settings into the fields.
    function load() {
        errors = {}
        if (!settings)
            return
        promptField.text = settings.systemPrompt
        temperatureField.text = settings.temperature.toString()
        topPField.text = settings.topP.toString()
        topKField.text = settings.topK.toString()
        minPField.text = settings.minP.toString()
        repetitionField.text = settings.repetitionPenalty.toString()
        maxTokensField.text = settings.maxTokens.toString()
        seedField.text = settings.seed
        reasoningBox.currentIndex = Math.max(0, reasoningChoices.indexOf(settings.reasoning))
        toolsBox.checked = settings.tools
        toolServersOff = Array.from(settings.toolServersOff)
        draftsBox.currentIndex = Math.max(0, draftsBox.values.indexOf(settings.drafts))
        tintDraftsBox.checked = settings.tintDrafts
        toolChoiceBox.currentIndex = Math.max(0, toolChoiceBox.values.indexOf(settings.toolChoice))
        backendSection.load()
    }

    /// Removes the message of field `key` (it is being edited).
    function clearError(key) {
        if (errors[key] === undefined)
            return
        const rest = Object.assign({}, errors)
        delete rest[key]
        errors = rest
    }

    /// Applies the fields; returns true when all were valid.
    function applyFields() {
        errors = settings.apply({
            systemPrompt: promptField.text,
            temperature: temperatureField.text,
            topP: topPField.text,
            topK: topKField.text,
            minP: minPField.text,
            repetitionPenalty: repetitionField.text,
            maxTokens: maxTokensField.text,
            seed: seedField.text,
            reasoning: reasoningChoices.length > 0 ? reasoningChoices[reasoningBox.currentIndex] : settings.reasoning,
            tools: toolsBox.checked,
            toolServersOff: popup.toolServersOff,
            drafts: draftsBox.values[draftsBox.currentIndex],
            tintDrafts: tintDraftsBox.checked,
            toolChoice: toolChoiceBox.values[toolChoiceBox.currentIndex]
        })
        return Object.keys(errors).length === 0 && backendSection.apply()
    }

    onAboutToShow: load()

    component SettingField: ColumnLayout {
        id: field
        property alias label: fieldLabel.text
        property alias text: input.text
        property string key
        property string hint
        Layout.fillWidth: true
        // Equal preferred widths: the two columns stay equal when a message wraps under a field.
        Layout.preferredWidth: 100
        spacing: 0
        Label {
            id: fieldLabel
            font.pixelSize: Theme.smallFontSize
            color: Theme.mutedTextColor
        }
        TextField {
            id: input
            objectName: "setting_" + field.key
            Layout.fillWidth: true
            selectByMouse: true
            placeholderText: field.hint
            Accessible.name: fieldLabel.text
            Accessible.description: popup.errors[field.key] || field.hint
            onAccepted: if (popup.applyFields()) popup.close()
            // A field's message goes once the user edits it (the others stay until Apply).
            onTextEdited: popup.clearError(field.key)
        }
        Label {
            objectName: "error_" + field.key
            Layout.fillWidth: true
            visible: popup.errors[field.key] !== undefined
            text: popup.errors[field.key] || ""
            color: Theme.errorColor
            wrapMode: Text.Wrap
            font.pixelSize: Theme.smallFontSize
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }
    }

    // The ids inside make Qt build the content item at once rather than deferred, as it always
    // did here (qmllint warns of that); the functions above need them.
    contentItem: ScrollView {  // qmllint disable deferred-property-id
        implicitHeight: Math.min(form.implicitHeight, popup.parent ? popup.parent.height - 160 : 600)
        contentWidth: availableWidth
        id: scroller
        ScrollBar.horizontal.policy: ScrollBar.AlwaysOff  // the fields take the width: nothing to scroll sideways
        Accessible.name: qsTr("Pane settings")

        ColumnLayout {
            id: form
            // The scroll bar beside the fields, not over their right edge.
            width: parent.width - (scroller.ScrollBar.vertical.visible ? scroller.ScrollBar.vertical.width : 0)
            spacing: 6

            PaneBackendSection {
                id: backendSection
                Layout.fillWidth: true
                visible: popup.endpoints !== null
                paneState: popup.paneState
                paneIndex: popup.paneNumber - 1
                endpoints: popup.endpoints
                localModels: popup.localModels
            }
            Label {
                text: qsTr("System prompt")
                font.pixelSize: Theme.smallFontSize
                color: Theme.mutedTextColor
            }
            TextArea {
                id: promptField
                objectName: "setting_systemPrompt"
                Layout.fillWidth: true
                Layout.preferredHeight: Math.max(72, implicitHeight)
                wrapMode: TextEdit.Wrap
                placeholderText: qsTr("Instructions put before every conversation in this pane")
                Accessible.name: qsTr("System prompt")
            }
            GridLayout {
                Layout.fillWidth: true
                columns: 2
                columnSpacing: 12
                rowSpacing: 4
                SettingField { id: temperatureField; key: "temperature"; label: qsTr("Temperature (0–2)"); hint: "0.8" }
                SettingField { id: topPField; key: "topP"; label: qsTr("Top-p (0.01–1)"); hint: "0.95" }
                SettingField { id: topKField; key: "topK"; label: qsTr("Top-k (0 = off)"); hint: "0" }
                SettingField { id: minPField; key: "minP"; label: qsTr("Min-p (0–1)"); hint: "0" }
                SettingField { id: repetitionField; key: "repetitionPenalty"; label: qsTr("Repetition penalty (0.5–2)"); hint: "1" }
                SettingField { id: maxTokensField; key: "maxTokens"; label: qsTr("Max tokens"); hint: "256" }
                SettingField {
                    id: seedField
                    key: "seed"
                    label: qsTr("Seed (\"random\" or a number)")
                    hint: "random"
                    Layout.columnSpan: 2
                }
            }
            Label {
                visible: popup.reasoningChoices.length > 0
                text: qsTr("Reasoning")
                font.pixelSize: Theme.smallFontSize
                color: Theme.mutedTextColor
            }
            ComboBox {
                id: reasoningBox
                objectName: "setting_reasoning"
                visible: popup.reasoningChoices.length > 0
                Layout.fillWidth: true
                model: popup.reasoningChoices.map(c => popup.settings.reasoningChoiceName(c))
                Accessible.name: qsTr("Reasoning: thinking on or off, or its effort")
            }
            CheckBox {
                id: toolsBox
                objectName: "setting_tools"
                Layout.columnSpan: 2
                text: popup.paneState && popup.paneState.toolHost && popup.paneState.toolHost.toolCount > 0
                      ? qsTr("Offer the tools of Settings \u2192 Tools (%n tool(s))", "", popup.paneState.toolHost.toolCount)
                      : qsTr("Offer tools (none set up: Settings \u2192 Tools)")
                Accessible.name: text
            }
            // Each server of Settings → Tools, on or off for this pane.
            Repeater {
                model: popup.paneState && popup.paneState.toolHost && toolsBox.checked
                       ? popup.paneState.toolHost.servers : []
                delegate: CheckBox {
                    required property var modelData
                    objectName: "setting_toolServer_" + modelData.name
                    Layout.columnSpan: 2
                    Layout.leftMargin: 28
                    Layout.fillWidth: true
                    text: modelData.name
                    checked: popup.toolServersOff.indexOf(modelData.name) < 0
                    onToggled: {
                        const off = popup.toolServersOff.filter(n => n !== modelData.name)
                        if (!checked)
                            off.push(modelData.name)
                        popup.toolServersOff = off
                    }
                    Accessible.name: qsTr("Offer the tools of the server %1").arg(modelData.name)
                }
            }
            Label {
                visible: toolChoiceBox.visible
                text: qsTr("Tool calls")
                font.pixelSize: Theme.smallFontSize
                color: Theme.mutedTextColor
            }
            ComboBox {
                id: toolChoiceBox
                objectName: "setting_toolChoice"
                /// PaneSettings::toolChoice's values, in the order of `model`: the model decides, it
                /// must call a tool, it must call this one (the pane's choice kept while its server is away).
                readonly property var values: {
                    const names = popup.paneState && popup.paneState.toolHost
                                  ? popup.paneState.toolHost.offeredToolNames(popup.toolServersOff) : []
                    const v = ["auto", "required"].concat(names)
                    if (popup.settings && v.indexOf(popup.settings.toolChoice) < 0)
                        v.push(popup.settings.toolChoice)
                    return v
                }
                visible: toolsBox.checked
                Layout.fillWidth: true
                model: values.map((v, i) => i === 0 ? qsTr("The model decides") : i === 1 ? qsTr("Must call a tool")
                                                    : qsTr("Must call %1").arg(v))
                Accessible.name: qsTr("Tool calls: whether the model must call a tool")
                ToolTip.visible: hovered
                ToolTip.delay: 500
                ToolTip.text: qsTr("In its reply to each message the model calls a tool when it decides to, or must call one: its reply is then held to the tools' parameters. Its replies to the tools' results are its own.")
            }
            Label {
                // A remote pane's server decides for itself.
                visible: draftsBox.visible
                text: qsTr("Draft tokens")
                font.pixelSize: Theme.smallFontSize
                color: Theme.mutedTextColor
            }
            ComboBox {
                id: draftsBox
                objectName: "setting_drafts"
                /// PaneSettings::drafts' values, in the order of `model`.
                readonly property var values: ["auto", "mtp", "draft", "ngram", "off"]
                visible: !(popup.paneState && popup.paneState.remote)
                Layout.fillWidth: true
                model: [qsTr("Automatic"), qsTr("Model's MTP layers"), qsTr("Draft model (Settings \u2192 Engine)"),
                        qsTr("N-gram lookup"), qsTr("Off")]
                Accessible.name: qsTr("Draft tokens: who proposes them")
                ToolTip.visible: hovered
                ToolTip.delay: 500
                ToolTip.text: qsTr("Speculative decoding: draft tokens checked by the model in one step, so the same reply comes in fewer steps. The model's MTP layers (Qwen3.5/3.6 files that have them) guess from its own state; a draft model is a smaller model of the same vocabulary (set in Settings \u2192 Engine); n-gram lookup repeats earlier text of the conversation. Automatic takes MTP where the model has it.")
            }
            Label {
                // A choice the loaded model's engine cannot serve says what happens instead.
                id: draftsNote
                objectName: "draftsNote"
                readonly property string chosen: draftsBox.values[draftsBox.currentIndex]
                readonly property bool mtpChosen: chosen === "mtp"
                readonly property var methods: popup.paneState && popup.paneState.localEngine
                                               ? popup.paneState.localEngine.draftMethods : []
                readonly property bool loaded: popup.paneState !== null && popup.paneState.localEngine !== null
                                               && popup.paneState.localEngine.loaded
                visible: draftsBox.visible && loaded
                         && ((chosen === "mtp" && methods.indexOf("mtp") < 0)
                             || (chosen === "draft" && methods.indexOf("draft_model") < 0))
                Layout.columnSpan: 2
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: mtpChosen
                      ? qsTr("This model has no MTP layers: n-gram lookup proposes its drafts instead.")
                      : qsTr("No draft model is loaded (Settings \u2192 Engine): n-gram lookup proposes the drafts instead.")
                font.pixelSize: Theme.smallFontSize
                color: Theme.mutedTextColor
            }
            CheckBox {
                id: tintDraftsBox
                objectName: "setting_tintDrafts"
                visible: draftsBox.visible
                enabled: draftsBox.values[draftsBox.currentIndex] !== "off"
                Layout.columnSpan: 2
                text: qsTr("Tint the accepted draft text")
                Accessible.name: text
                ToolTip.visible: hovered
                ToolTip.delay: 500
                ToolTip.text: qsTr("Replies show the words that came from accepted draft tokens in another colour, while they stream and until the conversation is opened again.")
            }
        }
    }

    footer: DialogButtonBox {
        Button {
            objectName: "resetSettingsButton"
            text: qsTr("Defaults")
            flat: true
            // Qt 6.4's qmllint does not find DialogButtonBox's ButtonRole values, hence the
            // `qmllint disable type` on the roles in this file.
            DialogButtonBox.buttonRole: DialogButtonBox.ResetRole  // qmllint disable type
            Accessible.name: qsTr("Reset the sampling settings to the defaults")
        }
        Button {
            objectName: "cancelSettingsButton"
            text: qsTr("Cancel")
            flat: true
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole  // qmllint disable type
            Accessible.name: qsTr("Close without changes")
        }
        Button {
            objectName: "applySettingsButton"
            text: qsTr("Apply")
            highlighted: true
            DialogButtonBox.buttonRole: DialogButtonBox.ApplyRole  // qmllint disable type
            onClicked: if (popup.applyFields()) popup.close()
            Accessible.name: qsTr("Apply the settings")
        }
        onReset: {
            popup.settings.reset(false)
            popup.load()
        }
    }
}
