#include "mixseq/util/zip_integrity.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <utility>
#include <vector>

#include "mixseq/util/mapped_file.h"
#include "test_support.h"

namespace mixseq {
namespace {

void put(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

uint32_t crc_of(const std::string& data) {
  return static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
}

struct ZipEntry {
  std::string name;
  std::string data;  // as stored: deflated when method is 8
  uint32_t crc;      // what the directory claims
  uint64_t size = 0; // inflated
  uint16_t method = 0;
};

ZipEntry entry(std::string name, std::string data) {
  const uint32_t crc = crc_of(data);
  const uint64_t size = data.size();
  return {std::move(name), std::move(data), crc, size};
}

// Raw deflate, as zip (and LibTorch, for TorchScript code) stores it.
ZipEntry deflated_entry(std::string name, const std::string& data) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&stream, data.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return {std::move(name), out, crc_of(data), data.size(), 8};
}

// A zip archive of stored entries, as LibTorch writes it. With `zip64`, sizes and offsets are
// saturated in the records and given in zip64 extra fields and a zip64 end record instead.
std::string make_zip(const std::vector<ZipEntry>& entries, bool zip64 = false) {
  std::string out, directory;
  for (const auto& e : entries) {
    const uint64_t local = out.size();
    put(out, 0x04034b50, 4);
    put(out, 45, 2), put(out, 0, 2), put(out, e.method, 2), put(out, 0, 4);  // version, flags, method, time+date
    put(out, e.crc, 4), put(out, e.data.size(), 4), put(out, e.size, 4);
    put(out, e.name.size(), 2), put(out, 0, 2);
    out += e.name + e.data;

    const std::string extra = [&] {
      std::string field;
      if (!zip64) return field;
      put(field, 0x0001, 2), put(field, 24, 2);
      put(field, e.size, 8), put(field, e.data.size(), 8), put(field, local, 8);
      return field;
    }();
    const uint64_t saturated = 0xFFFFFFFF;
    put(directory, 0x02014b50, 4);
    put(directory, 45, 2), put(directory, 45, 2), put(directory, 0, 2), put(directory, e.method, 2);
    put(directory, 0, 4);
    put(directory, e.crc, 4);
    put(directory, zip64 ? saturated : e.data.size(), 4), put(directory, zip64 ? saturated : e.size, 4);
    put(directory, e.name.size(), 2), put(directory, extra.size(), 2), put(directory, 0, 2);
    put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 4);  // disk, attributes
    put(directory, zip64 ? saturated : local, 4);
    directory += e.name + extra;
  }
  const uint64_t directory_offset = out.size();
  out += directory;
  if (zip64) {
    const uint64_t zip64_end = out.size();
    put(out, 0x06064b50, 4), put(out, 44, 8), put(out, 45, 2), put(out, 45, 2), put(out, 0, 4), put(out, 0, 4);
    put(out, entries.size(), 8), put(out, entries.size(), 8), put(out, directory.size(), 8);
    put(out, directory_offset, 8);
    put(out, 0x07064b50, 4), put(out, 0, 4), put(out, zip64_end, 8), put(out, 1, 4);
  }
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2);
  put(out, zip64 ? 0xFFFF : entries.size(), 2), put(out, zip64 ? 0xFFFF : entries.size(), 2);
  put(out, zip64 ? 0xFFFFFFFF : directory.size(), 4), put(out, zip64 ? 0xFFFFFFFF : directory_offset, 4);
  put(out, 0, 2);
  return out;
}

std::optional<std::string> damage_of(const std::string& bytes) {
  test::TempDir dir;
  test::write_file(dir.path("archive.zip"), bytes);
  return find_zip_damage(MappedFile(dir.path("archive.zip")));
}

TEST(ZipIntegrity, IntactArchivesPass) {
  const std::vector<ZipEntry> entries{entry("archive/data.pkl", "pickle bytes"), entry("archive/data/0", "tensor"),
                                      entry("archive/version", "3\n"), entry("archive/empty", "")};
  EXPECT_EQ(damage_of(make_zip(entries)), std::nullopt);
  EXPECT_EQ(damage_of(make_zip(entries, /*zip64=*/true)), std::nullopt);
  EXPECT_EQ(damage_of(make_zip({})), std::nullopt);
  // The standard check value of CRC-32 (ISO-HDLC): the reader computes the CRC zip stores.
  EXPECT_EQ(damage_of(make_zip({{"check", "123456789", 0xCBF43926, 9}})), std::nullopt);
}

