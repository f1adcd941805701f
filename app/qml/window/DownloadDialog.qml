// Models from the Hugging Face hub: search (or paste a repository), its files with their
// quantization, size, whether each fits this computer and the recommended one, a download with
// progress that can be stopped and resumed, then Load. Below, the models already downloaded.
pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import PagedChat
import "ComposingInput.js" as ComposingInput

Dialog {
    id: dialog

    /// The AppController (C++): downloads (DownloadController) and models.openModel().
    required property AppController app
    readonly property DownloadController downloads: app.downloads
    /// The row of `downloads.files` chosen (the recommended one when the list comes).
    property int chosen: -1

    objectName: "downloadDialog"
    title: qsTr("Download a model")
    modal: true
    width: Math.min(parent ? parent.width - 40 : 720, 720)
    height: Math.min(parent ? parent.height - 40 : 640, 640)
    anchors.centerIn: parent
    background: Rectangle {
        color: Theme.surfaceColor
        radius: Theme.radius
        border.color: Theme.borderColor
    }
    footer: DialogButtonBox {
        Button {
            objectName: "closeDownloadDialogButton"
            text: qsTr("Close")
            flat: true
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole  // qmllint disable type
            Accessible.name: qsTr("Close the download dialog")
        }
    }
    onAboutToShow: {
        dialog.downloads.refreshLocalModels()
        query.forceActiveFocus()
    }

    Connections {
        target: dialog.downloads
        function onFilesChanged() { dialog.chosen = dialog.downloads.recommendedIndex }
    }

    // Scrolls as a whole on a small window (720 x 480): no control is cut.
    ScrollView {
        id: scroller
        anchors.fill: parent
        contentWidth: availableWidth
        clip: true

        ColumnLayout {
            width: scroller.availableWidth
            spacing: 8

            RowLayout {
                Layout.fillWidth: true
                TextField {
                    id: query
                    objectName: "downloadQuery"
                    Layout.fillWidth: true
                    placeholderText: qsTr("Search, or paste a repository (e.g. Qwen/Qwen3-4B-GGUF)")
                    enabled: !dialog.downloads.busy
                    onAccepted: dialog.downloads.search(text)
                    Keys.onReturnPressed: (event) => { ComposingInput.commit(query); event.accepted = false }
                    Keys.onEnterPressed: (event) => { ComposingInput.commit(query); event.accepted = false }
                    Accessible.name: qsTr("Search the Hugging Face hub")
                }
                Button {
                    objectName: "downloadSearchButton"
                    text: qsTr("Search")
                    enabled: !dialog.downloads.busy && query.text.trim() !== ""
                    onClicked: dialog.downloads.search(query.text)
                    Accessible.name: qsTr("Search the Hugging Face hub")
                }
            }
            BusyIndicator {
                Layout.alignment: Qt.AlignHCenter
                Layout.preferredHeight: 32
                running: dialog.downloads.busy && !dialog.downloads.downloading
                visible: running
            }
            Label {
                objectName: "downloadError"
                Layout.fillWidth: true
                visible: text !== ""
                text: dialog.downloads.errorText
                color: Theme.errorColor
                wrapMode: Text.Wrap
                Accessible.role: Accessible.AlertMessage
                Accessible.name: text
            }

            // Search results: a click lists the repository's files.
            ListView {
                id: results
                objectName: "downloadResults"
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(count, 6) * 44
                visible: count > 0 && dialog.downloads.repo === ""
                clip: true
                model: dialog.downloads.results
                Accessible.name: qsTr("Repositories found")
                Accessible.role: Accessible.List
                ScrollBar.vertical: ScrollBar {}
                delegate: ItemDelegate {
                    id: result
                    required property var modelData
                    width: ListView.view.width
                    text: (result.modelData.gated ? qsTr("%1 (gated)").arg(result.modelData.id) : result.modelData.id)
                          + "   " + qsTr("%n download(s)", "", result.modelData.downloads)
                    onClicked: dialog.downloads.openRepo(result.modelData.id)
                    Accessible.name: qsTr("List the files of %1").arg(result.modelData.id)
                }
            }

            // The repository's models.
            RowLayout {
                Layout.fillWidth: true
                visible: dialog.downloads.repo !== ""
                Label {
                    Layout.fillWidth: true
                    text: dialog.downloads.repo
                    font.weight: Font.Medium
                    elide: Text.ElideMiddle
                    Accessible.name: text
                }
                Button {
                    flat: true
                    text: qsTr("Back to results")
                    visible: results.count > 0
                    enabled: !dialog.downloads.busy
                    onClicked: dialog.downloads.closeRepo()
                    Accessible.name: text
                }
            }
            ListView {
                id: files
                objectName: "downloadFiles"
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(Math.max(count, 1), 5) * 52
                visible: dialog.downloads.repo !== ""
                clip: true
                model: dialog.downloads.files
                Accessible.name: qsTr("Files of %1").arg(dialog.downloads.repo)
                Accessible.role: Accessible.List
                ScrollBar.vertical: ScrollBar {}
                delegate: ItemDelegate {
                    id: file
                    required property var modelData
                    required property int index
                    width: ListView.view.width
                    highlighted: dialog.chosen === file.index
                    enabled: !dialog.downloads.busy
                    onClicked: dialog.chosen = file.index
                    Accessible.name: qsTr("%1, %2%3%4").arg(file.modelData.label, file.modelData.sizeText,
                                                            file.modelData.fits ? "" : qsTr(", may not fit this computer"),
                                                            file.modelData.recommended ? qsTr(", recommended") : "")
                    contentItem: RowLayout {
                        spacing: 12
                        ColumnLayout {
                            // A fixed column (a layout with filling children would take a share
                            // of the row's spare width, row by row).
                            Layout.fillWidth: false
                            Layout.preferredWidth: 220
                            Layout.maximumWidth: 220
                            spacing: 0
                            Label {
                                text: file.modelData.label
                                font.weight: Font.Medium
                                Layout.fillWidth: true
                                elide: Text.ElideRight
                            }
                            Label {
                                text: file.modelData.path !== "" ? file.modelData.path : qsTr("%n file(s)", "", file.modelData.parts)
                                font.pixelSize: Theme.smallFontSize
                                color: Theme.mutedTextColor
                                Layout.fillWidth: true
                                elide: Text.ElideMiddle
                            }
                        }
                        Label {
                            text: file.modelData.sizeText
                            Layout.preferredWidth: 90
                        }
                        Label {
                            text: file.modelData.fits ? qsTr("fits") : qsTr("may not fit")
                            color: file.modelData.fits ? Theme.mutedTextColor : Theme.errorColor
                            Layout.preferredWidth: 90
                        }
                        Label {
                            text: file.modelData.recommended ? qsTr("recommended") : ""
                            color: Material.accentColor
                            Layout.fillWidth: true
                            elide: Text.ElideRight
                        }
                    }
                }
            }

            RowLayout {
                Layout.fillWidth: true
                visible: dialog.downloads.repo !== "" || dialog.downloads.downloading || dialog.downloads.downloadedPath !== ""
                Button {
                    objectName: "downloadButton"
                    text: qsTr("Download")
                    highlighted: true
                    enabled: !dialog.downloads.busy && dialog.chosen >= 0
                    onClicked: dialog.downloads.download(dialog.chosen)
                    Accessible.name: qsTr("Download the chosen file")
                }
                Button {
                    objectName: "cancelDownloadButton"
                    text: qsTr("Stop")
                    visible: dialog.downloads.downloading
                    onClicked: dialog.downloads.cancel()
                    Accessible.name: qsTr("Stop the download")
                }
                Button {
                    objectName: "loadDownloadedButton"
                    text: qsTr("Load it")
                    visible: dialog.downloads.downloadedPath !== "" && !dialog.downloads.busy
                    onClicked: {
                        dialog.app.models.openModel(dialog.downloads.downloadedPath)
                        dialog.close()
                    }
                    Accessible.name: qsTr("Load the downloaded model")
                }
                ProgressBar {
                    objectName: "downloadProgress"
                    Layout.fillWidth: true
                    visible: dialog.downloads.downloading
                    from: 0
                    to: 1
                    indeterminate: dialog.downloads.progress < 0
                    value: Math.max(0, dialog.downloads.progress)
                    Accessible.name: qsTr("Download progress")
                    Accessible.description: Math.round(value * 100) + "%"
                }
            }
            Label {
                objectName: "downloadStatus"
                Layout.fillWidth: true
                visible: text !== ""
                text: dialog.downloads.statusText
                color: Theme.mutedTextColor
                wrapMode: Text.Wrap
                Accessible.name: text
            }

            // What is already in the models folder.
            Label {
                text: qsTr("On this computer (%1)").arg(dialog.downloads.modelsFolder)
                font.weight: Font.Medium
                Layout.fillWidth: true
                elide: Text.ElideMiddle
                Accessible.name: text
            }
            ListView {
                id: local
                objectName: "localModels"
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(Math.max(count, 1), 4) * 44
                clip: true
                model: dialog.downloads.localModels
                Accessible.name: qsTr("Downloaded models")
                Accessible.role: Accessible.List
                ScrollBar.vertical: ScrollBar {}
                delegate: ItemDelegate {
                    id: localModel
                    required property var modelData
                    width: ListView.view.width
                    text: qsTr("%1 (%2)").arg(localModel.modelData.name, localModel.modelData.sizeText)
                    onClicked: {
                        dialog.app.models.openModel(localModel.modelData.path)
                        dialog.close()
                    }
                    Accessible.name: qsTr("Load %1").arg(localModel.modelData.name)
                }
                Label {
                    anchors.centerIn: parent
                    visible: local.count === 0
                    text: qsTr("No model downloaded yet.")
                    color: Theme.mutedTextColor
                }
            }
        }
    }
}
