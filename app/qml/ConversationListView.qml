// The conversation list's ListView (ConversationList.qml gives it its model and rows) with the
// date headings between the rows (Pinned, Today, Yesterday, ...). A file of its own so that the
// headings' Component is not bound: ConversationList.qml is `pragma ComponentBehavior: Bound`
// (its rows use its ids), and Qt 6.4's ListView cannot create a bound section delegate
// ("QQmlComponent: Component is not ready").
import QtQuick
import QtQuick.Controls
import PagedChat

ListView {
    section.property: "section"
    section.criteria: ViewSection.FullString
    section.delegate: Label {
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
}
