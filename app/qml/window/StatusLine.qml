// The status line: model, load state, tokens per second, running requests.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import PagedChat

ToolBar {
    id: statusLine

    /// The LocalChatBackend and the ThroughputMeter (C++).
    required property LocalChatBackend engine
    required property ThroughputMeter throughput
    property string dataDir
    /// The LocalModels (C++): the other models panes loaded beside the main one; null in tests.
    property LocalModels localModels: null
    readonly property int otherModels: localModels !== null ? localModels.numLoaded : 0

    /// Tokens per second over the last second while generating; a dash when idle.
    readonly property string rateText: throughput.active && throughput.tokensPerSecond >= 0
                                       ? throughput.tokensPerSecond.toFixed(1) : "\u2014"

    readonly property string statusText: {
        if (engine.loading)
            return qsTr("Loading %1…").arg(engine.modelName)
        if (engine.loadError !== "" || !engine.loaded)
            return qsTr("No model loaded")
        const activity = engine.numRunning > 0 ? qsTr("%n running", "", engine.numRunning) : qsTr("idle")
        const status = qsTr("Model: %1  ·  %2 tok/s  ·  %3")
            .arg(engine.modelName)
            .arg(statusLine.rateText)
            .arg(activity)
        return otherModels > 0 ? status + qsTr("  ·  +%n other model(s)", "", otherModels) : status
    }

    implicitHeight: 32
    background: Rectangle {
        color: Theme.surfaceColor
        Rectangle {
            width: parent.width
            height: 1
            color: Theme.borderColor
        }
    }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 16
        spacing: 16

        Rectangle {
            implicitWidth: 8
            implicitHeight: 8
            radius: 4
            color: statusLine.engine.loadError !== "" ? Theme.errorColor
                 : statusLine.engine.loading ? Theme.warningColor
                 : statusLine.engine.loaded ? Theme.okColor : Theme.mutedTextColor
        }
        Label {
            objectName: "statusLabel"
            text: statusLine.statusText
            textFormat: Text.PlainText
            color: Theme.assistantTextColor
            Accessible.name: qsTr("Engine status")
            Accessible.description: text
        }
        ProgressBar {
            objectName: "statusLoadProgress"
            visible: statusLine.engine.loading
            from: 0
            to: 1
            value: statusLine.engine.loadProgress
            Layout.preferredWidth: 160
            Accessible.name: qsTr("Model load progress")
            Accessible.description: Math.round(value * 100) + "%"
        }
        // The model's shape when the line has room for it whole (the model dialog shows it too).
        FittingLabel {
            objectName: "modelDetails"
            texts: [statusLine.engine.modelDetails]
            textFormat: Text.PlainText
            color: Theme.mutedTextColor
            Accessible.name: qsTr("Model details")
            Accessible.description: statusLine.engine.modelDetails
        }
        Label {
            text: qsTr("Data: %1").arg(statusLine.dataDir)
            textFormat: Text.PlainText
            color: Theme.mutedTextColor
            elide: Text.ElideMiddle
            Layout.maximumWidth: 360
            Accessible.name: qsTr("Data folder")
            Accessible.description: text
        }
    }
}
