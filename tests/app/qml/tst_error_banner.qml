// Qt Quick Test for ErrorBanner.qml: it shows the newest error only (an older one does not come
// back when a newer one clears), its close button hides it and asks to clear the error, and an
// app error's technical detail is one click away (Details) with a Retry button.
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

    SignalSpy {
        id: retrySpy
        signalName: "retryRequested"
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

        function test_detailsAndRetry() {
            const b = createTemporaryObject(bannerComponent, root, {
                appError: "The chat history could not be saved: the disk is full.",
                appDetail: "SQLite: database or disk is full (code 13) (database: /x/pagedchat.sqlite3)",
                appRetryable: true })
            const details = findChild(b, "errorBannerDetails")
            const detailText = findChild(b, "errorBannerDetailText")
            const retry = findChild(b, "errorBannerRetry")
            verify(details.visible && retry.visible)
            verify(!detailText.visible)  // one click away, not shown at first
            retrySpy.target = b
            retrySpy.clear()
            mouseClick(retry)
            compare(retrySpy.count, 1)
            compare(details.text, "Details")
            mouseClick(details)
            verify(detailText.visible)
            compare(detailText.text, b.appDetail)
            compare(details.text, "Hide details")
            // An engine error has no detail nor retry: neither button shows.
            b.engineError = "The model could not be loaded: bad file"
            verify(!details.visible && !retry.visible && !detailText.visible)
            // A new app error starts folded again.
            b.engineError = ""
            b.appError = "The chat history could not be read: the file is damaged."
            verify(details.visible && !detailText.visible)
        }
    }
}
