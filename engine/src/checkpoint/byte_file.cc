#include "checkpoint/byte_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

namespace denpex::engine::ckpt {

Result<ByteFile> ByteFile::Open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::IoError(path.string() + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidInput(path.string() + ": not a regular file");
  }
  ByteFile f;
  f.fd_ = fd;
  f.size_ = static_cast<std::uint64_t>(st.st_size);
  return f;
}

ByteFile ByteFile::FromBytes(std::string bytes) {
  ByteFile f;
  f.size_ = bytes.size();
  f.bytes_ = std::move(bytes);
  return f;
}

ByteFile::ByteFile(ByteFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), bytes_(std::move(other.bytes_)) {}

ByteFile& ByteFile::operator=(ByteFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    bytes_ = std::move(other.bytes_);
  }
  return *this;
}

ByteFile::~ByteFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string> ByteFile::Read(std::uint64_t offset, std::uint64_t length) const {
  if (offset > size_ || length > size_ - offset) {
    return Status::InvalidInput("read of " + std::to_string(length) + " bytes at offset " +
                                std::to_string(offset) + " passes the end (" +
                                std::to_string(size_) + " bytes)");
  }
  if (fd_ < 0) return bytes_.substr(offset, length);
  std::string out(length, '\0');
  std::uint64_t done = 0;
  while (done < length) {
    const ssize_t n =
        ::pread(fd_, out.data() + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(std::string("read failed: ") + std::strerror(errno));
    if (n == 0) return Status::IoError("file shrank while being read");
    done += static_cast<std::uint64_t>(n);
  }
  return out;
}

namespace {
constexpr std::array<std::uint32_t, 256> MakeCrcTable() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kCrcTable = MakeCrcTable();
}  // namespace

std::uint32_t Crc32(std::string_view data, std::uint32_t crc) {
  crc = ~crc;
  for (const char ch : data)
    crc = kCrcTable[(crc ^ static_cast<unsigned char>(ch)) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

std::string Thousands(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace denpex::engine::ckpt
