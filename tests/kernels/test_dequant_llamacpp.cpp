// Dequantization against llama.cpp's own (tests/data/dequant, made by make_reference.sh with
// llama.cpp b4747; IQ4_NL and IQ4_XS by make_reference_ik.sh with ik_llama.cpp 8337e4cd3): for
// every block type this engine reads, the blocks llama-quantize wrote for a
// random model (tiny, huge, zero, one-signed, offset and outlier rows) and blocks of random bytes
// (any scale, sub-scale and code, subnormal, infinite and NaN scales included) must give exactly
// the floats ggml's to_float gives, bit for bit (a NaN only has to stay a NaN).
#include <QTest>

#include <QFile>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/quant/dtype.h"

using pagedchat::kernels::DType;

namespace {

QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestDequantLlamaCpp : public QObject {
  Q_OBJECT
 private slots:
  void sameBitsAsLlamaCpp_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<QString>("kind");
    // (IQ4_NL and IQ4_XS: ik_llama.cpp's quantizer and to_float, make_reference_ik.sh.)
    for (DType t : {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kQ4_K, DType::kQ5_K,
                    DType::kQ6_K, DType::kIQ4_NL, DType::kIQ4_XS})
      for (const char* kind : {"quantized", "random"})
        QTest::addRow("%s %s", pagedchat::kernels::dtype_name(t), kind) << int(t) << QString::fromLatin1(kind);
  }

  void sameBitsAsLlamaCpp() {
    QFETCH(int, type);
    QFETCH(QString, kind);
    const DType t = DType(type);
    const QString base = QStringLiteral(PAGEDCHAT_SOURCE_DIR "/tests/data/dequant/%1.%2")
                             .arg(kind, QString::fromLatin1(pagedchat::kernels::dtype_name(t)));
    const QByteArray blocks = readFile(base + QStringLiteral(".blocks"));
    const QByteArray want = readFile(base + QStringLiteral(".f32"));
    QVERIFY2(!blocks.isEmpty() && !want.isEmpty(), qPrintable(base + " is missing"));
    const int be = pagedchat::kernels::dtype_block_bytes(t), ne = pagedchat::kernels::dtype_block_elems(t);
    QCOMPARE(blocks.size() % be, 0);
    const int64_t n = int64_t(blocks.size() / be) * ne;
    QCOMPARE(int64_t(want.size()), n * int64_t(sizeof(float)));
    std::vector<float> got(static_cast<std::size_t>(n)), ref(static_cast<std::size_t>(n));
    std::memcpy(ref.data(), want.constData(), static_cast<std::size_t>(want.size()));
    pagedchat::kernels::dequantize_row(t, blocks.constData(), got.data(), n);
    int nans = 0, subnormals = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(ref[i])) {
        ++nans;
        QVERIFY2(std::isnan(got[i]), qPrintable(QStringLiteral("value %1: NaN expected, got %2").arg(i).arg(got[i])));
        continue;
      }
      if (ref[i] != 0.0f && std::fpclassify(ref[i]) == FP_SUBNORMAL) ++subnormals;
      uint32_t a, b;
      std::memcpy(&a, &got[i], 4);
      std::memcpy(&b, &ref[i], 4);
      if (a != b)
        QFAIL(qPrintable(QStringLiteral("value %1 (block %2): %3 (0x%4), llama.cpp %5 (0x%6)")
                             .arg(i)
                             .arg(i / ne)
                             .arg(double(got[i]), 0, 'g', 9)
                             .arg(a, 8, 16, QLatin1Char('0'))
                             .arg(double(ref[i]), 0, 'g', 9)
                             .arg(b, 8, 16, QLatin1Char('0'))));
    }
    qInfo("%lld values, %d NaN, %d subnormal", static_cast<long long>(n), nans, subnormals);
  }
};

QTEST_GUILESS_MAIN(TestDequantLlamaCpp)
#include "test_dequant_llamacpp.moc"
