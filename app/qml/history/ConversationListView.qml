// The conversation list's ListView (ConversationList.qml gives it its model and rows) with the
// date headings between the rows (Pinned, Today, Yesterday, ...). A file of its own so that the
// headings' Component is not bound: ConversationList.qml is `pragma ComponentBehavior: Bound`
// (its rows use its ids), and Qt 6.4's ListView cannot create a bound section delegate
// ("QQmlComponent: Component is not ready").
import QtQuick
import QtQuick.Controls
import PagedChat

ListView {
    id: view

    /// The headings' delegate.
    property Component heading: Label {
        objectName: "sectionHeading"
        required property string section
        width: ListView.view.width
        topPadding: 8
        bottomPadding: 2
        leftPadding: 12
        text: section
        font.pixelSize: 11
        font.weight: Font.DemiBold
        font.capitalization: Font.AllUppercase
        color: Theme.mutedTextColor
        Accessible.role: Accessible.Heading
        Accessible.name: section
    }

    /// Makes the view create its headings afresh: Qt 6.4's ListView keeps the text of the headings
    /// it had when the model is reset (the rows re-sorted or regrouped: a pin, an import, a reply
    /// that moved a conversation, a language switch), so rows showed under the wrong heading.
    /// Setting the section delegate again drops the old heading items.
    function renewHeadings() {
        section.delegate = null
        section.delegate = heading
    }

    section.property: "section"
    section.criteria: ViewSection.FullString
    section.delegate: heading

    Connections {
        target: view.model as ConversationListModel
        function onModelReset() { view.renewHeadings() }
    }
}
