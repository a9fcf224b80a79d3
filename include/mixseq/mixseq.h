// mixseq: the library's public API, one header. Programs that use an installed mixseq
//   find_package(mixseq REQUIRED)
//   target_link_libraries(app PRIVATE mixseq::mixseq)
// include this header alone; it holds no LibTorch type. The other headers under include/mixseq/
// (layers util/ to serve/) are mixseq's internals: they are not installed and may change at any
// commit. docs/library.md shows an example program.
#pragma once

#include "mixseq/api/classifier.h"
#include "mixseq/api/language_model.h"
#include "mixseq/api/recognizer.h"
#include "mixseq/api/subwords.h"
#include "mixseq/api/synthesizer.h"
#include "mixseq/api/training.h"
#include "mixseq/api/translator.h"

