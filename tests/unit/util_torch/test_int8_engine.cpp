#include "mixseq/util/int8_engine.h"

#include <gtest/gtest.h>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

TEST(Int8Engine, PrefersOnednnThenFbgemmAndNeverQnnpack) {
  using at::QEngine;
  EXPECT_EQ(choose_int8_engine({QEngine::NoQEngine, QEngine::QNNPACK, QEngine::ONEDNN}), QEngine::ONEDNN);
  EXPECT_EQ(choose_int8_engine({QEngine::FBGEMM, QEngine::ONEDNN}), QEngine::ONEDNN);
  EXPECT_EQ(choose_int8_engine({QEngine::FBGEMM, QEngine::QNNPACK}), QEngine::FBGEMM);
}

// A LibTorch without an x86 int8 engine (an ARM build, or one built without them): a clear error
// naming what there is and what to do instead, not a LibTorch trace at the first quantized op.
TEST(Int8Engine, NoUsableEngineIsAClearError) {
  EXPECT_EQ(test::error_of([] { choose_int8_engine({at::QEngine::NoQEngine, at::QEngine::QNNPACK}); }),
            "int8 execution needs LibTorch's ONEDNN or FBGEMM quantized engine; this LibTorch has NoQEngine, "
            "QNNPACK here. Run the model in float, or quantized in simulation (mode: simulated)");
  EXPECT_NE(test::error_of([] { choose_int8_engine({}); }).find("this LibTorch has none here"), std::string::npos);
}

}  // namespace
}  // namespace mixseq
