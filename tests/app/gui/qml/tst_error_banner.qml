// Qt Quick Test for ErrorBanner.qml: it shows the newest error only (an older one does not come
// back when a newer one clears), its close button hides it and asks to clear the error, and an
// app error's technical detail is one click away (Details) with a Retry button.
import QtQuick
import QtTest
import PagedChat

Item {
    id: root
    width: 1280
    height: 200

    Component {
        id: bannerComponent
        ErrorBanner { width: 600 }
    }

    Component {
        id: wideBannerComponent
        ErrorBanner { width: 1280 }
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

        // The buttons sit right of the text, never over it, whatever came before: a long message
        // without buttons that gets them, one shown after the banner was hidden, one replaced.
        function test_buttonsBesideTheText() {
            const b = createTemporaryObject(wideBannerComponent, root)
            const label = findChild(b, "errorBannerText")
            const details = findChild(b, "errorBannerDetails")
            const retry = findChild(b, "errorBannerRetry")
            const close = findChild(b, "errorBannerClose")
            function besideTheText() {
                const end = label.mapToItem(b, label.width, 0).x
                for (const button of [details, retry, close]) {
                    if (button.visible && button.mapToItem(b, 0, 0).x < end - 0.5)
                        return false
                }
                return label.width > 100
            }
            const longText = "The chat history could not be saved: another program is using the chat history file. "
                + "PagedChat keeps what you wrote and tries again; nothing is lost while it stays open."
            b.appError = "The chat history could not be saved: another program is using the chat history file."
            tryVerify(besideTheText)
            b.appDetail = "SQLite: database is locked (code 5) (database: /x/pagedchat.sqlite3)"
            b.appRetryable = true
            b.appError = longText
            verify(details.visible && retry.visible)
            tryVerify(besideTheText)
            b.appError = ""
            b.appDetail = ""
            b.appRetryable = false
            verify(!b.visible)
            b.appRetryable = true
            b.appDetail = "SQLite: database is locked (code 5) (database: /x/pagedchat.sqlite3)"
            b.appError = longText
            tryVerify(besideTheText)
            b.appError = longText + " Again."
            tryVerify(besideTheText)
        }
    }
}
