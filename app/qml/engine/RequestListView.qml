// The engine view's list of requests (EngineView.qml gives it its model and rows) under its
// heading. A file of its own so that the heading's Component is not bound: EngineView.qml is
// `pragma ComponentBehavior: Bound` (its rows use its ids), and Qt 6.4's ListView cannot create
// a bound header ("QQmlComponent: Component is not ready").
import QtQuick
import QtQuick.Controls

ListView {
    header: Label {
        text: qsTranslate("EngineView", "Requests")  // the engine view's string (its translation)
        font.weight: Font.Medium
    }
}
