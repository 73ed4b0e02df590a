#include "denpex/common/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace denpex {

std::string FileKindName(mode_t m) {
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISDIR(m)) return "a directory";
  return "not a regular file";
}

Result<std::string> ReadInputFile(const std::filesystem::path& path, std::uint64_t max_bytes,
                                  std::string_view what) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(name + ": no such file");
    return Status::IoError(name + ": cannot open for reading: " + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::IoError(name + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidInput(name + " is " + FileKindName(st.st_mode) + "; " +
                                std::string(what) + " is read from a regular file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    return Status::InvalidInput(name + ": " + std::to_string(size) + " bytes, more than the " +
                                std::to_string(max_bytes) + " that " + std::string(what) +
                                " may have; is this the right file?");
  }
  // One byte more than the size: the read that ends the file then finds room, and the string is
  // not regrown to probe for the end (which doubled its capacity: 5x a small file's bytes).
  std::string text;
  text.resize(size + 1);
  std::size_t have = 0;
  while (true) {  // to the end, or one byte past the limit when the file grew meanwhile
    if (have == text.size()) {
      if (text.size() > max_bytes) break;
      text.resize(std::min<std::uint64_t>(max_bytes + 1, text.size() + 65536));
    }
    const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(name + ": read error: " + std::strerror(errno));
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  if (have > max_bytes) {
    return Status::InvalidInput(name + ": grew past the " + std::to_string(max_bytes) +
                                " bytes that " + std::string(what) + " may have while it was read");
  }
  text.resize(have);
  return text;
}

}  // namespace denpex
