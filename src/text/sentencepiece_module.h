// The boundary between mixseq and libsentencepiece.
//
// Debian's libsentencepiece 0.1.97 carries its own protobuf-lite 3.14 and exports its
// symbols; LibTorch loads Debian's libprotobuf 3.21. Linked into one program, the two share
// one global symbol scope, each binds to the other's protobuf, and the program dies before
// main() (a segfault, or protobuf's version check; google/sentencepiece#723, #927). So only
// the module mixseq_sentencepiece (src/text/sentencepiece_module/) links libsentencepiece,
// and mixseq opens it with dlopen(RTLD_LOCAL | RTLD_DEEPBIND): libsentencepiece binds to its
// own protobuf first and its symbols stay out of the global scope.
//
// DEEPBIND has one cost: the module binds to libstdc++'s and libc's own globals (std::cerr,
// __libc_single_threaded, ...), never to a copy the program holds. A program compiled -fPIE has
// such copies (copy relocations) and only they are constructed and kept up to date, so the module
// would write to an unconstructed std::cerr (a crash at libsentencepiece's first log line, issue
// 11). mixseq's programs are compiled -fPIC (CMakeLists.txt), and functions() refuses to open the
// module in a program that holds such a copy, with an error saying so.
//
// AddressSanitizer refuses any dlopen with RTLD_DEEPBIND (it would let the module bypass its
// interceptors of malloc and free) and kills the program. So builds with ASan (MIXSEQ_SANITIZE,
// docs/reliability.md) have no SentencePiece: functions() throws an Error that says so, and the
// SentencePiece tests skip themselves. Loading the module without DEEPBIND there would test a
// different binding from the one users run.
//
// Only this interface crosses the boundary (both sides are built by the same compiler
// against the same libstdc++); failures come back as messages, not exceptions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mixseq::sentencepiece_module {

constexpr int kInterfaceVersion = 2;  // bump on any change below

// A loaded model. Const methods are thread-safe, as libsentencepiece's are.
class Processor {
 public:
  virtual ~Processor() = default;
  // Each returns "" on success, else libsentencepiece's message.
  virtual std::string encode(std::string_view line, std::vector<std::string>& pieces) const = 0;
  virtual std::string decode(const std::vector<std::string>& pieces, std::string& text) const = 0;
};

// Training sentences, pulled one at a time by the trainer.
class SentenceSource {
 public:
  virtual ~SentenceSource() = default;
  virtual bool next(std::string& sentence) = 0;  // false at the end, or after an error
  virtual std::string error() const = 0;         // "" unless reading failed
};

struct Functions {
  int interface_version;
  // The model at `path`, or nullptr with `error` set.
  std::unique_ptr<Processor> (*load)(const std::string& path, std::string& error);
  // Runs SentencePieceTrainer::Train with `options` (trainer flag name -> value) on `sentences`,
  // seeding libsentencepiece's generator with `seed`; returns "" on success, else the message.
  // Writes no file: the model comes back serialized in `model`, and in `vocabulary` the text of
  // spm_train's <prefix>.vocab ("piece<TAB>score" lines), for mixseq to write and check.
  std::string (*train)(const std::unordered_map<std::string, std::string>& options, uint32_t seed,
                       SentenceSource& sentences, std::string& model, std::string& vocabulary);
};

// Opens the module once per process (thread-safe) and returns its functions; throws
// mixseq::Error naming the module's path when it cannot. The path is
// <libmixseq.so's folder>/mixseq/libmixseq_sentencepiece.so from code in libmixseq.so, else
// <program's folder>/../lib/mixseq/libmixseq_sentencepiece.so (the build tree and an installed
// prefix alike), or $MIXSEQ_SENTENCEPIECE_MODULE when that is set.
const Functions& functions();

// Why this build cannot open the module ("" when it can): non-empty in AddressSanitizer builds.
std::string_view unavailable_reason();

}  // namespace mixseq::sentencepiece_module

// The module's one exported symbol.
extern "C" const mixseq::sentencepiece_module::Functions* mixseq_sentencepiece_module_functions();
