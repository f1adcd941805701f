// The main window: conversation list on the left, chat panes side by side, status line below.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat

ApplicationWindow {
    id: window

    /// The AppController (C++): engine, conversations, panes.
    required property AppController app

    width: 1280
    height: 800
    minimumWidth: 720
    minimumHeight: 480
    visible: true
    title: qsTr("PagedChat")
    color: Theme.windowColor

    Material.theme: Theme.dark ? Material.Dark : Material.Light
    Material.primary: Theme.primary
    Material.accent: Theme.accent
    font.pixelSize: Theme.uiFontSize

    // The saved appearance (AppController) drives the Theme singleton.
    Binding { target: Theme; property: "mode"; value: window.app.appearance.theme }
    Binding { target: Theme; property: "fontSize"; value: window.app.appearance.fontSize }

    /// The conversation list is shown (the tool bar's menu button toggles it).
    property bool sidebarOpen: true
    /// Panes never get narrower than this; when they cannot all fit, the row of panes scrolls.
    readonly property int paneMinimumWidth: 240

    /// Scrolls the row of panes so that pane `index` is fully visible.
    function showPane(index) {
        const pane = paneRepeater.itemAt(index)
        if (!pane || paneScroller.contentWidth <= paneScroller.width)
            return
        if (pane.x < paneScroller.contentX)
            paneScroller.contentX = pane.x
        else if (pane.x + pane.width > paneScroller.contentX + paneScroller.width)
            paneScroller.contentX = pane.x + pane.width - paneScroller.width
    }

    header: AppToolBar {
        panes: window.app.panes
        app: window.app
        sidebarOpen: window.sidebarOpen
        onSidebarToggled: window.sidebarOpen = !window.sidebarOpen
        onModelPickerRequested: modelPicker.open()
        onEngineViewRequested: window.showEngineView()
        onSettingsRequested: settingsDialog.open()
    }

    // The engine view window goes with the main window (the app quits when both are closed).
    // Changes of the user's that wait to be saved are lost on quitting: the window asks first.
    onClosing: (close) => {
        if (unsavedDialog.shouldAsk()) {
            close.accepted = false
            unsavedDialog.open()
            return
        }
        engineWindow.close()
    }

    /// Quits (Ctrl+Q), after asking when changes wait to be saved.
    function requestQuit() {
        if (unsavedDialog.shouldAsk())
            unsavedDialog.open()
        else
            Qt.quit()
    }

    // Links in messages: a web or mail link asks first, showing where it leads (LinkPolicy).
    OpenLinkDialog {
        id: openLinkDialog
        parent: Overlay.overlay
    }
    Connections {
        target: LinkPolicy
        function onConfirmationRequested(link, target) { openLinkDialog.ask(link, target) }
    }

    UnsavedQuitDialog {
        id: unsavedDialog
        errors: window.app.errors
        onQuitConfirmed: Qt.quit()
    }

    /// Shows the live engine view window (raising it when already open).
    function showEngineView() {
        engineWindow.show()
        engineWindow.raise()
        engineWindow.requestActivate()
    }

    ModelPicker {
        id: modelPicker
        app: window.app
        onDownloadRequested: {
            modelPicker.close()
            downloadDialog.open()
        }
    }
    DownloadDialog {
        id: downloadDialog
        app: window.app
    }
    // An ApplicationWindow with the main window's theme, colours and font size.
    ApplicationWindow {
        id: engineWindow
        objectName: "engineWindow"
        title: qsTr("PagedChat engine view")
        width: 900
        height: 640
        minimumWidth: 480
        minimumHeight: 360
        color: Theme.windowColor
        Material.theme: Theme.dark ? Material.Dark : Material.Light
        Material.primary: Theme.primary
        Material.accent: Theme.accent
        font.pixelSize: Theme.uiFontSize
        EngineView {
            anchors.fill: parent
            monitor: window.app.monitor
            shown: engineWindow.visible
        }
    }
    Shortcut {
        // Qt 6.4's qmllint does not resolve the StandardKey enum (QKeySequence's, in QtQuick).
        sequences: [StandardKey.Open]  // qmllint disable unqualified
        onActivated: modelPicker.open()
    }
    Shortcut {
        sequences: ["Ctrl+Shift+E"]
        onActivated: window.showEngineView()
    }

    footer: StatusLine {
        engine: window.app.engine
        throughput: window.app.throughput
        dataDir: window.app.dataDir
        localModels: window.app.localModels
    }

    QuitShortcut {
        onQuitRequested: window.requestQuit()
    }

    /// The blind-compare bar is shown (two panes or more). Updated after a pane is added or
    /// closed rather than during it: re-laying out the window while the Repeater is still
    /// removing a pane crashes Qt 6.4's RowLayout.
    property bool compareBarShown: false
    Component.onCompleted: compareBarShown = app.panes.count > 1
    Connections {
        target: window.app.panes
        // Qt.callLater is a method: Qt 6.4's qmllint takes it for a QJSValue property, hence the
        // `qmllint disable type` on its calls in this file.
        function onCountChanged() { Qt.callLater(() => window.compareBarShown = window.app.panes.count > 1) }  // qmllint disable type
    }

    /// The current pane's item (null while panes are rebuilt).
    function currentPane() { return paneRepeater.itemAt(window.app.panes.currentIndex) }
    function openSettings() { settingsDialog.open() }

    Shortcut {
        sequence: "Ctrl+N"
        context: Qt.ApplicationShortcut
        onActivated: window.app.history.newConversation()
    }
    Shortcut {
        sequence: "Ctrl+Shift+N"
        context: Qt.ApplicationShortcut
        enabled: window.app.panes.canAddPane
        // The new pane becomes current; its input box gets the keyboard focus once it exists.
        onActivated: {
            if (window.app.panes.addPane())
                Qt.callLater(() => {  // qmllint disable type
                    const pane = window.currentPane()
                    if (pane)
                        pane.focusInput()
                })
        }
    }
    Shortcut {
        sequence: "Ctrl+W"
        context: Qt.ApplicationShortcut
        enabled: window.app.panes.canClosePane
        onActivated: window.app.panes.closePane(window.app.panes.currentIndex)
    }
    Shortcut {
        sequence: "Ctrl+,"
        context: Qt.ApplicationShortcut
        onActivated: window.openSettings()
    }
    Shortcut {
        // Esc stops the current pane's reply (every pane's while sending to all panes).
        sequence: "Esc"
        context: Qt.WindowShortcut
        enabled: window.app.panes.anyBusy && !settingsDialog.visible
        onActivated: {
            if (window.app.panes.sendToAllEnabled || window.app.compare.enabled)
                window.app.panes.stopAll()
            else if (window.app.panes.currentPane)
                window.app.panes.currentPane.stop()
        }
    }

    SettingsDialog {
        id: settingsDialog
        app: window.app
        parent: Overlay.overlay
        anchors.centerIn: parent
    }

    Connections {
        target: window.app.panes
        function onCurrentIndexChanged() { Qt.callLater(window.showPane, window.app.panes.currentIndex) }  // qmllint disable type
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        ErrorBanner {
            Layout.fillWidth: true
            objectName: "errorBanner"
            engineError: window.app.engine.loadError !== ""
                         ? qsTr("The model could not be loaded: %1").arg(window.app.engine.loadError) : ""
            appError: window.app.errors.text
            appDetail: window.app.errors.detail
            appRetryable: window.app.errors.retryable
            onCloseRequested: window.app.errors.clear()
            onRetryRequested: window.app.errors.retry()
        }

        CompareBar {
            Layout.fillWidth: true
            Layout.leftMargin: 12
            Layout.rightMargin: 12
            Layout.topMargin: 8
            visible: window.compareBarShown
            compare: window.app.compare
            panes: window.app.panes
        }

        RowLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.margins: 12
            spacing: 12

            ConversationList {
                objectName: "conversationList"
                visible: window.sidebarOpen
                // Narrower when three or four panes share the window (all four fit at 1280 px).
                Layout.preferredWidth: window.app.panes.count >= 3 ? 220 : 260
                Layout.fillHeight: true
                app: window.app
                onSearchOpened: window.sidebarOpen = true
            }

            // The panes share the width; below paneMinimumWidth each, the row scrolls sideways
            // (scroll bar below it) so that every pane's buttons stay reachable.
            Flickable {
                id: paneScroller
                objectName: "paneScroller"
                Layout.fillWidth: true
                Layout.fillHeight: true
                readonly property bool overflows: contentWidth > width
                contentWidth: Math.max(width, window.app.panes.count * window.paneMinimumWidth
                                              + (window.app.panes.count - 1) * paneRow.spacing)
                contentHeight: height
                bottomMargin: overflows ? 12 : 0
                clip: overflows
                interactive: false  // dragging selects text in the panes; the scroll bar scrolls
                boundsBehavior: Flickable.StopAtBounds
                // Keep the current pane in view when the window narrows or panes come and go.
                onWidthChanged: Qt.callLater(window.showPane, window.app.panes.currentIndex)  // qmllint disable type
                onContentWidthChanged: Qt.callLater(window.showPane, window.app.panes.currentIndex)  // qmllint disable type
                ScrollBar.horizontal: ScrollBar {
                    policy: paneScroller.overflows ? ScrollBar.AlwaysOn : ScrollBar.AlwaysOff
                    Accessible.name: qsTr("Scroll chat panes")
                }

                // A Row, not a RowLayout: Qt 6.4's RowLayout can crash re-laying out while its
                // Repeater removes a closed pane.
                Row {
                    id: paneRow
                    width: paneScroller.contentWidth
                    height: paneScroller.height - paneScroller.bottomMargin
                    spacing: 12
                    readonly property real paneWidth: (width - spacing * (window.app.panes.count - 1))
                                                      / Math.max(1, window.app.panes.count)

                    Repeater {
                        id: paneRepeater
                        model: window.app.panes
                        delegate: ChatPane {
                            width: paneRow.paneWidth
                            height: paneRow.height
                            panes: window.app.panes
                            engine: window.app.engine
                            compare: window.app.compare
                            endpoints: window.app.endpoints
                            localModels: window.app.localModels
                            onDownloadRequested: downloadDialog.open()
                            onModelPickerRequested: modelPicker.open()
                        }
                    }
                }
            }
        }
    }
}
