#include "mixseq/util/zip_integrity.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "mixseq/util/error.h"
#include "mixseq/util/mapped_file.h"

namespace mixseq {
namespace {

// Record signatures and fixed sizes (PKWARE APPNOTE 6.3, sections 4.3.7 to 4.3.16).
constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr uint32_t kZip64EndOfCentralDirectory = 0x06064b50, kZip64Locator = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30, kCentralHeaderSize = 46, kEndSize = 22, kZip64LocatorSize = 20;
constexpr size_t kZip64EndSize = 56, kLongestComment = 0xFFFF;
constexpr uint16_t kZip64ExtraField = 0x0001, kStored = 0, kDeflated = 8;
constexpr uint32_t kSaturated32 = 0xFFFFFFFF;
constexpr uint16_t kSaturated16 = 0xFFFF;

// Bounds-checked little-endian reads from the mapped bytes; a read past the end is damage.
class ByteView {
 public:
  ByteView(const std::byte* data, size_t size) : data_(reinterpret_cast<const unsigned char*>(data)), size_(size) {}

  bool has(uint64_t offset, uint64_t length) const { return offset <= size_ && length <= size_ - offset; }
  uint64_t read(uint64_t offset, int bytes) const {
    if (!has(offset, bytes)) throw Error("a record reaches past the end of the file");
    uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | data_[offset + i];
    return value;
  }
  uint16_t u16(uint64_t offset) const { return static_cast<uint16_t>(read(offset, 2)); }
  uint32_t u32(uint64_t offset) const { return static_cast<uint32_t>(read(offset, 4)); }
  uint64_t u64(uint64_t offset) const { return read(offset, 8); }
  const unsigned char* at(uint64_t offset) const { return data_ + offset; }
  size_t size() const { return size_; }

 private:
  const unsigned char* data_;
  size_t size_;
};

struct CentralDirectory {
  uint64_t offset = 0;
  uint64_t entries = 0;
};

// The end record is the last one in the file, followed only by a comment of up to 64 KiB.
uint64_t find_end_record(const ByteView& bytes) {
  if (bytes.size() < kEndSize) throw Error("it is too short to be a zip archive");
  const uint64_t earliest = bytes.size() - kEndSize - std::min<uint64_t>(kLongestComment, bytes.size() - kEndSize);
  for (uint64_t offset = bytes.size() - kEndSize + 1; offset-- > earliest;) {
    if (bytes.u32(offset) == kEndOfCentralDirectory && offset + kEndSize + bytes.u16(offset + 20) == bytes.size())
      return offset;
  }
  throw Error("it has no zip end-of-central-directory record");
}

CentralDirectory read_central_directory(const ByteView& bytes) {
  const uint64_t end = find_end_record(bytes);
  CentralDirectory directory{bytes.u32(end + 16), bytes.u16(end + 10)};
  const bool saturated = directory.offset == kSaturated32 || directory.entries == kSaturated16;
  if (saturated || (end >= kZip64LocatorSize && bytes.u32(end - kZip64LocatorSize) == kZip64Locator)) {
    if (end < kZip64LocatorSize || bytes.u32(end - kZip64LocatorSize) != kZip64Locator)
      throw Error("its zip64 end-of-central-directory locator is missing");
    const uint64_t zip64_end = bytes.u64(end - kZip64LocatorSize + 8);
    if (!bytes.has(zip64_end, kZip64EndSize) || bytes.u32(zip64_end) != kZip64EndOfCentralDirectory)
      throw Error("its zip64 end-of-central-directory record is missing");
    directory.entries = bytes.u64(zip64_end + 32);
    directory.offset = bytes.u64(zip64_end + 48);
  }
  return directory;
}

struct Entry {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_header = 0;
};

// Reads the central-directory entry at `offset` and returns the offset of the next one. Sizes and
// the local header's offset that do not fit 32 bits are saturated and given in the zip64 extra field.
uint64_t read_entry(const ByteView& bytes, uint64_t offset, Entry& entry) {
  if (bytes.u32(offset) != kCentralHeader) throw Error("its zip central directory is damaged");
  entry.method = bytes.u16(offset + 10);
  entry.crc = bytes.u32(offset + 16);
  entry.compressed_size = bytes.u32(offset + 20);
  entry.size = bytes.u32(offset + 24);
  const uint16_t name_length = bytes.u16(offset + 28), extra_length = bytes.u16(offset + 30);
  const uint16_t comment_length = bytes.u16(offset + 32);
  entry.local_header = bytes.u32(offset + 42);
  const uint64_t name = offset + kCentralHeaderSize, extra = name + name_length;
  if (!bytes.has(name, uint64_t{name_length} + extra_length + comment_length))
    throw Error("its zip central directory is damaged");
  entry.name.assign(reinterpret_cast<const char*>(bytes.at(name)), name_length);

  for (uint64_t field = extra; field + 4 <= extra + extra_length;) {
    const uint16_t id = bytes.u16(field), length = bytes.u16(field + 2);
    if (field + 4 + length > extra + extra_length) throw Error("its zip central directory is damaged");
    if (id == kZip64ExtraField) {
      uint64_t value = field + 4;
      const auto take = [&](uint64_t& target) {
        if (value + 8 > field + 4 + length) throw Error("entry '" + entry.name + "' has a damaged zip64 field");
        target = bytes.u64(value);
        value += 8;
      };
      if (entry.size == kSaturated32) take(entry.size);
      if (entry.compressed_size == kSaturated32) take(entry.compressed_size);
      if (entry.local_header == kSaturated32) take(entry.local_header);
    }
    field += 4 + length;
  }
  return extra + extra_length + comment_length;
}

// zlib's counts are 32-bit (uInt): larger inputs go in pieces.
constexpr uint64_t kLargestPiece = uint64_t{1} << 30;

uint32_t crc32_of(const unsigned char* data, uint64_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (uint64_t done = 0; done < size; done += kLargestPiece)
    crc = crc32(crc, data + done, static_cast<uInt>(std::min(kLargestPiece, size - done)));
  return static_cast<uint32_t>(crc);
}

// Inflates a deflated entry (LibTorch compresses its TorchScript code) piece by piece, without
// keeping the output, and returns the CRC-32 of what came out; a stream that does not inflate to
// exactly `size` bytes is damage.
uint32_t inflated_crc32_of(const unsigned char* data, uint64_t compressed_size, uint64_t size,
                           const std::string& name) {
  const auto damaged = [&] { return Error("entry '" + name + "' does not inflate to its stated size"); };
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) throw Error("zlib could not start inflating entry '" + name + "'");
  std::vector<unsigned char> piece(1 << 16);
  uLong crc = crc32(0L, Z_NULL, 0);
  uint64_t consumed = 0, produced = 0;
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    if (stream.avail_in == 0 && consumed < compressed_size) {
      stream.next_in = const_cast<unsigned char*>(data + consumed);
      stream.avail_in = static_cast<uInt>(std::min(kLargestPiece, compressed_size - consumed));
      consumed += stream.avail_in;
    }
    stream.next_out = piece.data();
    stream.avail_out = static_cast<uInt>(piece.size());
    status = inflate(&stream, Z_NO_FLUSH);
    const uint64_t out = piece.size() - stream.avail_out;
    produced += out;
    if ((status != Z_OK && status != Z_STREAM_END) || produced > size) {  // Z_BUF_ERROR: input ran out
      inflateEnd(&stream);
      throw damaged();
    }
    crc = crc32(crc, piece.data(), static_cast<uInt>(out));
  }
  inflateEnd(&stream);
  if (produced != size) throw damaged();
  return static_cast<uint32_t>(crc);
}

