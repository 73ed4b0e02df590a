// The zip container torch.save writes (stored records, 64-byte aligned, ZIP64 end records,
// no comment), read from its end: end-of-central-directory record, ZIP64 locator and
// record, then a walk of the central directory and each record's local header. Never reads
// record data (deep.h does, for --deep).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/byte_file.h"
#include "checkpoint/reader_finding.h"

namespace denpex::engine::ckpt {

struct ZipEntry {
  std::string name;
  std::uint64_t local_offset = 0;  // absolute position in the file
  std::uint64_t data_offset = 0;   // absolute position of the record's bytes
  std::uint64_t size = 0;          // uncompressed
  std::uint64_t compressed_size = 0;
  std::uint32_t crc = 0;
  std::uint16_t method = 0;  // 0 = stored
  bool padded = false;       // the local header carries torch's "FB" alignment field
};

struct ZipArchive {
  std::uint64_t start = 0;  // absolute byte range of the archive
  std::uint64_t end = 0;
  bool zip64 = false;
  std::vector<ZipEntry> entries;  // in central-directory order
};

struct ZipRead {
  Finding finding;
  ZipArchive archive;  // meaningful when finding.ok()
};

// The archive that ends exactly at `end`. With `start`, it must begin there (0 for a file,
// the slice offset for a DCP item); without it the start comes from the end records
// (back-to-back archives in a .distcp file) and may not lie below `floor`.
ZipRead ReadZip(const ByteFile& f, std::uint64_t end, std::optional<std::uint64_t> start,
                std::uint64_t floor = 0);


}  // namespace denpex::engine::ckpt
