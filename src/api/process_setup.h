// What the mixseq program's main() does before a command runs, for the library's facades
// (api/translator.h, api/language_model.h): once per process, since the settings are process-wide
// and another facade may be computing on another thread meanwhile.
#pragma once

#include <string>

namespace mixseq::api {

// threads >= 0: OpenBLAS's kernels for this CPU (util/cpu_kernels.h: Debian's OpenBLAS picks SSE3
// ones on CPUs newer than it, 2x slower beam search measured from Python), freed memory kept for
// reuse (util/allocator.h), and the thread count of `mixseq --threads`; the first call decides.
// -1 leaves the process as it is. `option` names the setting in errors ("TranslatorOptions::threads").
void configure_process_threads(int threads, const std::string& option);

}  // namespace mixseq::api