void check_entry(const ByteView& bytes, const Entry& entry) {
  const auto damaged = [&](const std::string& what) { return Error("entry '" + entry.name + "' " + what); };
  if (entry.method != kStored && entry.method != kDeflated)
    throw damaged("is compressed with method " + std::to_string(entry.method) + ", which LibTorch does not write");
  if (entry.method == kStored && entry.compressed_size != entry.size) throw damaged("has two different sizes");
  if (!bytes.has(entry.local_header, kLocalHeaderSize) || bytes.u32(entry.local_header) != kLocalHeader)
    throw damaged("has no local header where the directory says");
  // LibTorch finds an entry by its directory name and reads the bytes its local header leads to:
  // both must name the same entry, or a tensor is read from another one's shorter bytes.
  const uint16_t name_length = bytes.u16(entry.local_header + 26);
  const uint64_t local_name = entry.local_header + kLocalHeaderSize;
  if (!bytes.has(local_name, name_length) ||
      std::string(reinterpret_cast<const char*>(bytes.at(local_name)), name_length) != entry.name)
    throw damaged("has a local header that names another entry");
  const uint64_t data = local_name + name_length + bytes.u16(entry.local_header + 28);
  if (!bytes.has(data, entry.compressed_size)) throw damaged("reaches past the end of the file");
  const uint32_t crc = entry.method == kStored
                           ? crc32_of(bytes.at(data), entry.size)
                           : inflated_crc32_of(bytes.at(data), entry.compressed_size, entry.size, entry.name);
  if (crc != entry.crc) throw damaged("does not match its CRC-32");
}

}  // namespace

std::optional<std::string> find_zip_damage(const MappedFile& file) {
  const ByteView bytes(file.data(), file.size());
  try {
    const CentralDirectory directory = read_central_directory(bytes);
    // Each entry takes at least a fixed-size header: a damaged count cannot make us loop for long.
    if (directory.entries > bytes.size() / kCentralHeaderSize) throw Error("its zip entry count is damaged");
    uint64_t offset = directory.offset;
    Entry entry;
    std::set<std::string> names;
    for (uint64_t i = 0; i < directory.entries; ++i) {
      offset = read_entry(bytes, offset, entry);
      if (!names.insert(entry.name).second) throw Error("its zip directory names '" + entry.name + "' twice");
      check_entry(bytes, entry);
    }
  } catch (const Error& damage) {
    return std::string(damage.what());
  }
  return std::nullopt;
}

}  // namespace mixseq