TEST(ZipIntegrity, AFlippedBitInAnyEntryNamesIt) {
  for (const bool zip64 : {false, true}) {
    std::string bytes = make_zip({entry("archive/data.pkl", "pickle bytes"), entry("archive/data/0", "tensor")}, zip64);
    const auto at = bytes.find("tensor");
    ASSERT_NE(at, std::string::npos);
    bytes[at + 2] ^= 0x04;
    EXPECT_EQ(damage_of(bytes), "entry 'archive/data/0' does not match its CRC-32") << "zip64 " << zip64;
  }
  EXPECT_EQ(damage_of(make_zip({{"a", "bytes", crc_of("bytes") ^ 1, 5}})), "entry 'a' does not match its CRC-32");
}

TEST(ZipIntegrity, TruncatedOrForeignFilesAreDamage) {
  const std::string zip = make_zip({entry("archive/data.pkl", std::string(200, 'p')), entry("archive/data/0", "x")});
  for (const size_t size : {size_t{0}, size_t{10}, zip.size() / 2, zip.size() - 1})
    EXPECT_NE(damage_of(zip.substr(0, size)), std::nullopt) << "first " << size << " bytes";
  EXPECT_EQ(damage_of("not a zip archive at all, just some text"), "it has no zip end-of-central-directory record");

  // A directory offset past the end, an entry count too large for the file.
  std::string moved = zip;
  moved[moved.size() - 6] = static_cast<char>(0x7F);
  EXPECT_NE(damage_of(moved), std::nullopt);
  std::string counted = zip;
  counted[counted.size() - 12] = static_cast<char>(0xFF), counted[counted.size() - 11] = static_cast<char>(0x7F);
  EXPECT_EQ(damage_of(counted), "its zip entry count is damaged");
}

// LibTorch deflates its TorchScript code: those entries are inflated and checked too.
TEST(ZipIntegrity, DeflatedEntriesAreInflatedAndChecked) {
  std::string code;
  for (int i = 0; i < 300; ++i) code += "def forward(self, x" + std::to_string(i) + "):\n  return x\n";
  const ZipEntry deflated = deflated_entry("archive/code/__torch__.py", code);
  ASSERT_LT(deflated.data.size(), code.size() / 4);
  for (const bool zip64 : {false, true})
    EXPECT_EQ(damage_of(make_zip({entry("archive/data.pkl", "p"), deflated}, zip64)), std::nullopt) << zip64;

  ZipEntry flipped = deflated;
  flipped.data[flipped.data.size() / 2] ^= 0x20;
  const auto damage = damage_of(make_zip({flipped}));
  ASSERT_NE(damage, std::nullopt);
  EXPECT_NE(damage->find("entry 'archive/code/__torch__.py' does not"), std::string::npos) << *damage;

  ZipEntry longer = deflated;  // claims more bytes than it inflates to
  longer.size += 1;
  EXPECT_EQ(damage_of(make_zip({longer})), "entry 'archive/code/__torch__.py' does not inflate to its stated size");
  ZipEntry shorter = deflated;  // inflates to more bytes than it claims (the 4 GB claim the other way round)
  shorter.size -= 100;
  EXPECT_EQ(damage_of(make_zip({shorter})), "entry 'archive/code/__torch__.py' does not inflate to its stated size");
}

// Found by fuzz_checkpoint: a directory entry renamed to another entry's name. LibTorch took the
// first of the two for a tensor, whose bytes were shorter than the tensor, and read past them.
// Names are not covered by the CRCs: each must be unique and agree with its local header.
TEST(ZipIntegrity, DuplicateOrMismatchedNamesAreDamage) {
  std::string bytes = make_zip({entry("archive/data/0", "short"), entry("archive/data/5", "much longer bytes")});
  const auto directory = bytes.find("PK\x01\x02");
  ASSERT_NE(directory, std::string::npos);
  const auto name = bytes.find("archive/data/0", directory);
  ASSERT_NE(name, std::string::npos);
  bytes[name + 13] = '5';  // the first directory entry now says archive/data/5
  EXPECT_EQ(damage_of(bytes), "entry 'archive/data/5' has a local header that names another entry");

  std::string twice = make_zip({entry("a", "x"), entry("a", "y")});
  EXPECT_EQ(damage_of(twice), "its zip directory names 'a' twice");
}

TEST(ZipIntegrity, OtherCompressionMethodsAreReported) {
  ZipEntry bzip2 = entry("a", "bytes");
  bzip2.method = 12;
  EXPECT_EQ(damage_of(make_zip({bzip2})), "entry 'a' is compressed with method 12, which LibTorch does not write");
}

}  // namespace
}  // namespace mixseq
