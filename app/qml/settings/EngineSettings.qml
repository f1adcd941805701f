// The settings dialog's engine page: KV cache size, concurrent sequences, block size, CPU
// threads, context length. Apply validates, saves them and reloads the model with them (with
// progress). What happens when a conversation outgrows the context applies at once.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

Pane {
    id: page

    /// The AppController (C++): engineSettings, applyEngineSettings(), engine.
    required property AppController app
    readonly property EngineSettingsValues settings: app.models.engineSettings
    /// The last validation message ("" when the values were applied or not yet checked).
    property string errorText: ""
    /// True once Apply succeeded, until a value changes again.
    property bool appliedOk: false

    /// The row of KV-cache element type `dtype` in settings.kvCacheDtypes, or -1. (A loop:
    /// Qt 6.4's qmllint knows no JavaScript array methods on a QStringList property.)
    function dtypeIndex(dtype) {
        const dtypes = page.settings.kvCacheDtypes
        for (let i = 0; i < dtypes.length; ++i) {
            if (dtypes[i] === dtype)
                return i
        }
        return -1
    }
    /// Puts the saved values back into the fields.
    function reset() {
        kvField.value = page.settings.kvCacheMiB
        seqsField.value = page.settings.maxNumSeqs
        blockField.value = page.settings.blockSize
        threadsField.value = page.settings.numThreads
        kvDtypeField.currentIndex = Math.max(0, page.dtypeIndex(page.settings.kvCacheDtype))
        contextField.value = page.settings.contextLength
        draftField.text = page.settings.draftModel
        page.errorText = ""
        page.appliedOk = false
    }
    /// Validates, saves and reloads; returns true when applied.
    function apply() {
        page.errorText = page.app.models.applyEngineSettings(kvField.value, seqsField.value,
                                                      blockField.value, threadsField.value,
                                                      page.settings.kvCacheDtypes[kvDtypeField.currentIndex],
                                                      contextField.value, draftField.text)
        page.appliedOk = page.errorText === ""
        return page.appliedOk
    }

    // A reload with the applied values failed: the saved values are back in the fields, with why.
    Connections {
        target: page.settings
        function onReverted(reason) {
            page.reset()
            page.errorText = reason
        }
    }

    objectName: "engineSettingsPage"
    Accessible.name: qsTr("Engine settings")
    Component.onCompleted: reset()

    // A field's name: it takes the width the field leaves and wraps (long in Korean).
    component FieldLabel: Label {
        Layout.fillWidth: true
        wrapMode: Text.Wrap
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 12

        GridLayout {
            columns: 2
            columnSpacing: 16
            rowSpacing: 8
            Layout.fillWidth: true

            FieldLabel { text: qsTr("KV cache size (MiB, 0 = automatic)") }
            SpinBox {
                id: kvField
                objectName: "kvCacheField"
                from: 0
                to: 1000000  // the real limit is checked on Apply, with a message
                editable: true
                onValueModified: page.appliedOk = false
                Accessible.name: qsTr("KV cache size in MiB")
            }
            FieldLabel { text: qsTr("Max concurrent sequences") }
            SpinBox {
                id: seqsField
                objectName: "maxSeqsField"
                from: 0
                to: 100000
                editable: true
                onValueModified: page.appliedOk = false
                Accessible.name: qsTr("Maximum concurrent sequences")
            }
            FieldLabel { text: qsTr("Block size (tokens per KV block)") }
            SpinBox {
                id: blockField
                objectName: "blockSizeField"
                from: 0
                to: 100000
                editable: true
                onValueModified: page.appliedOk = false
                Accessible.name: qsTr("Block size in tokens")
            }
            FieldLabel { text: qsTr("CPU threads (0 = all cores)") }
            SpinBox {
                id: threadsField
                objectName: "threadsField"
                from: 0
                to: 100000
                editable: true
                onValueModified: page.appliedOk = false
                Accessible.name: qsTr("CPU threads")
            }
            FieldLabel {
                Layout.columnSpan: 2
                text: qsTr("KV cache type")
            }
            ComboBox {
                id: kvDtypeField
                objectName: "kvCacheDtypeField"
                Layout.columnSpan: 2
                Layout.fillWidth: true
                // A row of its own, below its label, as wide as the page: the entries are long.
                popup.width: Math.max(width, implicitWidth)
                model: [qsTr("Automatic (bfloat16)"), qsTr("float32 (exact, 4 bytes per value)"),
                        qsTr("bfloat16 (2 bytes per value)"), qsTr("float16 (2 bytes per value)"),
                        qsTr("q8_0 (about 1 byte per value; head sizes of multiples of 32)")]
                onActivated: page.appliedOk = false
                Accessible.name: qsTr("KV cache element type")
            }
            FieldLabel { text: qsTr("Context length (tokens, 0 = the model's)") }
            SpinBox {
                id: contextField
                objectName: "contextLengthField"
                from: 0
                to: 1048576
                stepSize: 1024
                editable: true
                onValueModified: page.appliedOk = false
                Accessible.name: qsTr("Context length in tokens")
            }
            FieldLabel {
                Layout.columnSpan: 2
                text: qsTr("Draft model for speculative decoding (optional: a smaller model with the same vocabulary; panes choose it under Draft tokens)")
            }
            TextField {
                id: draftField
                objectName: "draftModelField"
                Layout.columnSpan: 2
                Layout.fillWidth: true
                placeholderText: qsTr("Path of a model file or folder")
                onTextEdited: page.appliedOk = false
                Accessible.name: qsTr("Draft model path")
            }
            FieldLabel {
                Layout.columnSpan: 2
                text: qsTr("When a conversation outgrows the context")
            }
            ComboBox {
                id: overflowField
                objectName: "contextOverflowField"
                Layout.columnSpan: 2
                Layout.fillWidth: true
                popup.width: Math.max(width, implicitWidth)
                readonly property var policies: ["rollingWindow", "truncateMiddle", "stopAtLimit"]
                model: [qsTr("Drop the oldest turns"), qsTr("Keep the system prompt and first turn, drop the next"),
                        qsTr("Stop: send nothing")]
                currentIndex: Math.max(0, policies.indexOf(page.settings.contextOverflow))
                // Applies from the next message on: no reload.
                onActivated: (index) => page.settings.contextOverflow = policies[index]
                Accessible.name: qsTr("When a conversation outgrows the context")
            }
        }

        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.mutedTextColor
            text: qsTr("Applying reloads the model: replies in progress are stopped and keep their text so far.")
        }
        Label {
            objectName: "engineSettingsError"
            Layout.fillWidth: true
            visible: page.errorText !== ""
            text: page.errorText
            color: Theme.errorColor
            wrapMode: Text.Wrap
            Accessible.role: Accessible.AlertMessage
            Accessible.name: text
        }
        Label {
            Layout.fillWidth: true
            visible: page.appliedOk
            wrapMode: Text.Wrap
            text: page.app.engine.loading
                  ? qsTr("Reloading the model… %1%").arg(Math.round(page.app.engine.loadProgress * 100))
                  : page.app.engine.loaded ? qsTr("Applied: %n KV block(s).", "", page.app.engine.numKvBlocks)
                  : page.app.engine.loadError !== "" ? qsTr("The model did not load with these settings: %1")
                                                      .arg(page.app.engine.loadError)
                  : qsTr("Saved; they apply when a model is loaded.")
            color: page.app.engine.loadError !== "" ? Theme.errorColor : Theme.assistantTextColor
            Accessible.name: text
        }
        ProgressBar {
            Layout.fillWidth: true
            visible: page.appliedOk && page.app.engine.loading
            from: 0
            to: 1
            value: page.app.engine.loadProgress
            Accessible.name: qsTr("Model load progress")
        }

        RowLayout {
            Layout.fillWidth: true
            Item { Layout.fillWidth: true }
            Button {
                text: qsTr("Reset")
                onClicked: page.reset()
                Accessible.name: qsTr("Reset the engine settings to the saved values")
            }
            Button {
                objectName: "applyEngineSettings"
                text: qsTr("Apply and reload")
                highlighted: true
                onClicked: page.apply()
                Accessible.name: qsTr("Apply the engine settings and reload the model")
            }
        }
        Item { Layout.fillHeight: true }
    }
}
