// Integrity of a zip archive (a LibTorch checkpoint is one). LibTorch's reader does not verify
// the CRC-32 its writer stores with every entry, and a damaged entry can crash it (fuzzing found
// three such files); find_zip_damage reads the central directory and checks every entry's bytes
// first. Zip64 archives (entries or files over 4 GiB) are read too.
#pragma once

#include <optional>
#include <string>

namespace mixseq {

class MappedFile;

// What is wrong with the archive ("entry 'archive/data/3' does not match its CRC-32"), or nothing.
// Entries may be stored or deflated, the two methods LibTorch writes; any other is reported as damage.
std::optional<std::string> find_zip_damage(const MappedFile& file);

}  // namespace mixseq
