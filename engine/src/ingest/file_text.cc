#include "ingest/file_text.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace denpex::engine {
namespace {

// Smaller files are read: a mapping costs more than it saves, and a job with 131k rank files
// would otherwise hold more mappings than vm.max_map_count allows.
constexpr std::size_t kMapThreshold = 64 * 1024;
constexpr std::size_t kBinaryProbeBytes = 8 * 1024;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Status Errno(const std::filesystem::path& path, const char* what) {
  return Status::IoError(path.string() + ": cannot " + what + " (" + std::strerror(errno) + ")");
}

Fd OpenReadOnly(const std::filesystem::path& path) {
  return Fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
}

}  // namespace

Result<FileText> FileText::Open(const std::filesystem::path& path) {
  Fd fd = OpenReadOnly(path);
  if (fd.get() < 0) return Errno(path, "open");
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Errno(path, "stat");
  if (!S_ISREG(st.st_mode)) return Status::IoError(path.string() + ": not a regular file");
  FileText text;
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size >= kMapThreshold) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p != MAP_FAILED) {
      ::madvise(p, size, MADV_SEQUENTIAL);
      text.map_ = p;
      text.data_ = static_cast<const char*>(p);
      text.size_ = size;
      return text;
    }
  }
  text.buffer_.resize(size);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd.get(), text.buffer_.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(path, "read");
    if (n == 0) break;  // the file shrank while we read it
    got += static_cast<std::size_t>(n);
  }
  text.buffer_.resize(got);
  text.data_ = text.buffer_.data();
  text.size_ = got;
  return text;
}

void FileText::Release(std::uint64_t offset, std::uint64_t length) const {
  if (!map_ || offset >= size_) return;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t begin = (offset + page - 1) / page * page;  // whole pages inside the range only
  const std::size_t end = std::min<std::uint64_t>(offset + length, size_) / page * page;
  if (end > begin) ::madvise(static_cast<char*>(map_) + begin, end - begin, MADV_DONTNEED);
}

FileText::FileText(FileText&& other) noexcept { *this = std::move(other); }

FileText& FileText::operator=(FileText&& other) noexcept {
  if (this == &other) return *this;
  Release();
  map_ = std::exchange(other.map_, nullptr);
  buffer_ = std::move(other.buffer_);
  size_ = std::exchange(other.size_, 0);
  data_ = map_ ? static_cast<const char*>(map_) : buffer_.data();
  other.data_ = nullptr;
  return *this;
}

FileText::~FileText() { Release(); }

void FileText::Release() {
  if (map_) ::munmap(map_, size_);
  map_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  buffer_.clear();
}

bool FileText::LooksBinary() const {
  if (size_ == 0) return false;
  return std::memchr(data_, '\0', std::min(size_, kBinaryProbeBytes)) != nullptr;
}

Result<std::string> ReadSpan(const std::filesystem::path& path, std::uint64_t offset,
                             std::uint32_t length) {
  Fd fd = OpenReadOnly(path);
  if (fd.get() < 0) return Errno(path, "open");
  std::string out(length, '\0');
  std::size_t got = 0;
  while (got < length) {
    const ssize_t n = ::pread(fd.get(), out.data() + got, length - got,
                              static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(path, "read");
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace denpex::engine
