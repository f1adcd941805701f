// A chat pane's title row: conversation title (or its blind-compare label), "generating" chip,
// settings and close buttons; below it the pane's tokens/s and context use.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

Rectangle {
    id: header

    property string title
    property bool busy: false
    property int paneNumber: 1
    property bool canClose: false
    /// The pane's PaneState (C++): tokens/s and context use. May be null (tests).
    property PaneState paneState: null
    /// Blind compare: the pane's label ("A", "B", ...) replaces the title and settings are hidden.
    property string compareLabel: ""
    property bool settingsHidden: false

    signal closeRequested()
    signal settingsRequested()

    /// Tokens/s while streaming, else the last reply's average; "" when there is none.
    readonly property string rateText: {
        if (!paneState)
            return ""
        const meter = paneState.throughput
        if (paneState.busy && meter.active && meter.tokensPerSecond >= 0)
            return qsTr("%1 tok/s").arg(meter.tokensPerSecond.toFixed(1))
        if (!paneState.busy && paneState.lastReplyRate >= 0)
            return qsTr("%1 tok/s").arg(paneState.lastReplyRate.toFixed(1))
        return ""
    }
    /// Speculative decoding in the latest reply: drafts accepted and tokens per step; "" without.
    readonly property string draftText: !paneState || paneState.draftAcceptance < 0 ? ""
        : (paneState.draftMethod === "mtp" ? qsTr("MTP drafts %1% · ×%2") : qsTr("drafts %1% · ×%2"))
              .arg(Math.round(paneState.draftAcceptance * 100)).arg(paneState.meanAcceptedLength.toFixed(1))
    readonly property int contextUsed: paneState ? paneState.contextUsed : 0
    readonly property int contextLimit: paneState ? paneState.contextLimit : 0
    readonly property real contextFraction: contextLimit > 0 ? contextUsed / contextLimit : 0
    /// Over 90 % of the context: older turns will soon be dropped from requests.
    readonly property bool contextWarning: contextFraction > 0.9

    implicitHeight: titleRow.implicitHeight + (backendLine.visible ? backendLine.implicitHeight : 0)
                    + statsRow.implicitHeight + 10
    color: "transparent"

    /// The stats row's horizontal margins (the layout's left and right).
    readonly property int statsMargins: 22

    ColumnLayout {
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: header.statsMargins - 16
        anchors.topMargin: 4
        anchors.bottomMargin: 6
        spacing: 0

        RowLayout {
            id: titleRow
            Layout.fillWidth: true
            spacing: 8

            Rectangle {
                objectName: "compareLabel"
                visible: header.compareLabel !== ""
                implicitWidth: 28
                implicitHeight: 28
                radius: 14
                color: Theme.userBubbleColor
                Label {
                    anchors.centerIn: parent
                    text: header.compareLabel
                    color: "white"
                    font.pixelSize: Theme.uiFontSize + 2
                    font.weight: Font.Bold
                }
                Accessible.role: Accessible.StaticText
                Accessible.name: qsTr("Answer %1").arg(header.compareLabel)
            }
            Label {
                objectName: "paneTitle"
                Layout.fillWidth: true
                text: header.settingsHidden ? qsTr("Blind compare") : header.title
                textFormat: Text.PlainText  // a conversation title is never markup
                elide: Text.ElideRight
                font.pixelSize: Theme.uiFontSize + 2
                font.weight: Font.Medium
                color: Theme.assistantTextColor
                Accessible.name: qsTr("Pane %1 conversation: %2").arg(header.paneNumber).arg(text)
            }
            GeneratingChip {
                visible: header.busy
                running: header.busy
                promptRead: header.paneState ? header.paneState.promptTokensRead : 0
                promptTotal: header.paneState ? header.paneState.promptTokensTotal : 0
                toolCalls: header.paneState !== null && header.paneState.toolCalls.length > 0
            }
            ToolButton {
                FocusFrame {}
                objectName: "paneSettingsButton"
                text: "\u2699"
                font.pixelSize: Theme.titleFontSize
                enabled: !header.settingsHidden
                onClicked: header.settingsRequested()
                Accessible.name: qsTr("Settings of pane %1").arg(header.paneNumber)
                ToolTip.visible: hovered
                ToolTip.text: header.settingsHidden ? qsTr("Hidden until you vote")
                              : header.paneState ? header.paneState.settings.summary : qsTr("Settings")
            }
            ToolButton {
                FocusFrame {}
                objectName: "closePaneButton"
                text: "\u00d7"
                font.pixelSize: Theme.titleFontSize
                enabled: header.canClose
                onClicked: header.closeRequested()
                Accessible.name: qsTr("Close pane %1").arg(header.paneNumber)
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Close this pane (Ctrl+W)")
            }
        }

        Label {
            id: backendLine
            objectName: "paneBackend"
            // A remote pane names its server, a pane on another local model that model (hidden
            // in blind compare: it would tell the panes apart).
            readonly property bool otherModel: header.paneState !== null && header.paneState.otherLocalModel
            readonly property bool shown: header.paneState !== null && (header.paneState.remote || otherModel)
                                          && !header.settingsHidden
            // A line of its own: in the row below, Qt 6.4's RowLayout did not place the labels
            // after it again when it turned visible (a pane switched to another model), and it
            // drew over the context line.
            visible: shown
            Layout.fillWidth: true
            text: !shown ? ""
                  : otherModel ? qsTr("▣ %1").arg(header.paneState.localEngine.modelName)
                  : qsTr("⇄ %1 at %2").arg(header.paneState.endpointModel).arg(header.paneState.endpointUrl)
            elide: Text.ElideMiddle
            font.pixelSize: Theme.smallFontSize
            color: header.paneState !== null && otherModel && header.paneState.localEngine.loadError !== ""
                   ? Theme.errorColor : Theme.mutedTextColor
            Accessible.name: otherModel ? qsTr("Answered by the model %1").arg(header.paneState.localEngine.modelName)
                                        : qsTr("Answered by the server %1").arg(text)
            ToolTip.visible: backendHover.hovered
            ToolTip.text: otherModel && header.paneState.localEngine.loadError !== ""
                          ? header.paneState.localEngine.loadError : text
            HoverHandler { id: backendHover }
        }

        RowLayout {
            id: statsRow
            Layout.fillWidth: true
            spacing: 10
            // Qt 6.4's RowLayout can go on treating a label as hidden after it is shown (a new
            // pane's labels were all drawn at the row's start, over one another; a pane widened by
            // another's closing, too): a label shown while the layout is busy laying out is
            // missed. A new spacing, set after that (a label shown or hidden, the row resized;
            // deferred), makes it read its items again.
            onWidthChanged: relayout.restart()
            Timer {
                id: relayout
                interval: 0
                onTriggered: {
                    statsRow.spacing = 11
                    statsRow.spacing = 10
                }
            }

            Label {
                id: rateLabel
                objectName: "paneRate"
                visible: header.rateText !== ""
                onVisibleChanged: relayout.restart()
                text: header.rateText
                font.pixelSize: Theme.smallFontSize
                color: Theme.mutedTextColor
                Accessible.name: qsTr("Speed: %1").arg(text)
            }
            Label {
                objectName: "paneDrafts"
                onVisibleChanged: relayout.restart()
                // Only where the row has room for it beside the speed and the context's fullest form
                // (the context comes first in a narrow pane): the header's width less the margins and
                // three spacings, so that what the row shows does not depend on its own layout.
                visible: header.draftText !== ""
                         && header.width - header.statsMargins >= implicitWidth + 60 + 3 * 10
                            + (rateLabel.visible ? rateLabel.implicitWidth : 0)
                            + (contextLabel.visible ? contextLabel.Layout.preferredWidth : 0)
                text: header.draftText
                font.pixelSize: Theme.smallFontSize
                color: Theme.mutedTextColor
                ToolTip.visible: draftsHover.hovered
                ToolTip.text: qsTr("Speculative decoding: the share of proposed draft tokens the model accepted, and the tokens one step gave on average")
                Accessible.name: qsTr("Speculative decoding: %1").arg(text)
                HoverHandler { id: draftsHover }
            }
            FittingLabel {
                id: contextLabel
                objectName: "paneContext"
                visible: header.contextLimit > 0
                onVisibleChanged: relayout.restart()
                // Known once the pane has sent a request (the engine counts the rendered prompt).
                // In a narrow pane the numbers alone.
                texts: header.contextUsed > 0
                       ? [qsTr("Context %1 / %2 (%3%)").arg(header.contextUsed).arg(header.contextLimit)
                              .arg(Math.round(header.contextFraction * 100)),
                          "%1 / %2".arg(header.contextUsed).arg(header.contextLimit)]
                       : [qsTr("Context — / %1").arg(header.contextLimit), "— / %1".arg(header.contextLimit)]
                font.pixelSize: Theme.smallFontSize
                font.weight: header.contextWarning ? Font.Bold : Font.Normal
                color: header.contextWarning ? Theme.warningColor : Theme.mutedTextColor
                Accessible.name: header.contextWarning
                                 ? qsTr("Context almost full: %1").arg(texts[0]) : qsTr("Context use: %1").arg(texts[0])
            }
            ProgressBar {
                Layout.preferredWidth: 60
                Layout.maximumWidth: 60
                visible: header.contextLimit > 0
                from: 0
                to: 1
                value: Math.min(1, header.contextFraction)
                Material.accent: header.contextWarning ? Theme.warningColor : Theme.userBubbleColor
                Accessible.name: qsTr("Context use of pane %1").arg(header.paneNumber)
            }
        }
    }

    Rectangle {
        anchors.bottom: parent.bottom
        width: parent.width
        height: 1
        color: Theme.borderColor
    }
}
