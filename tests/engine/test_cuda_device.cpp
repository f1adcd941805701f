// CUDA build path: the CUDA library links and answers; skips (saying why) without a GPU.
#include <QtTest>

#include "kernels/cuda/cuda_device.h"

class TestCudaDevice : public QObject {
  Q_OBJECT
 private slots:
  void deviceQuery() {
    const int n = pagedchat::cuda::device_count();
    QVERIFY(n >= 0);
    QVERIFY(pagedchat::cuda::device_name(n).empty());  // one past the last device
    if (n == 0) QSKIP("no CUDA GPU on this machine (or no driver): CUDA device tests skipped");
    const std::string name = pagedchat::cuda::device_name(0);
    qInfo("CUDA device 0: %s", name.c_str());
    QVERIFY(name.find("sm_") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestCudaDevice)
#include "test_cuda_device.moc"
