// The live engine view: running and waiting requests (with their panes), the KV-cache block
// map (one cell per block, coloured by the pane that owns it; shared prefix blocks marked; free
// blocks still in the prefix cache outlined), the prefix-cache hit rate, and tokens/s over time.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

Pane {
    id: view

    /// The EngineMonitor (C++). view.shown switches its snapshots on while true.
    required property EngineMonitor monitor
    property bool shown: visible
    /// Colours of panes 1 to 4 (cells and the request list).
    readonly property var paneColors: ["#3f51b5", "#e65100", "#00897b", "#8e24aa"]

    objectName: "engineView"
    padding: 12
    Accessible.name: qsTr("Engine view")
    onShownChanged: view.monitor.active = view.shown
    Component.onCompleted: view.monitor.active = view.shown
    Component.onDestruction: view.monitor.active = false

    function percent(x) { return x < 0 ? "\u2014" : (x * 100).toFixed(1) + "%" }

    ColumnLayout {
        anchors.fill: parent
        spacing: 10

        Label {
            objectName: "engineSummary"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: qsTr("%1 running · %2 waiting · KV blocks: %3 used, %4 free, %5 cached, of %6 · %7 shared · prefix-cache hit rate %8")
                  .arg(view.monitor.numRunning).arg(view.monitor.numWaiting)
                  .arg(view.monitor.usedBlocks).arg(view.monitor.freeBlocks)
                  .arg(view.monitor.cachedBlocks).arg(view.monitor.totalBlocks)
                  .arg(view.monitor.sharedBlocks).arg(view.percent(view.monitor.hitRate))
            Accessible.name: text
        }

        // Hybrid models (Qwen3.5): the recurrent layers' state slots and their checkpoints.
        Label {
            objectName: "engineStateSlots"
            Layout.fillWidth: true
            visible: view.monitor.stateSlots > 0
            wrapMode: Text.Wrap
            text: qsTr("Recurrent state: %1 slots · %2 held by running requests · %3 prefix-cache checkpoints")
                  .arg(view.monitor.stateSlots).arg(view.monitor.stateSlotsHeld).arg(view.monitor.stateCheckpoints)
            Accessible.name: text
        }

        // Legend
        Flow {
            Layout.fillWidth: true
            spacing: 12
            Repeater {
                model: 4
                delegate: Row {
                    id: legendRow
                    required property int index
                    spacing: 4
                    Rectangle { width: 12; height: 12; color: view.paneColors[legendRow.index] }
                    Label { text: qsTr("Pane %1").arg(legendRow.index + 1); font.pixelSize: Theme.smallFontSize }
                }
            }
            Row {
                spacing: 4
                Rectangle { width: 12; height: 12; color: blockMap.otherColor }
                Label { text: qsTr("Other request"); font.pixelSize: Theme.smallFontSize }
            }
            Row {
                spacing: 4
                Rectangle {
                    width: 12; height: 12; color: view.paneColors[0]
                    Rectangle { width: 6; height: 6; color: blockMap.sharedMarkColor }
                }
                Label { text: qsTr("Shared prefix (ref count > 1)"); font.pixelSize: Theme.smallFontSize }
            }
            Row {
                spacing: 4
                Rectangle { width: 12; height: 12; color: blockMap.freeColor; border.color: blockMap.cachedColor; border.width: 2 }
                Label { text: qsTr("Free, kept in the prefix cache"); font.pixelSize: Theme.smallFontSize }
            }
            Row {
                spacing: 4
                Rectangle { width: 12; height: 12; color: blockMap.freeColor }
                Label { text: qsTr("Free"); font.pixelSize: Theme.smallFontSize }
            }
            Label {
                objectName: "blocksPerCellLabel"
                visible: blockMap.blocksPerCell > 1
                text: qsTr("1 cell = %1 blocks: the share in use from the bottom, then the cached share").arg(blockMap.blocksPerCell)
                font.pixelSize: Theme.smallFontSize
                color: Theme.mutedTextColor
                Accessible.name: text
            }
        }

        BlockMapItem {
            id: blockMap
            objectName: "blockMap"
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.minimumHeight: 120
            monitor: view.monitor
            paneColors: view.paneColors
            Accessible.role: Accessible.Graphic
            Accessible.name: qsTr("KV cache block map")
            Accessible.description: qsTr("%1 of %2 blocks in use").arg(view.monitor.usedBlocks).arg(view.monitor.totalBlocks)

            HoverHandler { id: mapHover }
            ToolTip.visible: mapHover.hovered && hoveredBlock >= 0
            readonly property int hoveredBlock: mapHover.hovered ? blockAt(mapHover.point.position.x, mapHover.point.position.y) : -1
            ToolTip.text: {
                if (hoveredBlock < 0)
                    return ""
                const f = view.monitor.blockFlags(hoveredBlock)
                const pane = view.monitor.blockPane(hoveredBlock)
                let s = qsTr("Block %1").arg(hoveredBlock)
                if (f & 1)
                    s += " · " + (pane > 0 ? qsTr("pane %1").arg(pane) : qsTr("in use"))
                else
                    s += " · " + qsTr("free")
                if (f & 2)
                    s += " · " + qsTr("shared")
                if (f & 4)
                    s += " · " + qsTr("cached")
                return s
            }
        }

        RowLayout {
            Layout.fillWidth: true
            Layout.preferredHeight: 140
            spacing: 12

            RequestListView {
                id: requestList
                objectName: "requestList"
                Layout.fillHeight: true
                Layout.fillWidth: true
                Layout.preferredWidth: 1  // half the row; the plot takes the other half
                clip: true
                model: view.monitor.requests
                Accessible.name: qsTr("Running and waiting requests")
                Accessible.role: Accessible.List
                delegate: Row {
                    id: requestRow
                    required property var modelData
                    width: ListView.view.width
                    spacing: 6
                    Rectangle {
                        width: 10; height: 10
                        anchors.verticalCenter: parent.verticalCenter
                        color: requestRow.modelData.pane > 0 ? view.paneColors[(requestRow.modelData.pane - 1) % 4] : blockMap.otherColor
                    }
                    Label {
                        width: parent.width - 16
                        elide: Text.ElideRight
                        font.pixelSize: Theme.smallFontSize
                        text: qsTr("%1 · %2 · %3 · %4 prompt + %5 new tokens · %6 blocks")
                              .arg(requestRow.modelData.pane > 0 ? qsTr("pane %1").arg(requestRow.modelData.pane)
                                   : requestRow.modelData.server ? qsTr("server") : qsTr("no pane"))
                              .arg(requestRow.modelData.requestId)
                              .arg(requestRow.modelData.running ? qsTr("running") : qsTr("waiting"))
                              .arg(requestRow.modelData.promptTokens).arg(requestRow.modelData.outputTokens)
                              .arg(requestRow.modelData.blocks)
                        Accessible.name: text
                    }
                }
                Label {
                    anchors.centerIn: parent
                    visible: requestList.count === 0
                    text: qsTr("No requests")
                    color: Theme.mutedTextColor
                }
            }

            ColumnLayout {
                Layout.fillWidth: true
                Layout.preferredWidth: 1
                Layout.fillHeight: true
                spacing: 2
                Label {
                    text: qsTr("Tokens/s (peak %1)").arg(view.monitor.maxRate.toFixed(1))
                    font.weight: Font.Medium
                }
                Canvas {
                    id: plot
                    objectName: "ratePlot"
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    Accessible.role: Accessible.Chart
                    Accessible.name: qsTr("Tokens per second over time")
                    property var samples: view.monitor.rateHistory
                    onSamplesChanged: requestPaint()
                    onWidthChanged: requestPaint()
                    onHeightChanged: requestPaint()
                    onPaint: {
                        const ctx = getContext("2d")
                        ctx.reset()
                        ctx.fillStyle = "#f5f6fa"
                        ctx.fillRect(0, 0, width, height)
                        const n = samples.length
                        if (n < 2)
                            return
                        const top = Math.max(1, view.monitor.maxRate) * 1.1
                        const step = width / (119)  // EngineMonitor.kHistory - 1
                        const x0 = width - (n - 1) * step
                        ctx.strokeStyle = view.paneColors[0]
                        ctx.lineWidth = 2
                        ctx.beginPath()
                        for (let i = 0; i < n; ++i) {
                            const x = x0 + i * step
                            const y = height - samples[i] / top * height
                            if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y)
                        }
                        ctx.stroke()
                    }
                }
            }
        }
    }
}
