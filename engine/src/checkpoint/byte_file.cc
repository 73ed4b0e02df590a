#include "checkpoint/byte_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <zlib.h>

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
  if (Status st = ReadInto(offset, length, out.data()); !st.ok()) return st;
  return out;
}

Status ByteFile::ReadInto(std::uint64_t offset, std::uint64_t length, char* out) const {
  if (offset > size_ || length > size_ - offset) {
    return Status::InvalidInput("read of " + std::to_string(length) + " bytes at offset " +
                                std::to_string(offset) + " passes the end (" +
                                std::to_string(size_) + " bytes)");
  }
  if (fd_ < 0) {
    std::memcpy(out, bytes_.data() + offset, length);
    return Status::Ok();
  }
  std::uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd_, out + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(std::string("read failed: ") + std::strerror(errno));
    if (n == 0) return Status::IoError("file shrank while being read");
    done += static_cast<std::uint64_t>(n);
  }
  return Status::Ok();
}

std::uint32_t Crc32(std::string_view data, std::uint32_t crc) {
  return static_cast<std::uint32_t>(
      crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), data.size()));
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
