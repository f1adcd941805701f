// Qt Quick Test for ErrorBanner.qml: it shows the newest error only (an older one does not come
// back when a newer one clears), and its close button hides it and asks to clear the error.
import QtQuick
import QtTest
import PagedChat

Item {
    id: root
    width: 600
    height: 200

    Component {
        id: bannerComponent
        ErrorBanner { width: 600 }
    }

    SignalSpy {
        id: closeSpy
        signalName: "closeRequested"
    }

    TestCase {
        name: "ErrorBanner"
        when: windowShown

        function test_newestErrorOnly() {
            const b = createTemporaryObject(bannerComponent, root)
            verify(!b.visible)
            b.appError = "Cannot import x.json"
            verify(b.visible)
            compare(b.message, "Cannot import x.json")
            b.engineError = "The model could not be loaded: bad file"
            compare(b.message, "The model could not be loaded: bad file")
            b.engineError = ""  // the load error clears: the old import error stays gone
            verify(!b.visible)
            compare(b.message, "")
            b.appError = "Cannot write y.md"
            compare(b.message, "Cannot write y.md")
            b.appError = ""
            verify(!b.visible)
        }

        function test_closeButton() {
            const b = createTemporaryObject(bannerComponent, root, { appError: "Cannot import x.json" })
            verify(b.visible)
            closeSpy.target = b
            closeSpy.clear()
            const close = findChild(b, "errorBannerClose")
            verify(close && close.visible)
            compare(close.Accessible.name, "Dismiss error")
            mouseClick(close)
            compare(closeSpy.count, 1)
            verify(!b.visible)
            b.appError = ""  // what Main.qml's clearError() does
            b.appError = "Cannot import x.json"  // the same error again shows again
            verify(b.visible)
        }
    }
}
