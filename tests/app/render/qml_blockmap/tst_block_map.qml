// BlockMapItem in QML: lays 64 blocks out as square cells filling the item, maps positions to
// blocks, colours each block by its state (in use, shared, cached, free), follows size changes,
// and paints what it says (read back with grabToImage).
import QtQuick
import QtTest
import PagedChat

Item {
    id: root
    width: 200
    height: 200

    BlockMapItem {
        id: map
        width: 160
        height: 160
        monitor: testMonitor
        paneColors: ["#3f51b5", "#e65100"]
        otherColor: "#00ff00"
        freeColor: "#ffffff"
        cachedColor: "#ff0000"
        sharedMarkColor: "#000000"
    }

    TestCase {
        name: "BlockMap"
        when: windowShown

        function test_layout() {
            compare(map.columns, 8)
            compare(map.cellSize, 20)
            compare(map.blockAt(5, 5), 0)
            compare(map.blockAt(45, 5), 2)
            compare(map.blockAt(5, 45), 16)
            compare(map.blockAt(159, 159), 63)
            compare(map.blockAt(161, 5), -1)
        }

        function test_colours() {
            // Requests without a pane take otherColor; a cached free block cachedColor.
            compare(map.colorOf(0), Qt.color("#00ff00"))
            compare(map.colorOf(1), Qt.color("#00ff00"))
            compare(map.colorOf(2), Qt.color("#ff0000"))
            compare(map.colorOf(3), Qt.color("#ffffff"))
            compare(testMonitor.blockFlags(0) & 2, 2)   // shared
            compare(testMonitor.blockFlags(1) & 2, 0)
        }

        function test_paint() {
            const image = grabImage(map)
            verify(Qt.colorEqual(image.pixel(15, 15), "#00ff00"))  // block 0's fill
            verify(Qt.colorEqual(image.pixel(2, 2), "#000000"))    // its shared mark
            verify(Qt.colorEqual(image.pixel(22, 2), "#00ff00"))   // block 1: no mark
            verify(Qt.colorEqual(image.pixel(50, 10), "#ffffff"))  // block 2: cached, inside
            verify(Qt.colorEqual(image.pixel(42, 10), "#ff0000"))  //   and its outline
            verify(Qt.colorEqual(image.pixel(70, 10), "#ffffff"))  // block 3: free
        }

        function test_resize() {
            map.width = 80
            map.height = 40
            // 64 cells in 80 x 40: 16 columns of 5 px, 4 rows.
            verify(map.columns * map.cellSize <= 80)
            verify(Math.ceil(64 / map.columns) * map.cellSize <= 40)
            verify(map.cellSize >= 4)
            map.width = 160
            map.height = 160
            compare(map.cellSize, 20)
        }
    }
}
