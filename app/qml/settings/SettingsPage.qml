// A page of the settings dialog: a ScrollView whose scroll bar shows whenever the page is taller
// than the dialog (Material's scroll bars otherwise appear only while scrolling, and a page cut at
// its bottom edge gave no sign that more was below), beside the content rather than over it.
// The dialog scrolls every page back to its top when it opens.
import QtQuick
import QtQuick.Controls

ScrollView {
    id: page

    /// Scrolls back to the top.
    function scrollToTop() { ScrollBar.vertical.position = 0 }

    contentWidth: availableWidth
    // The content is as wide as the page: never a horizontal bar (one that showed while the page
    // settled sat over the buttons at its bottom and took their clicks).
    ScrollBar.horizontal.policy: ScrollBar.AlwaysOff
    rightPadding: ScrollBar.vertical.visible ? ScrollBar.vertical.width : 0
    ScrollBar.vertical.policy: contentHeight > height ? ScrollBar.AlwaysOn : ScrollBar.AsNeeded
}
