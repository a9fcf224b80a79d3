// Output files. OutputFile writes a regular file as "<path>.tmp" and renames it over <path> on
// commit(), so a reader (or a resumed run) never sees a half-written file and a failed write leaves
// <path> as it was. A symbolic link is followed: the file it points to is replaced that way and the
// link stays. What exists and is not a regular file (a fifo, a terminal, /dev/null, /dev/full) and
// the names of open files (/dev/stdout, /dev/fd/N) are written directly, as nothing can be renamed
// over them; "-" writes to standard output. Every open, write, flush and close error throws
// mixseq::Error naming the file and the system's reason ("No space left on device").
// One writer per OutputFile; nothing is shared between instances but std::cout.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace mixseq {

struct OutputFileOptions {
  bool sync_to_disk = false;  // fsync the temporary file before the rename (checkpoints): a crash
                              // then leaves the old file or the whole new one; false = the OS decides
};

class OutputFile {
 public:
  explicit OutputFile(const std::string& path, const OutputFileOptions& options = {});
  ~OutputFile();  // without commit(), a temporary file is removed and <path> is untouched
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return *out_; }
  // Hands what was written so far on (a streaming command's batch, to a reader at the other end of a
  // pipe), and throws, naming the file and the system's reason, if any of it could not be written:
  // a full disk or a closed pipe stops the command there, not after the whole input.
  void flush();
  // Flushes and checks every byte was written, then renames the temporary file into place.
  void commit();

  // A std::streambuf over a file descriptor that keeps the first error (output_file.cpp; also
  // standard output's buffer, keep_standard_output_errors).
  class DescriptorBuffer;

 private:
  std::string path_;            // as given, for messages
  std::string temporary_path_;  // "<target>.tmp" renamed over target_ on commit(); "" when writing directly
  std::string target_;          // the file replaced on commit(): path_, or where its symbolic links end
  OutputFileOptions options_;
  std::unique_ptr<DescriptorBuffer> buffer_;
  std::unique_ptr<std::ostream> file_;
  std::ostream* out_;
  bool committed_ = false;
};

// Sends std::cout through a buffer of mixseq's own over descriptor 1 that keeps the first failing
// write's reason, where standard output is not a terminal (to a terminal std::cout stays on
// stdio's line-buffered stdout). Why: over stdio, a write that failed inside an operator<< (a
// full disk, `> /dev/full`) left errno to be overwritten before anyone asked, and the command
// could only say that "an earlier write failed". For main(), before anything is printed; once.
void keep_standard_output_errors();

// Why standard output could not be written: the first failed write's reason where
// keep_standard_output_errors() holds it, else errno's, or, where a write that failed inside an
// operator<< (std::cout over stdio's stdout) left none, the likely causes.
std::string standard_output_error();

// Creates the folder `path` and the folders above it that are missing (an existing folder is left
// as it is); throws mixseq::Error naming it and why not: "cannot create the folder 'out/audio':
// 'out' is not a folder" where std::filesystem says "cannot create directories: Not a directory".
// (OutputFile makes its file's folders with it, and puts "cannot write '<path>': " before that.)
void create_folder(const std::string& path);

// A file named on a command line, with the flag that named it, for messages ("--checkpoint").
struct NamedPath {
  std::string flag;
  std::string path;
};

// True when `a` and `b` are the same existing regular file: the same device and inode once
// symbolic links are followed (so "./x", a link to x and a hard link of x all count). Paths that
// are "-", do not exist or are not regular files (a terminal, /dev/stdin, a fifo) are never the
// same: `-i /dev/stdin -o /dev/stdout` on one terminal reads and writes different streams.
bool same_regular_file(const std::string& a, const std::string& b);

// A command must never replace a file it reads (issue 29: `quantize -o` onto its own `-c`
// replaced the float checkpoint; `translate -c ck.pt -o ck.pt` turned a checkpoint into text).
// Throws mixseq::Error naming both flags when `output` is the same file as one of `inputs`.
// main() calls it for every subcommand before the command runs, with its -o/--output against
// every other option's values, and an input option left at "-" (cli/main.cpp); commands whose
// inputs are not options' values
// (files found in a folder) call it themselves.
void refuse_output_over_inputs(const NamedPath& output, const std::vector<NamedPath>& inputs);

// The files a command reads, known by identity (device and inode, links followed), for commands
// that write many files or files a folder's name leads to (`prepare -o DIR` writes DIR/train.tsv,
// `synthesize -o DIR` writes DIR/000001.wav): each output is refused as refuse_output_over_inputs
// refuses it, in one lookup, however many inputs there are (a manifest's recordings). An input
// "-" is standard input, known by its identity where a shell opened it on a regular file (so
// `bpe apply -o text.en < text.en` is refused, and an output "-" never is); inputs that do not
// exist or are not regular files are left out, as same_regular_file does.
class InputFiles {
 public:
  InputFiles() = default;
  explicit InputFiles(const std::vector<NamedPath>& inputs);
  void add(const NamedPath& input);
  // Throws mixseq::Error naming both when `output` is one of the inputs.
  void refuse(const NamedPath& output) const;
  // refuse() for each of the files `names` that a command writes into `folder` (its -o).
  void refuse_in_folder(const std::string& folder, const std::vector<std::string>& names) const;

 private:
  std::map<std::pair<uint64_t, uint64_t>, NamedPath> files_;  // (device, inode) -> how it was named
};

// A folder of files that belong together (a prepared dataset: a vocabulary, binary splits and a
// manifest that names them), replaced as one. Each file is written under a staging folder inside
// it, and commit() moves them into place: first the old manifest is removed, then every other
// file is renamed over its old version, then the new manifest last. A run that fails before
// commit() (a bad line in the validation split after the training split was written) leaves the
// folder as it was, and a folder it made itself is removed again; a crash during commit() leaves
// no manifest, which readers refuse, rather than an old manifest over new files.
class StagedFolder {
 public:
  // Creates `folder` (as create_folder) and its staging folder ".staging-<pid>".
  explicit StagedFolder(const std::string& folder);
  ~StagedFolder();  // without commit(): the staging folder removed, the folder as it was
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  // Where to write the file `name` of the folder until commit(), and the folder that holds them.
  std::string path(const std::string& name) const;
  const std::string& staging_folder() const { return staging_; }
  // The file `name` as it will be after commit() (for messages and the manifest's paths).
  std::string final_path(const std::string& name) const;
  // Moves every file written under the staging folder into the folder, `manifest` last; throws
  // mixseq::Error naming a file that cannot be moved.
  void commit(const std::string& manifest);

 private:
  std::string folder_, staging_;
  bool made_folder_ = false, committed_ = false;
};

}  // namespace mixseq
